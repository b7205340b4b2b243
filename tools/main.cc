// tools/: the `heapgraph` command: builds the CLI11 app from its subcommands (one file each, the
// shape of tools/Subcommand.h), parses the command line and runs the one it names.
//   heapgraph dump DIR [--top N] [--json] [--no-symbols]
//   heapgraph record [--preload PATH] [--dir ROOT] [--options STR] -- PROGRAM ARGS...
//   heapgraph run [--json FILE] [--text FILE] [--html FILE] [--exitcode N] [--error-exitcode E]
//                 [--explain ADDRESS|FUNCTION]... [...] -- PROGRAM ARGS...
//   heapgraph explain REPORT.json [ADDRESS]
//   heapgraph report REPORT.json [--text] [--html FILE] [--sarif FILE] [--categories]
//   heapgraph foom (DIR | --root ROOT) [--json | --record] [--top-categories N] [--top-stacks M]
//                  [--rules FILE] [--no-symbols] [--html FILE]
//   heapgraph lag DIR [--json] [--frames N] [--no-symbols]
// Exit status: the subcommand's (see each header); usage errors, and errors a subcommand does not
// report itself (one line "heapgraph: <why>" on stderr), exit 2.
#include <CLI/CLI.hpp>
#include <exception>
#include <initializer_list>

#include "tools/ChildRun.h"
#include "tools/DiffCommand.h"
#include "tools/DumpCommand.h"
#include "tools/ExitStatus.h"
#include "tools/ExplainCommand.h"
#include "tools/FoomCommand.h"
#include "tools/LagCommand.h"
#include "tools/RecordCommand.h"
#include "tools/ReportCommand.h"
#include "tools/RunCommand.h"
#include "tools/SuppressionsCommand.h"

namespace heapgraph::tools {
namespace {

int Main(int argc, char** argv) {
  CLI::App app{"heapgraph: leak detector and allocation recorder"};
  app.require_subcommand(1);
  app.footer(kSignalCheckHelp);
  DumpCommand dump(app);
  RecordCommand record(app);
  RunCommand run(app);
  FoomCommand foom(app);
  LagCommand lag(app);
  ExplainCommand explain(app);
  SuppressionsCommand suppressions(app);
  DiffCommand diff(app);
  ReportCommand report(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitError;
  }
  for (Subcommand* command : std::initializer_list<Subcommand*>{
           &dump, &record, &run, &foom, &lag, &explain, &suppressions, &diff, &report}) {
    if (command->parsed()) return command->Run();
  }
  return kExitError;  // unreachable: require_subcommand(1)
}

}  // namespace
}  // namespace heapgraph::tools

int main(int argc, char** argv) {
  try {
    return heapgraph::tools::Main(argc, argv);
  } catch (const std::exception& e) {
    heapgraph::tools::PrintError(e.what());
    return heapgraph::tools::kExitError;
  }
}
