// CallerSelector: Caller1 skips the allocator and the C++ runtime's plumbing; Caller2 is the next
// function outside system libraries.
#include <gtest/gtest.h>

#include "report/CallerSelector.h"

namespace heapgraph::report {
namespace {

ReportFrame Frame(const std::string& function, const std::string& module_path) {
  ReportFrame f;
  f.address = 0x1000;
  f.function = function;
  f.module_path = module_path;
  f.module = module_path.substr(module_path.rfind('/') + 1);
  return f;
}

TEST(CallerSelectorTest, SkipsAllocationPlumbing) {
  std::vector<ReportFrame> frames = {
      Frame("", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
      Frame("std::__new_allocator<int>::allocate", "/app/bin/server"),
      Frame("std::vector<int>::_M_realloc_insert", "/app/bin/server"),
      Frame("Cache::Insert", "/app/bin/server"),
      Frame("qsort", "/lib/x86_64-linux-gnu/libc.so.6"),
      Frame("Session::Handle", "/app/bin/server"),
  };
  CallerSelector selector;
  CallerSelector::Callers c = selector.Select(frames);
  EXPECT_EQ(c.caller1, 3);
  EXPECT_EQ(c.caller2, 5);
}

TEST(CallerSelectorTest, FallsBackToTheNextFunctionAndHandlesAllPlumbing) {
  CallerSelector selector;
  std::vector<ReportFrame> frames = {Frame("Pool::Grow", "/app/bin/server"),
                                     Frame("start_thread", "/lib/x86_64-linux-gnu/libc.so.6")};
  CallerSelector::Callers c = selector.Select(frames);
  EXPECT_EQ(c.caller1, 0);
  EXPECT_EQ(c.caller2, 1);
  std::vector<ReportFrame> plumbing = {Frame("malloc", "/app/lib/libjemalloc.so"),
                                       Frame("operator new(unsigned long)", "/app/x")};
  EXPECT_EQ(selector.Select(plumbing).caller1, -1);
  EXPECT_FALSE(CallerSelector::IsAllocationPlumbing(Frame("malloc_stats_print_user", "/app/x")));
}

}  // namespace
}  // namespace heapgraph::report
