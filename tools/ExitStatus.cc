#include "tools/ExitStatus.h"

#include <fmt/format.h>

namespace heapgraph::tools {

void PrintError(const std::string& message) {
  fmt::print(stderr, "heapgraph: {}\n", message);
}

}  // namespace heapgraph::tools
