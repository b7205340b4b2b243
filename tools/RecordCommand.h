// tools/: `heapgraph record [--preload PATH] [--dir ROOT] [--options STR] [dump flags] -- PROGRAM
// ARGS...`: runs the program under the recorder (ChildRun), then dumps its recording directory as
// `heapgraph dump` does. Exit status: the program's (128 + signal when killed; 127 when it could
// not start), or 2 when its recording is missing or cannot be dumped. A temporary root (no --dir)
// is removed again when the program left no recording in it.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/ChildRun.h"
#include "tools/DumpCommand.h"
#include "tools/Subcommand.h"

namespace heapgraph::tools {

class RecordCommand : public Subcommand {
 public:
  explicit RecordCommand(CLI::App& app);
  int Run() override;

 private:
  ChildRunFlags child_;
  DumpFlags dump_;
};

}  // namespace heapgraph::tools
