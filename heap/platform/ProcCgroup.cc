#include "heap/platform/ProcCgroup.h"

namespace heapgraph {
namespace {

// Whether the comma-separated `controllers` include `name`.
bool Lists(std::string_view controllers, std::string_view name) {
  while (!controllers.empty()) {
    size_t comma = controllers.find(',');
    if (controllers.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    controllers.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

ProcCgroup ProcCgroup::Parse(std::string_view text) {
  ProcCgroup result;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string_view path = line.substr(second + 1);
    if (line.substr(0, first) == "0" && controllers.empty() && !result.has_unified) {
      result.unified = path;
      result.has_unified = true;
    } else if (!result.has_memory_v1 && Lists(controllers, "memory")) {
      result.memory_v1 = path;
      result.has_memory_v1 = true;
    }
  }
  return result;
}

}  // namespace heapgraph
