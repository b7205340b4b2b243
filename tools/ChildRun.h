// tools/: runs a program under the recorder for `record` and `run`: with
// LD_PRELOAD=<libheapgraph.so> and HEAPGRAPH_OPTIONS=dir=<root>[,<options>] in its environment
// (this process's environment otherwise, with any LD_PRELOAD or HEAPGRAPH_OPTIONS of its own
// dropped), then waits for it. The program gets SIGINT and SIGQUIT at their defaults while this
// process ignores them until it exits, so ^C stops only the program and what follows it (the dump)
// still happens.
#pragma once

#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace heapgraph::tools {

// The debug-menu check of a program under the recorder, for --help (docs/leak-scan.md).
inline constexpr const char* kSignalCheckHelp =
    "A leak check while the program runs: `kill -RTMIN+5 PID` (option scan_signal). Its reports go "
    "to the recording directory (leaks-N.txt, leaks-N.json); one line on the program's stderr "
    "names them.";

// The flags both subcommands take: --preload, --dir, --options and -- PROGRAM ARGS...
struct ChildRunFlags {
  std::string
      preload;       // empty: ../heap/libheapgraph.so beside this binary, else $HEAPGRAPH_PRELOAD
  std::string root;  // empty: a fresh temporary directory under $TMPDIR (or /tmp)
  std::string options;  // more HEAPGRAPH_OPTIONS
  std::vector<std::string> command;

  // Adds the four to `command`, bound to this; `dir_help` describes --dir.
  void AddTo(CLI::App* command, const std::string& dir_help);
};

// `path` made absolute and normal, for a HEAPGRAPH_OPTIONS entry. Throws std::runtime_error
// "<flag> <path>: must not contain ',' or ':'" when it holds an entry separator.
std::string OptionsPath(const std::string& path, const char* flag);

class ChildRun {
 public:
  // Finds the preload library and makes the root (both absolute). Throws std::runtime_error with a
  // one-line message when either fails.
  explicit ChildRun(const ChildRunFlags& flags);

  const std::string& root() const { return root_; }
  // The root is a temporary directory this run made (no --dir): its owner removes it.
  bool temporary_root() const { return temporary_root_; }

  // Runs the program with `options` after dir=<root> and waits for it. Returns its exit status as
  // a shell reports it (128 + signal when killed), or kExitCannotRun, with one error line printed,
  // when it could not start.
  int Run(const std::string& options);
  // After Run(): the program's pid, or -errno when it could not start.
  pid_t pid() const { return pid_; }
  // After Run(): the program's recording directory in the root, "<pid>-<start ticks>" (should an
  // old run with a reused pid have left one too, the latest start wins); nullopt when the program
  // did not start or never loaded the recorder. Throws std::runtime_error when the root cannot be
  // listed.
  std::optional<std::string> Recording() const;

 private:
  std::vector<std::string> command_;
  std::string preload_;
  std::string root_;
  bool temporary_root_ = false;
  pid_t pid_ = -1;
};

}  // namespace heapgraph::tools
