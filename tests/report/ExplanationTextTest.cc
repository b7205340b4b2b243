// tests/report: the text form of explanations (report/ExplanationText.h).
#include <gtest/gtest.h>

#include "report/ExplanationText.h"

namespace heapgraph::report {
namespace {

Explanation Chain() {
  Explanation e{"0x2010", false, 1, {}};
  ExplainedBlock b;
  b.address = 0x2010;
  b.status = "reachable";
  b.root = ExplainRoot();
  b.root->kind = "global";
  b.root->address = 0x5010;
  b.root->module = "/usr/bin/app";
  b.root->symbol = "g_cache";
  b.chain.push_back({0x1000, 96, 0x10, "Cache", {"MakeCache app.cc:10", "main app.cc:20"}});
  b.chain.push_back({0x2010, 112, 0, "Malloc 112 B", {}});
  e.blocks.push_back(b);
  return e;
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
  Explanation e{"MakeLeak", true, 3, {}};
  ExplainedBlock b;
  b.address = 0x3000;
  b.status = "leaked";
  b.leak_kind = "indirect";
  b.chain.push_back({0x3000, 16, 0, "Malloc 16 B", {}});
  e.blocks.push_back(b);
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
