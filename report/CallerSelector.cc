#include "report/CallerSelector.h"

#include <array>
#include <string_view>

namespace heapgraph::report {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

constexpr std::array<std::string_view, 18> kAllocatorFunctions = {
    "malloc",        "calloc", "realloc",     "reallocarray", "memalign", "posix_memalign",
    "aligned_alloc", "valloc", "pvalloc",     "strdup",       "strndup",  "operator new",
    "__libc_",       "std::",  "__gnu_cxx::", "__cxa_",       "_Znwm",    "_Znam"};

constexpr std::array<std::string_view, 4> kAllocatorModules = {"libheapgraph", "libc.so",
                                                               "libstdc++.so", "libc++.so"};

}  // namespace

bool CallerSelector::IsAllocationPlumbing(const ReportFrame& frame) {
  for (std::string_view m : kAllocatorModules) {
    if (StartsWith(frame.module, m)) return true;
  }
  for (std::string_view f : kAllocatorFunctions) {
    if (StartsWith(frame.function, f)) {
      // "malloc" must be the whole name, not a prefix of "malloc_trim_user_buffers".
      bool whole = f.back() == ':' || f.back() == '_' || f == "operator new" ||
                   frame.function.size() == f.size() || frame.function[f.size()] == '(';
      if (whole) return true;
    }
  }
  return false;
}

bool CallerSelector::IsSystemModule(const ReportFrame& frame) {
  return StartsWith(frame.module_path, "/lib/") || StartsWith(frame.module_path, "/lib64/") ||
         StartsWith(frame.module_path, "/usr/lib/") || StartsWith(frame.module_path, "/usr/lib64/");
}

bool CallerSelector::IsThinWrapper(const ReportFrame& frame) {
  if (frame.inlined || frame.module_path.empty() || frame.offset == 0) return false;
  return detector_.IsThinWrapper(frame.module_path, frame.offset - 1);
}

CallerSelector::Callers CallerSelector::Select(const std::vector<ReportFrame>& frames) {
  Callers callers;
  size_t i = 0;
  while (i < frames.size() && (IsAllocationPlumbing(frames[i]) || IsThinWrapper(frames[i]))) ++i;
  if (i == frames.size()) return callers;
  callers.caller1 = static_cast<int>(i);
  const std::string& first = frames[i].function;
  int fallback = -1;
  for (size_t j = i + 1; j < frames.size(); ++j) {
    if (frames[j].address == frames[i].address && frames[j].function == first) continue;
    if (!first.empty() && frames[j].function == first) continue;
    if (fallback < 0) fallback = static_cast<int>(j);
    if (!IsSystemModule(frames[j])) {
      callers.caller2 = static_cast<int>(j);
      return callers;
    }
  }
  callers.caller2 = fallback;
  return callers;
}

}  // namespace heapgraph::report
