// tools/: `heapgraph foom (DIR | --root ROOT) [--json | --record] [--top-categories N]
// [--top-stacks M] [--rules FILE] [--no-symbols] [--html FILE]`: classifies how one recorded run
// ended and reports what its live heap held (report/FoomReport, docs/foom-report.md), as text, the
// JSON document or the one-line record; --html FILE also writes the self-contained HTML page. With
// --root, the run is the latest finished one in ROOT. Exit status 0, or 2 with one line "heapgraph:
// <why>" on stderr when the dump cannot be read; giving both or neither of DIR and --root is a
// usage error (2).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>

#include "tools/Subcommand.h"

namespace heapgraph::tools {

class FoomCommand : public Subcommand {
 public:
  explicit FoomCommand(CLI::App& app);
  int Run() override;

 private:
  std::string dir_;
  std::string root_;
  bool json_ = false;
  bool record_ = false;
  bool symbolize_ = true;
  size_t top_categories_ = 10;
  size_t top_stacks_ = 5;
  std::string rules_;
  std::string html_;
};

}  // namespace heapgraph::tools
