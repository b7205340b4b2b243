// tests/report: Suppressions, LeakSanitizer's suppression rules: the file syntax, TemplateMatch's
// wildcards and anchors, which frame fields a rule matches, and bad input (malformed lines, huge
// lines, binary data, a missing file or a directory) that must never throw or crash.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>

#include "report/Suppressions.h"
#include "tests/TempDir.h"

namespace heapgraph::report {
namespace {

ReportFrame Frame(std::string function, std::string file, std::string module_path) {
  ReportFrame f;
  f.function = std::move(function);
  f.file = std::move(file);
  f.line = f.file.empty() ? 0 : 1;
  f.module_path = std::move(module_path);
  return f;
}

TEST(SuppressionsTest, PatternIsASubstringWithWildcardsAndAnchors) {
  EXPECT_TRUE(Suppressions::PatternMatches("leaky", "my_leaky_function"));
  EXPECT_FALSE(Suppressions::PatternMatches("leaky", "tidy"));
  EXPECT_TRUE(Suppressions::PatternMatches("^my_", "my_leaky_function"));
  EXPECT_FALSE(Suppressions::PatternMatches("^leaky", "my_leaky_function"));
  EXPECT_TRUE(Suppressions::PatternMatches("function$", "my_leaky_function"));
  EXPECT_FALSE(Suppressions::PatternMatches("leaky$", "my_leaky_function"));
  EXPECT_TRUE(Suppressions::PatternMatches("^my_leaky_function$", "my_leaky_function"));
  EXPECT_FALSE(Suppressions::PatternMatches("^my_leaky$", "my_leaky_function"));
  EXPECT_TRUE(Suppressions::PatternMatches("my*function", "my_leaky_function"));
  EXPECT_TRUE(Suppressions::PatternMatches("^my*ky*ion$", "my_leaky_function"));
  EXPECT_FALSE(Suppressions::PatternMatches("^my*xyz", "my_leaky_function"));
  EXPECT_TRUE(Suppressions::PatternMatches("*", "anything"));
  EXPECT_TRUE(Suppressions::PatternMatches("^*$", "anything"));
  EXPECT_TRUE(Suppressions::PatternMatches("a*a$", "aXa"));
  EXPECT_FALSE(Suppressions::PatternMatches("^aa*a$", "aa"));  // the segments may not overlap
  EXPECT_TRUE(Suppressions::PatternMatches("libfoo.so", "/usr/lib/libfoo.so.1"));
  EXPECT_FALSE(Suppressions::PatternMatches("x", ""));  // an unknown field never matches
}

TEST(SuppressionsTest, ParsesLeakRulesCommentsAndBlankLines) {
  Suppressions rules;
  rules.Parse("# a comment\n\n  leak:first  \r\nleak:^second$\n\t# indented comment\nleak: third\n",
              "test.supp");
  EXPECT_EQ(rules.patterns(), (std::vector<std::string>{"first", "^second$", "third"}));
  EXPECT_TRUE(rules.problems().empty());
}

TEST(SuppressionsTest, MatchesFunctionFileOrModuleOfAnyFrame) {
  Suppressions rules;
  rules.Parse("leak:in_function\nleak:source_file.cc\nleak:libmodule.so\n", "t");
  FrameList by_function = {Frame("malloc", "", "/lib/libc.so.6"),
                           Frame("ns::in_function()", "/src/a.cc", "/bin/p")};
  FrameList by_file = {Frame("f()", "/src/source_file.cc", "/bin/p")};
  FrameList by_module = {Frame("", "", "/opt/lib/libmodule.so")};
  FrameList none = {Frame("g()", "/src/b.cc", "/bin/p")};
  ASSERT_NE(rules.Match(by_function), nullptr);
  EXPECT_EQ(*rules.Match(by_function), "in_function");
  ASSERT_NE(rules.Match(by_file), nullptr);
  EXPECT_EQ(*rules.Match(by_file), "source_file.cc");
  ASSERT_NE(rules.Match(by_module), nullptr);
  EXPECT_EQ(*rules.Match(by_module), "libmodule.so");
  EXPECT_EQ(rules.Match(none), nullptr);
  EXPECT_EQ(rules.Match(FrameList{}), nullptr);
}

TEST(SuppressionsTest, InnermostMatchingFrameChoosesTheRule) {
  Suppressions rules;
  rules.Parse("leak:outer\nleak:inner\n", "t");
  FrameList stack = {Frame("inner()", "", ""), Frame("outer()", "", "")};
  ASSERT_NE(rules.Match(stack), nullptr);
  EXPECT_EQ(*rules.Match(stack), "inner");
}

TEST(SuppressionsTest, MalformedLinesAreSkippedWithOneProblemEach) {
  Suppressions rules;
  rules.Parse("no colon here\nrace:foo\nleak:\nleak:^$\nleak:good\ncalled_from_lib:libx.so\n",
              "bad.supp");
  EXPECT_EQ(rules.patterns(), std::vector<std::string>{"good"});
  ASSERT_EQ(rules.problems().size(), 5u);
  EXPECT_EQ(rules.problems()[0],
            "suppressions bad.supp:1: 'no colon here' is not <type>:<pattern>; line ignored");
  EXPECT_EQ(rules.problems()[1],
            "suppressions bad.supp:2: suppression type 'race' is not supported (only 'leak'); "
            "line ignored");
  EXPECT_EQ(rules.problems()[2], "suppressions bad.supp:3: empty pattern; line ignored");
}

TEST(SuppressionsTest, HugeLinesAndBinaryDataAreRefusedBriefly) {
  Suppressions rules;
  std::string huge = "leak:" + std::string(1 << 20, 'x') + "\n";
  std::string binary("leak:a\0b\n\xff\xfe:\x01\n", 14);
  rules.Parse(huge + binary + "leak:ok\n", "x.supp");
  EXPECT_EQ(rules.patterns(), std::vector<std::string>{"ok"});
  ASSERT_EQ(rules.problems().size(), 3u);
  for (const std::string& p : rules.problems()) {
    EXPECT_LT(p.size(), 200u) << p;
    for (char c : p) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << p;
  }
  EXPECT_NE(rules.problems()[0].find("longer than 4096 bytes"), std::string::npos);
  EXPECT_NE(rules.problems()[1].find("NUL byte"), std::string::npos);
}

TEST(SuppressionsTest, ProblemsAreCappedAndCounted) {
  Suppressions rules;
  std::string text;
  for (int i = 0; i < 100; ++i) text += "garbage\n";
  rules.Parse(text, "g");
  ASSERT_EQ(rules.problems().size(), Suppressions::kMaxProblems);
  EXPECT_EQ(rules.problems().back(), "... and 81 more bad suppression lines");
}

// Fuzz-style: random bytes, random lines built from the syntax's own characters, never a crash,
// never an exception, and every rule kept is a "leak:" line's trimmed pattern.
TEST(SuppressionsTest, RandomInputNeverThrows) {
  std::mt19937 random(1234);
  const std::string alphabet =
      "leak:^$*# \t\r\n\0\xff"
      "abc";
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    size_t length = random() % 300;
    bool binary = round % 2 == 0;
    for (size_t i = 0; i < length; ++i) {
      text += binary ? static_cast<char>(random() & 0xff)
                     : alphabet[random() % (alphabet.size() + 1) % alphabet.size()];
    }
    Suppressions rules;
    ASSERT_NO_THROW(rules.Parse(text, "fuzz"));
    FrameList stack = {Frame(text.substr(0, 20), text.substr(0, 7), text)};
    ASSERT_NO_THROW(rules.Match(stack));
    for (const std::string& p : rules.patterns()) {
      EXPECT_FALSE(p.empty());
      EXPECT_EQ(p.find('\n'), std::string::npos);
    }
    for (const std::string& p : rules.problems()) EXPECT_LT(p.size(), 200u);
  }
}

TEST(SuppressionsTest, FilesThatCannotBeReadAreOneProblem) {
  TempDir dir;
  Suppressions rules;
  EXPECT_FALSE(rules.ParseFile(dir.path() + "/missing.supp"));
  EXPECT_FALSE(rules.ParseFile(dir.path()));  // a directory
  ASSERT_EQ(rules.problems().size(), 2u);
  EXPECT_NE(rules.problems()[0].find("no such file"), std::string::npos);
  EXPECT_NE(rules.problems()[1].find("not a regular file"), std::string::npos)
      << rules.problems()[1];
  std::ofstream(dir.path() + "/good.supp") << "leak:from_file\n";
  EXPECT_TRUE(rules.ParseFile(dir.path() + "/good.supp"));
  EXPECT_EQ(rules.patterns(), std::vector<std::string>{"from_file"});
}

}  // namespace
}  // namespace heapgraph::report
