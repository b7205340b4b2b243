// tests/report: the explain targets as given, the root phrases (report/Explanation.h).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "report/Explanation.h"

namespace heapgraph::report {
namespace {

TEST(ExplanationTest, ParsesAddressesAndFunctionNames) {
  std::vector<ExplainTarget> t = ParseExplainTargets("0x7f00a010//MakeCache/0XAB/0x/12");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_TRUE(t[0].is_address);
  EXPECT_EQ(t[0].address, 0x7f00a010u);
  EXPECT_FALSE(t[1].is_address);
  EXPECT_EQ(t[1].text, "MakeCache");
  EXPECT_TRUE(t[2].is_address);
  EXPECT_EQ(t[2].address, 0xabu);
  EXPECT_FALSE(t[3].is_address);  // "0x" alone is a name
  EXPECT_FALSE(t[4].is_address);  // decimal is a name
  EXPECT_TRUE(ParseExplainTargets("").empty());
}

TEST(ExplanationTest, RefusesMoreFunctionsThanTheScanTakes) {
  std::string list;
  for (uint32_t i = 0; i <= scanner::ExplainRequest::kMaxFunctions; ++i) {
    list += "F" + std::to_string(i) + "/";
  }
  EXPECT_THROW(ParseExplainTargets(list), std::invalid_argument);
  list.resize(list.rfind('F'));
  EXPECT_NO_THROW(ParseExplainTargets(list + "0x10"));
}

ExplainRoot Root(const char* kind, int thread, uint64_t address) {
  ExplainRoot r;
  r.kind = kind;
  r.thread = thread;
  r.address = address;
  return r;
}

TEST(ExplanationTest, DescribesEachRootKind) {
  ExplainRoot stack = Root("stack", 12, 0x7000);
  stack.stack_offset = 0x40;
  stack.function = "Worker";
  EXPECT_EQ(DescribeRoot(stack), "stack of thread 12 in the frame of Worker at sp+0x40 (0x7000)");
  stack.function.clear();
  EXPECT_EQ(DescribeRoot(stack), "stack of thread 12 at sp+0x40 (0x7000)");
  ExplainRoot reg = Root("registers", 7, 0);
  reg.register_name = "rbx";
  EXPECT_EQ(DescribeRoot(reg), "register rbx of thread 7");
  ExplainRoot global = Root("global", 0, 0x5010);
  global.module = "/usr/bin/app";
  global.symbol = "g_cache";
  global.symbol_offset = 8;
  EXPECT_EQ(DescribeRoot(global), "global g_cache+0x8 of app (0x5010)");
  global.symbol.clear();
  EXPECT_EQ(DescribeRoot(global), "global 0x5010 of app");
  EXPECT_EQ(DescribeRoot(Root("tls", 9, 0x9008)), "TLS of thread 9 (0x9008)");
  ExplainRoot mapping = Root("mapping", 0, 0xa010);
  mapping.region_begin = 0xa000;
  mapping.region_end = 0xb000;
  EXPECT_EQ(DescribeRoot(mapping), "anonymous mapping [0xa000-0xb000] (0xa010)");
  EXPECT_EQ(DescribeRoot(Root("other", 0, 0xc000)), "other root memory (0xc000)");
}

}  // namespace
}  // namespace heapgraph::report
