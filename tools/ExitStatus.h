// tools/: how the `heapgraph` command fails: its exit statuses and its one-line diagnostics on
// stderr ("heapgraph: <why>").
#pragma once

#include <functional>
#include <string>

namespace heapgraph::tools {

// Usage errors, unreadable recordings, a run without a recording.
inline constexpr int kExitError = 2;
// The program could not be started (as a shell reports it).
inline constexpr int kExitCannotRun = 127;
// `heapgraph run`: the leak check could not run (sampled recording, libheapgraph_scan.so not
// loadable, the scan failed, or the program never loaded the recorder). The default of
// --error-exitcode and of HEAPGRAPH_OPTIONS error_exitcode; distinct from the leak status (23).
inline constexpr int kExitCheckFailed = 24;

// Prints "heapgraph: <message>" and a newline on stderr.
void PrintError(const std::string& message);

// A report command's end: prints what `report` returns on stdout and returns 0, or, when it throws
// a RecordingError (the recording cannot be read), prints its one line and returns kExitError.
int PrintReport(const std::function<std::string()>& report);

}  // namespace heapgraph::tools
