#include "tools/RecordCommand.h"

#include <fmt/format.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "tools/ExitStatus.h"

namespace heapgraph::tools {
RecordCommand::RecordCommand(CLI::App& app)
    : Subcommand(app.add_subcommand("record", "Run PROGRAM under the recorder, then dump")) {
  child_.AddTo(command_, "Root directory for recordings");
  command_->footer(kSignalCheckHelp);
  dump_.AddTo(command_);
}

int RecordCommand::Run() {
  ChildRun child(child_);
  int code = child.Run(child_.options);
  std::optional<std::string> dir = child.Recording();
  if (!dir) {
    if (child.temporary_root()) rmdir(child.root().c_str());  // still empty
    if (child.pid() < 0) return code;
    PrintError(
        fmt::format("{}: no recording directory for pid {} (was the preload library loaded?)",
                    child.root(), child.pid()));
    return kExitError;
  }
  return PrintDump(*dir, dump_) == 0 ? code : kExitError;
}

}  // namespace heapgraph::tools
