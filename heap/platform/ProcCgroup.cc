#include "heap/platform/ProcCgroup.h"

namespace heapgraph {
namespace {

// Views are cut with the (pointer, length) constructor, never substr(pos, ...): substr checks
// pos and names std::out_of_range, and that one reference links libstdc++'s exception runtime,
// whose 72 KiB emergency pool is a malloc at load, into libheapgraph.so.
std::string_view Between(std::string_view s, size_t begin, size_t end) {
  return {s.data() + begin, end - begin};
}

// Whether the comma-separated `controllers` include `name`.
bool Lists(std::string_view controllers, std::string_view name) {
  size_t begin = 0;
  while (begin <= controllers.size()) {
    size_t comma = controllers.find(',', begin);
    if (comma == std::string_view::npos) comma = controllers.size();
    if (Between(controllers, begin, comma) == name) return true;
    begin = comma + 1;
  }
  return false;
}

}  // namespace

ProcCgroup ProcCgroup::Parse(std::string_view text) {
  ProcCgroup result;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Between(text, begin, end);
    begin = end + 1;
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view hierarchy = Between(line, 0, first);
    const std::string_view controllers = Between(line, first + 1, second);
    const std::string_view path = Between(line, second + 1, line.size());
    if (hierarchy == "0" && controllers.empty() && !result.has_unified) {
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
