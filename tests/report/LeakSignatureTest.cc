#include <gtest/gtest.h>

#include "report/LeakSignature.h"

namespace heapgraph::report {
namespace {

ReportFrame Frame(const char* function, const char* module, uint64_t address, int line) {
  ReportFrame f;
  f.function = function;
  f.module = module;
  f.module_path = std::string("/build/") + module;
  f.address = address;
  f.offset = address & 0xfff;
  f.build_id = "abcd";
  f.file = line == 0 ? "" : "app.cc";
  f.line = line;
  return f;
}

TEST(LeakSignatureTest, IsSixteenHexDigitsAndStable) {
  std::string s = LeakSignature("direct", {{"MakeCache", "app"}, {"main", "app"}});
  EXPECT_EQ(s.size(), 16u);
  EXPECT_EQ(s.find_first_not_of("0123456789abcdef"), std::string::npos);
  // The documented value: a change of the hash is a change of every baseline.
  EXPECT_EQ(s, LeakSignature("direct", {{"MakeCache", "app"}, {"main", "app"}}));
  EXPECT_EQ(LeakSignature("direct", std::vector<SignatureFrame>{}), "9440fafefefda534");
  EXPECT_EQ(s, "ab44400f33bf5239");
}

TEST(LeakSignatureTest, IgnoresAddressesOffsetsBuildIdsAndLines) {
  FrameList a{Frame("MakeCache", "app", 0x55d0001234, 12), Frame("main", "app", 0x55d0, 3)};
  FrameList b{Frame("MakeCache", "app", 0x7f0009999, 14), Frame("main", "app", 0x1, 0)};
  EXPECT_EQ(LeakSignature("direct", a), LeakSignature("direct", b));
  EXPECT_EQ(LeakSignature("direct", a),
            LeakSignature("direct", {{"MakeCache", "app"}, {"main", "app"}}));
}

TEST(LeakSignatureTest, DependsOnKindFunctionsModulesAndOrder) {
  std::vector<SignatureFrame> base = {{"MakeCache", "app"}, {"main", "app"}};
  std::string s = LeakSignature("direct", base);
  EXPECT_NE(s, LeakSignature("indirect", base));
  EXPECT_NE(s, LeakSignature("direct", {{"MakeCache", "libapp.so"}, {"main", "app"}}));
  EXPECT_NE(s, LeakSignature("direct", {{"MakeOther", "app"}, {"main", "app"}}));
  EXPECT_NE(s, LeakSignature("direct", {{"main", "app"}, {"MakeCache", "app"}}));
  EXPECT_NE(s, LeakSignature("direct", {{"MakeCache", "app"}}));
  // Piece boundaries count: ("ab", "c") is not ("a", "bc").
  EXPECT_NE(LeakSignature("direct", {{"ab", "c"}}), LeakSignature("direct", {{"a", "bc"}}));
}

TEST(LeakSignatureTest, AnUnsymbolizedFrameIsAQuestionMarkInItsModule) {
  EXPECT_EQ(LeakSignature("direct", {{"", "libx.so"}}),
            LeakSignature("direct", {{"?", "libx.so"}}));
  EXPECT_NE(LeakSignature("direct", {{"", "libx.so"}}), LeakSignature("direct", {{"", "liby.so"}}));
}

}  // namespace
}  // namespace heapgraph::report
