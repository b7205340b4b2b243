// tests/heap: LsanOptions (LSAN_OPTIONS onto Config): each supported flag lands on its heapgraph
// option, separators and quotes as compiler-rt splits them, log_path's ".<pid>", the flags
// heapgraph always or never honours, and an unsupported flag named once however often it appears.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "heap/config/LsanOptions.h"
#include "tests/StderrCapture.h"

namespace heapgraph {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(LsanOptionsTest, SupportedFlagsLandOnHeapgraphOptions) {
  Config config;
  StderrCapture capture;
  int rejected = LsanOptions::Apply(
      "exitcode=7:suppressions=/s.supp,max_leaks=5 detect_leaks=0\tleak_check_at_exit=1",
      "LSAN_OPTIONS", &config);
  EXPECT_EQ(capture.Text(), "");
  EXPECT_EQ(rejected, 0);
  EXPECT_EQ(config.leak_exitcode, 7u);
  EXPECT_STREQ(config.suppressions, "/s.supp");
  EXPECT_EQ(config.max_leaks, 5u);
  EXPECT_FALSE(config.detect_leaks);
  EXPECT_TRUE(config.leak_check_at_exit);
}

TEST(LsanOptionsTest, QuotedValuesMayHoldSeparators) {
  Config config;
  EXPECT_EQ(LsanOptions::Apply("suppressions=\"/a b.supp\" exitcode='9'", "LSAN_OPTIONS", &config),
            0);
  EXPECT_STREQ(config.suppressions, "/a b.supp");
  EXPECT_EQ(config.leak_exitcode, 9u);
}

TEST(LsanOptionsTest, LogPathGetsThePidAsLeakSanitizerNamesIt) {
  Config config;
  EXPECT_EQ(LsanOptions::Apply("log_path=/tmp/lsan", "LSAN_OPTIONS", &config), 0);
  EXPECT_EQ(std::string(config.leak_text), "/tmp/lsan." + std::to_string(getpid()));
  EXPECT_EQ(LsanOptions::Apply("log_path=stderr", "LSAN_OPTIONS", &config), 0);
  EXPECT_STREQ(config.leak_text, "-");
  StderrCapture capture;
  EXPECT_EQ(LsanOptions::Apply("log_path=stdout", "LSAN_OPTIONS", &config), 1);
  EXPECT_NE(capture.Text().find("'log_path' value 'stdout'"), std::string::npos);
  EXPECT_STREQ(config.leak_text, "-");
}

TEST(LsanOptionsTest, AlwaysAndNeverFlags) {
  Config config;
  {
    StderrCapture capture;
    EXPECT_EQ(LsanOptions::Apply("use_stacks=1,use_registers=true,use_unaligned=0,report_objects=1",
                                 "LSAN_OPTIONS", &config),
              0);
    EXPECT_EQ(capture.Text(), "");
  }
  StderrCapture capture;
  EXPECT_EQ(LsanOptions::Apply("use_globals=0,use_unaligned=1", "LSAN_OPTIONS", &config), 2);
  std::string text = capture.Text();
  EXPECT_NE(text.find("heapgraph: LSAN_OPTIONS flag 'use_globals=0' is not supported (heapgraph "
                      "always scans globals); ignored\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("'use_unaligned=1' is not supported (heapgraph reads aligned words only)"),
            std::string::npos)
      << text;
}

TEST(LsanOptionsTest, UnsupportedFlagIsNamedOnce) {
  Config config;
  StderrCapture capture;
  int rejected =
      LsanOptions::Apply("verbosity=1:fast_unwind_on_malloc=0:verbosity=2,exitcode=3 verbosity=3",
                         "__lsan_default_options", &config);
  std::string text = capture.Text();
  EXPECT_EQ(rejected, 4);
  EXPECT_EQ(Count(text, "'verbosity'"), 1u) << text;
  EXPECT_EQ(Count(text, "\n"), 2u) << text;
  EXPECT_NE(text.find("heapgraph: __lsan_default_options flag 'fast_unwind_on_malloc' is not "
                      "supported by heapgraph; ignored\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(config.leak_exitcode, 3u);
}

TEST(LsanOptionsTest, BadValuesAndGarbageAreOneLineEachAndNeverFatal) {
  Config config;
  StderrCapture capture;
  int rejected = LsanOptions::Apply("exitcode=999,=5,novalue,\x01\xff=\x02,use_tls=maybe",
                                    "LSAN_OPTIONS", &config);
  std::string text = capture.Text();
  EXPECT_EQ(rejected, 5) << text;
  EXPECT_EQ(Count(text, "\n"), 5u) << text;
  EXPECT_NE(text.find("bad value for option 'exitcode=999' in LSAN_OPTIONS"), std::string::npos)
      << text;
  EXPECT_EQ(config.leak_exitcode, 23u);
  EXPECT_EQ(LsanOptions::Apply(nullptr, "LSAN_OPTIONS", &config), 0);
  EXPECT_EQ(LsanOptions::Apply("", "LSAN_OPTIONS", &config), 0);
  std::string huge(100000, 'x');
  StderrCapture more;
  EXPECT_EQ(LsanOptions::Apply(("suppressions=" + huge).c_str(), "LSAN_OPTIONS", &config), 1);
  EXPECT_LT(more.Text().size(), 400u);
}

}  // namespace
}  // namespace heapgraph
