#include "tools/RecordCommand.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "tools/ExitStatus.h"

namespace heapgraph::tools {
namespace {

// The recorder names the directory "<pid>-<start ticks>". Should an old run with a reused pid
// have left one in the same root, the latest start wins. nullopt when there is none.
std::optional<std::string> FindRecording(const std::string& root, pid_t pid) {
  std::string prefix = fmt::format("{}-", pid);
  std::optional<std::string> best;
  unsigned long long best_ticks = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !entry.is_directory()) continue;
    unsigned long long ticks = strtoull(name.c_str() + prefix.size(), nullptr, 10);
    if (!best || ticks >= best_ticks) {
      best = entry.path().string();
      best_ticks = ticks;
    }
  }
  if (error) throw std::runtime_error(fmt::format("{}: {}", root, error.message()));
  return best;
}

}  // namespace

RecordCommand::RecordCommand(CLI::App& app)
    : Subcommand(app.add_subcommand("record", "Run PROGRAM under the recorder, then dump")) {
  child_.AddTo(command_, "Root directory for recordings");
  dump_.AddTo(command_);
}

int RecordCommand::Run() {
  ChildRun child(child_);
  int code = child.Run(child_.options);
  std::optional<std::string> dir;
  if (child.pid() > 0) dir = FindRecording(child.root(), child.pid());
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
