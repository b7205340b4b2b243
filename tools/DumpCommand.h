// tools/: `heapgraph dump DIR [--top N] [--json] [--no-symbols]`: prints the dump report
// (report/DumpReport) of one recording directory, as text or JSON. Exit status 0, or 2 with one
// line "heapgraph: <why>" on stderr when the recording, or a stack it shows, cannot be read (the
// text printed up to that stack stays on stdout; nothing of the JSON does). The reader's warnings
// go to stderr as "heapgraph: warning: <what>" first.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>

#include "tools/Subcommand.h"

namespace heapgraph::tools {

// The flags `dump` shares with `record`, which dumps its recording the same way.
struct DumpFlags {
  size_t top = 20;  // groups shown, largest first; 0 = all
  bool json = false;
  bool symbolize = true;

  // Adds --top, --json and --no-symbols to `command`, bound to this.
  void AddTo(CLI::App* command);
};

// Prints the report of recording directory `dir`; returns the exit status.
int PrintDump(const std::string& dir, const DumpFlags& flags);

class DumpCommand : public Subcommand {
 public:
  explicit DumpCommand(CLI::App& app);
  int Run() override;

 private:
  std::string dir_;
  DumpFlags flags_;
};

}  // namespace heapgraph::tools
