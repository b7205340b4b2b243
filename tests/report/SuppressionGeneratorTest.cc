// tests/report: GenerateSuppressions, `heapgraph suppressions`' rules from a JSON leak report: one
// rule per record not yet suppressed, naming its first application frame past the allocation
// plumbing; duplicates once; a record without such a frame is a comment; and the rules written
// suppress the records they were made from (report/Suppressions).
#include <gtest/gtest.h>

#include <string>

#include "report/SuppressionGenerator.h"
#include "report/Suppressions.h"

namespace heapgraph::report {
namespace {

using json = nlohmann::ordered_json;

json Frame(const char* function, const char* module) {
  return {{"function", function == nullptr ? json(nullptr) : json(function)},
          {"module", module},
          {"module_path", std::string("/x/") + module}};
}

json Record(json stack, const char* suppressed = nullptr) {
  return {{"kind", "direct"},
          {"size", 48},
          {"stack", std::move(stack)},
          {"suppressed", suppressed == nullptr ? json(nullptr) : json(suppressed)}};
}

TEST(SuppressionGeneratorTest, OneRulePerRecordAtItsFirstApplicationFrame) {
  json report = {{"leaks",
                  {Record({Frame("malloc", "libc.so.6"),
                           Frame("operator new(unsigned long)", "libstdc++.so.6"),
                           Frame("MakeWidget(int)", "app"), Frame("main", "app")}),
                   Record({Frame("malloc", "libc.so.6"), Frame("MakeWidget(int)", "app")}),
                   Record({Frame("Known()", "app")}, "Known"),
                   Record({Frame(nullptr, "app"), Frame("std::vector<int>::push_back(int)", "app"),
                           Frame("Fill()", "app")}),
                   Record({Frame("malloc", "libc.so.6"), Frame(nullptr, "app")})}}};
  std::string text = GenerateSuppressions(report);
  EXPECT_EQ(text,
            "# heapgraph suppressions (LeakSanitizer syntax), one rule per leak record\n"
            "leak:MakeWidget(int)\n"
            "leak:Fill()\n"
            "# direct leak of 48 byte(s): no symbolized application frame\n");
  Suppressions rules;
  rules.Parse(text, "generated");
  EXPECT_TRUE(rules.problems().empty());
  EXPECT_EQ(rules.patterns(), (std::vector<std::string>{"MakeWidget(int)", "Fill()"}));
}

TEST(SuppressionGeneratorTest, ReportWithoutLeaksThrowsAJsonError) {
  EXPECT_THROW(GenerateSuppressions(json::object()), nlohmann::json::exception);
  EXPECT_EQ(GenerateSuppressions(json{{"leaks", json::array()}}),
            "# heapgraph suppressions (LeakSanitizer syntax), one rule per leak record\n");
}

}  // namespace
}  // namespace heapgraph::report
