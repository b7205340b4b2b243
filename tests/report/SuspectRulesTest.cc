// SuspectRules: the rules file format and which categories each rule marks.
#include <gtest/gtest.h>

#include <stdexcept>

#include "report/SuspectRules.h"

namespace heapgraph::report {
namespace {

TEST(SuspectRulesTest, ParsesMetricsPatternsAndThresholds) {
  SuspectRules rules = SuspectRules::Parse(
      "# comment\n\ncount Malloc* 1000  # trailing comment\nbytes VM:* 1M\nshare * 0.5\n");
  ASSERT_EQ(rules.rules().size(), 3u);
  EXPECT_EQ(rules.rules()[1].threshold, 1024.0 * 1024);
  EXPECT_EQ(rules.Evaluate("Malloc 48 B", 999, 10, 1000).size(), 0u);
  EXPECT_EQ(rules.Evaluate("Malloc 48 B", 1000, 10, 1000).size(), 1u);
  EXPECT_EQ(rules.Evaluate("VM: anonymous", 1, 1 << 20, 1 << 30).size(), 1u);
  std::vector<std::string> both = rules.Evaluate("Malloc 1000 B", 5000, 600, 1000);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_NE(both[1].find("60%"), std::string::npos) << both[1];
  EXPECT_TRUE(rules.Evaluate("Malloc 48 B", 0, 0, 0).empty());
}

TEST(SuspectRulesTest, DefaultsMarkADominantCategory) {
  SuspectRules rules = SuspectRules::Defaults();
  EXPECT_FALSE(rules.Evaluate("Malloc 1000 B", 10, 900, 1000).empty());
  EXPECT_TRUE(rules.Evaluate("Malloc 1000 B", 10, 100, 1000).empty());
}

TEST(SuspectRulesTest, MalformedLinesNameTheLine) {
  for (const char* bad : {"count *\n", "size * 3\n", "share * 2\n", "share * abc\n",
                          "bytes * 12X\n", "count * 1 extra\n", "bytes * -5\n"}) {
    try {
      SuspectRules::Parse(std::string("# ok\n") + bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("rules:2: ", 0), 0u) << e.what();
    }
  }
}

TEST(SuspectRulesTest, MissingFileIsOneLine) {
  EXPECT_THROW(SuspectRules::Load("/nonexistent/rules"), std::runtime_error);
}

}  // namespace
}  // namespace heapgraph::report
