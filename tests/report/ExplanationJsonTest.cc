// tests/report: the JSON form of explanations and back (report/ExplanationJson.h).
#include <gtest/gtest.h>

#include "report/ExplanationJson.h"
#include "tests/report/ExplanationSamples.h"

namespace heapgraph::report {
namespace {

std::vector<Explanation> Sample() {
  ExplainRoot stack;
  stack.kind = "stack";
  stack.thread = 12;
  stack.address = 0x7038;
  stack.stack_offset = 0x38;
  stack.function = "Worker";
  stack.region_begin = 0x6000;
  stack.region_end = 0x8000;
  Explanation reachable = samples::Reachable("Worker", true, stack);
  reachable.matched = 2;
  return {reachable, samples::Leaked("0x3000", false, 1, "direct")};
}

TEST(ExplanationJsonTest, WritesTheDocumentedFields) {
  nlohmann::ordered_json j = ExplanationsToJson(Sample());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["target"], "Worker");
  EXPECT_EQ(j[0]["kind"], "function");
  EXPECT_EQ(j[0]["matched"], 2);
  const auto& root = j[0]["blocks"][0]["root"];
  EXPECT_EQ(root["kind"], "stack");
  EXPECT_EQ(root["thread"], 12);
  EXPECT_EQ(root["address"], "0x7038");
  EXPECT_EQ(root["stack_offset"], "0x38");
  EXPECT_EQ(root["function"], "Worker");
  EXPECT_TRUE(root["register"].is_null());
  EXPECT_TRUE(root["symbol"].is_null());
  EXPECT_EQ(root["region"], nlohmann::ordered_json::array({"0x6000", "0x8000"}));
  EXPECT_EQ(root["description"], "stack of thread 12 in the frame of Worker at sp+0x38 (0x7038)");
  EXPECT_EQ(j[0]["blocks"][0]["chain"][0]["next_offset"], "0x10");
  EXPECT_TRUE(j[0]["blocks"][0]["chain"][1]["next_offset"].is_null());
  EXPECT_EQ(j[1]["kind"], "address");
  EXPECT_EQ(j[1]["blocks"][0]["status"], "leaked");
  EXPECT_EQ(j[1]["blocks"][0]["leak_kind"], "direct");
  EXPECT_TRUE(j[1]["blocks"][0]["root"].is_null());
}

TEST(ExplanationJsonTest, ReadsBackWhatItWrote) {
  nlohmann::ordered_json j = ExplanationsToJson(Sample());
  std::vector<Explanation> back = ExplanationsFromJson(j);
  EXPECT_EQ(ExplanationsToJson(back), j);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].blocks[0].root->stack_offset, 0x38u);
  EXPECT_EQ(back[0].blocks[0].chain[0].offset, 0x10u);
}

TEST(ExplanationJsonTest, ADocumentOfAnotherShapeThrows) {
  EXPECT_THROW(ExplanationsFromJson(nlohmann::ordered_json::parse(R"([{"target": "x"}])")),
               nlohmann::ordered_json::exception);
}

}  // namespace
}  // namespace heapgraph::report
