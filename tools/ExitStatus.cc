#include "tools/ExitStatus.h"

#include <fmt/format.h>

#include <cstdio>

#include "reader/RecordingError.h"

namespace heapgraph::tools {

void PrintError(const std::string& message) {
  fmt::print(stderr, "heapgraph: {}\n", message);
}

int PrintReport(const std::function<std::string()>& report) {
  try {
    std::string text = report();
    fmt::print("{}", text);
    fflush(stdout);
    return 0;
  } catch (const RecordingError& e) {
    fflush(stdout);
    PrintError(e.what());
    return kExitError;
  }
}

}  // namespace heapgraph::tools
