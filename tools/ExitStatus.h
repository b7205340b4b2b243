// tools/: how the `heapgraph` command fails: its exit statuses and its one-line diagnostics on
// stderr ("heapgraph: <why>").
#pragma once

#include <string>

namespace heapgraph::tools {

// Usage errors, unreadable recordings, a run without a recording.
inline constexpr int kExitError = 2;
// The program could not be started (as a shell reports it).
inline constexpr int kExitCannotRun = 127;

// Prints "heapgraph: <message>" and a newline on stderr.
void PrintError(const std::string& message);

}  // namespace heapgraph::tools
