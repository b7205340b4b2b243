#include <gtest/gtest.h>

#include <stdexcept>

#include "report/LeakDiff.h"
#include "report/LeakDiffText.h"
#include "report/LeakSignature.h"

namespace heapgraph::report {
namespace {

using json = nlohmann::ordered_json;

// A leak record whose stack is `functions` in module "app"; `signature` written or not.
json Record(const std::vector<std::string>& functions, uint64_t count, uint64_t size,
            bool with_signature = true, const char* suppressed = nullptr) {
  json stack = json::array();
  std::vector<SignatureFrame> frames;
  for (const std::string& f : functions) {
    stack.push_back({{"function", f}, {"module", "app"}, {"file", "/src/app.cc"}, {"line", 7}});
    frames.push_back({f, "app"});
  }
  json r = {{"kind", "direct"}, {"size", size}, {"count", count}, {"stack", stack}};
  if (with_signature) r["signature"] = LeakSignature("direct", frames);
  if (suppressed != nullptr) r["suppressed"] = suppressed;
  return r;
}

json Report(std::vector<json> records) {
  return {{"format", "heapgraph-leaks"}, {"leaks", records}};
}

TEST(LeakDiffTest, NewGoneGrewAndUnchangedBySignature) {
  LeakSignatures before, after;
  before.Add(Report({Record({"Old", "main"}, 1, 10), Record({"Same", "main"}, 2, 20),
                     Record({"Grows", "main"}, 1, 30)}),
             "before");
  after.Add(Report({Record({"Same", "main"}, 2, 20), Record({"Grows", "main"}, 3, 90),
                    Record({"New", "main"}, 1, 40)}),
            "after");
  LeakDiff diff = LeakDiff::Compare(before, after);
  ASSERT_EQ(diff.added.size(), 1u);
  EXPECT_EQ(diff.added[0].where, (std::vector<std::string>{"New (app.cc:7)", "main (app.cc:7)"}));
  EXPECT_EQ(diff.added[0].bytes, 40u);
  ASSERT_EQ(diff.removed.size(), 1u);
  EXPECT_EQ(diff.removed[0].where[0], "Old (app.cc:7)");
  ASSERT_EQ(diff.grew.size(), 1u);
  EXPECT_EQ(diff.grew[0].before.count, 1u);
  EXPECT_EQ(diff.grew[0].after.count, 3u);
  EXPECT_EQ(diff.unchanged, 1u);
  std::string text = FormatLeakDiff(diff);
  EXPECT_EQ(text.rfind("leak diff: 1 new leak signature, 1 gone, 1 grew, 1 unchanged\n", 0), 0u)
      << text;
  EXPECT_NE(text.find("new   " + diff.added[0].signature + " direct   1 blocks, 40 bytes: New"),
            std::string::npos)
      << text;
}

TEST(LeakDiffTest, ARecordWithoutASignatureGetsTheSameOneFromItsFrames) {
  LeakSignatures before, after;
  before.Add(Report({Record({"Leak", "main"}, 1, 10, /*with_signature=*/false)}), "old");
  after.Add(Report({Record({"Leak", "main"}, 1, 10)}), "new");
  LeakDiff diff = LeakDiff::Compare(before, after);
  EXPECT_TRUE(diff.added.empty());
  EXPECT_EQ(diff.unchanged, 1u);
}

TEST(LeakDiffTest, RecordsOfOneSignatureAddUpAndSuppressedOnesDoNotCount) {
  LeakSignatures after;
  after.Add(Report({Record({"Leak"}, 1, 10), Record({"Leak"}, 2, 20),
                    Record({"Quiet"}, 5, 50, true, "leak:Quiet")}),
            "one");
  after.Add(Report({Record({"Leak"}, 1, 10)}), "two");  // another process of the run
  ASSERT_EQ(after.totals().size(), 1u);
  EXPECT_EQ(after.totals().begin()->second.count, 4u);
  EXPECT_EQ(after.totals().begin()->second.bytes, 40u);
}

TEST(LeakDiffTest, MalformedReportsAreOneLineErrorsNamingTheFile) {
  LeakSignatures s;
  EXPECT_THROW(s.Add(json{{"format", "heapgraph-leaks"}}, "a.json"), std::runtime_error);
  try {
    s.Add(Report({json{{"kind", "direct"}, {"count", "many"}, {"stack", json::array()}}}),
          "b.json");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("b.json: a malformed leak record", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace heapgraph::report
