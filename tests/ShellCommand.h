// tests/: runs a shell command line (a child program with its environment) and collects its
// standard output. Test-only; may include anything.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace heapgraph::shell {

// Appends the command's stdout to `output`; returns its exit status, or 128 + signal number if a
// signal ended it (as a shell reports it).
inline int RunShellCommand(const std::string& command, std::string* output) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output->append(buffer, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace heapgraph::shell
