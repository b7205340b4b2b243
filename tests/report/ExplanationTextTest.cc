// tests/report: the text form of explanations (report/ExplanationText.h).
#include <gtest/gtest.h>

#include "report/ExplanationText.h"
#include "tests/report/ExplanationSamples.h"

namespace heapgraph::report {
namespace {

Explanation Chain() {
  ExplainRoot global;
  global.kind = "global";
  global.address = 0x5010;
  global.module = "/usr/bin/app";
  global.symbol = "g_cache";
  return samples::Reachable("0x2010", false, global);
}

TEST(ExplanationTextTest, ListsTheRootThenEachBlockAndTheWordPointingToTheNext) {
  EXPECT_EQ(FormatExplanations({Chain()}),
            "Why reachable: 0x2010\n"
            "  0x2010: reachable from global g_cache+0x0 of app (0x5010)\n"
            "    #0 0x1000 (96 bytes, Cache) allocated at MakeCache app.cc:10 <- main app.cc:20\n"
            "       at +0x10 points to\n"
            "    #1 0x2010 (112 bytes, Malloc 112 B)\n"
            "\n");
}

TEST(ExplanationTextTest, ALeakedBlockIsNotReachable) {
  Explanation e = samples::Leaked("MakeLeak", true, 3, "indirect");
  EXPECT_EQ(FormatExplanations({e}),
            "Why reachable: blocks allocated under MakeLeak: 3 live, the first 1 shown\n"
            "  0x3000: not reachable: reported as indirect leak\n"
            "\n");
}

TEST(ExplanationTextTest, TargetsWithoutBlocksSaySo) {
  EXPECT_EQ(FormatExplanations({{"0x10", false, 0, {}}, {"Nowhere", true, 0, {}}}),
            "Why reachable: 0x10\n  no live block contains it\n\n"
            "Why reachable: blocks allocated under Nowhere: 0 live\n  no live block\n\n");
  EXPECT_EQ(FormatExplanations({}), "");
}

}  // namespace
}  // namespace heapgraph::report
