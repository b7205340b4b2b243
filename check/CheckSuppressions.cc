#include "check/CheckSuppressions.h"

#include <cstdio>
#include <string_view>

extern "C" __attribute__((weak, visibility("default"))) const char* __lsan_default_suppressions(
    void);

namespace heapgraph::report {

Suppressions LoadCheckSuppressions(const std::string& files) {
  Suppressions rules;
  if (__lsan_default_suppressions != nullptr) {
    const char* text = __lsan_default_suppressions();
    if (text != nullptr) rules.Parse(text, "__lsan_default_suppressions");
  }
  std::string_view list = files;
  while (!list.empty()) {
    size_t end = list.find(';');
    std::string_view path = list.substr(0, end);
    list.remove_prefix(end == std::string_view::npos ? list.size() : end + 1);
    if (!path.empty()) rules.ParseFile(std::string(path));
  }
  for (const std::string& problem : rules.problems()) {
    std::fprintf(stderr, "heapgraph: %s\n", problem.c_str());
  }
  return rules;
}

}  // namespace heapgraph::report
