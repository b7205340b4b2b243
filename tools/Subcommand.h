// tools/: the shape of every `heapgraph` subcommand. Its constructor adds the subcommand and its
// options to the CLI11 app, bound to its own members (so a subcommand is never copied or moved);
// after a parse that chose it (parsed()), Run() runs it and returns the exit status. Errors that
// Run() does not report itself are std::exceptions, which main() prints as one line (exit 2).
#pragma once

#include <CLI/CLI.hpp>

namespace heapgraph::tools {

class Subcommand {
 public:
  Subcommand(const Subcommand&) = delete;
  Subcommand& operator=(const Subcommand&) = delete;
  virtual ~Subcommand() = default;

  // Whether the command line named this subcommand.
  bool parsed() const { return command_->parsed(); }
  virtual int Run() = 0;

 protected:
  // `command`: this subcommand, as app.add_subcommand() returned it.
  explicit Subcommand(CLI::App* command) : command_(command) {}

  CLI::App* const command_;
};

}  // namespace heapgraph::tools
