// tests/scanner/types: ObjcIvarRules — the delegate-is-weak convention, the built-in exceptions
// and user rule files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "scanner/types/ObjcIvarRules.h"

namespace heapgraph::scanner::types {
namespace {

TEST(ObjcIvarRulesTest, ObjectIvarsAreStrongDelegatesAndTargetsWeak) {
  ObjcIvarRules rules;
  EXPECT_EQ(rules.Classify("HGOwner", "_model").strength, FieldStrength::kStrong);
  EXPECT_EQ(rules.Classify("HGOwner", "_model").label, EdgeLabel::kNone);
  for (const char* weak : {"_delegate", "delegate", "_scrollDelegate", "_dataSource", "dataSource",
                           "_target", "actionTarget"}) {
    EXPECT_EQ(rules.Classify("NSControl", weak).strength, FieldStrength::kWeak) << weak;
  }
}

TEST(ObjcIvarRulesTest, BuiltInExceptionsAreStrongWithTheirLabels) {
  ObjcIvarRules rules;
  struct Case {
    const char* cls;
    const char* ivar;
    EdgeLabel label;
  } cases[] = {{"NSTimer", "_target", EdgeLabel::kTimerTarget},
               {"NSTimer", "_info", EdgeLabel::kTimerTarget},
               {"CADisplayLink", "target", EdgeLabel::kTimerTarget},
               {"CAAnimation", "delegate", EdgeLabel::kDelegate},
               {"NSURLSession", "_delegate", EdgeLabel::kDelegate}};
  for (const Case& c : cases) {
    FieldDescription f = rules.Classify(c.cls, c.ivar);
    EXPECT_EQ(f.strength, FieldStrength::kStrong) << c.cls << " " << c.ivar;
    EXPECT_EQ(f.label, c.label) << c.cls << " " << c.ivar;
    EXPECT_EQ(f.name, c.ivar);
  }
  // An exception names the declaring class exactly.
  EXPECT_EQ(rules.Classify("NSTimerLike", "_target").strength, FieldStrength::kWeak);
}

TEST(ObjcIvarRulesTest, UserFileAddsAndOverrides) {
  char path[] = "/tmp/hg_objc_rules_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(path);
    out << "# strong delegates of this app\n"
        << "HGAnimation _delegate strong\n"
        << "\n"
        << "HGRunner _target strong timer-target   # retained until -stop\n"
        << "NSTimer _info weak\n"
        << "HGCache _store weak none\n";
  }
  ObjcIvarRules rules;
  std::string error;
  ASSERT_TRUE(rules.LoadFile(path, &error)) << error;
  EXPECT_EQ(rules.Classify("HGAnimation", "_delegate").strength, FieldStrength::kStrong);
  EXPECT_EQ(rules.Classify("HGAnimation", "_delegate").label, EdgeLabel::kDelegate);
  EXPECT_EQ(rules.Classify("HGRunner", "_target").label, EdgeLabel::kTimerTarget);
  EXPECT_EQ(rules.Classify("NSTimer", "_info").strength, FieldStrength::kWeak);
  EXPECT_EQ(rules.Classify("NSTimer", "_target").strength, FieldStrength::kStrong);
  EXPECT_EQ(rules.Classify("HGCache", "_store").strength, FieldStrength::kWeak);
  std::remove(path);
}

TEST(ObjcIvarRulesTest, BadFilesGiveOneLineWithTheLineNumber) {
  ObjcIvarRules rules;
  std::string error;
  EXPECT_FALSE(rules.LoadFile("/nonexistent/rules", &error));
  EXPECT_NE(error.find("/nonexistent/rules"), std::string::npos);
  char path[] = "/tmp/hg_objc_rules_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(path);
    out << "A _x strong\nB _y sometimes\n";
  }
  EXPECT_FALSE(rules.LoadFile(path, &error));
  EXPECT_NE(error.find(":2:"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  EXPECT_EQ(rules.Classify("A", "_x").strength, FieldStrength::kStrong);  // kept
  EXPECT_FALSE(rules.AddLine("A _x strong delegate extra"));
  EXPECT_FALSE(rules.AddLine("A _x"));
  EXPECT_FALSE(rules.AddLine("A _x weak sideways"));
  EXPECT_TRUE(rules.AddLine("   # only a comment"));
  std::remove(path);
}

}  // namespace
}  // namespace heapgraph::scanner::types
