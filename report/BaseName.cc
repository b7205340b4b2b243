#include "report/BaseName.h"

namespace heapgraph::report {

std::string BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace heapgraph::report
