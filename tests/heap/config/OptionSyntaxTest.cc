// tests/heap: the value syntaxes of the option table (heap/config/OptionSyntax.h), each alone:
// limits inclusive, only `length` bytes read, and the output untouched by a rejected value.
// ParseByteSize is tested with Config in ConfigTest.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "heap/config/OptionSyntax.h"

namespace heapgraph::option {
namespace {

// What `syntax` reads from `text` over an output holding `before`; nullopt when it rejects the
// text, which must leave the output alone.
template <typename Syntax, typename T>
std::optional<T> Parsed(const Syntax& syntax, const std::string& text, T before) {
  T value = before;
  if (syntax.Parse(text.data(), text.size(), &value)) return value;
  EXPECT_EQ(before, value) << "rejecting '" << text << "' changed the output";
  return std::nullopt;
}

TEST(OptionSyntaxTest, Flag) {
  for (const char* yes : {"1", "true", "yes"}) EXPECT_EQ(true, Parsed(Flag(), yes, false)) << yes;
  for (const char* no : {"0", "false", "no"}) EXPECT_EQ(false, Parsed(Flag(), no, true)) << no;
  for (const char* bad : {"", "2", "on", "TRUE", "yes please"}) {
    EXPECT_FALSE(Parsed(Flag(), bad, true)) << bad;
  }
  bool v = false;
  EXPECT_TRUE(Flag().Parse("1junk", 1, &v) && v) << "only `length` bytes count";
}

TEST(OptionSyntaxTest, RangeIsInclusive) {
  EXPECT_EQ(10u, Parsed(Range(10, 28), "10", 0u));
  EXPECT_EQ(28u, Parsed(Range(10, 28), "28", 0u));
  for (const char* bad : {"9", "29", "", "-1", " 12", "12x", "99999999999999999999999"}) {
    EXPECT_FALSE(Parsed(Range(10, 28), bad, 7u)) << bad;
  }
}

TEST(OptionSyntaxTest, ZeroOrRange) {
  const ZeroOrRange heartbeat(10, 600000);
  EXPECT_EQ(0u, Parsed(heartbeat, "0", 5u));
  EXPECT_EQ(10u, Parsed(heartbeat, "10", 5u));
  EXPECT_EQ(600000u, Parsed(heartbeat, "600000", 5u));
  for (const char* bad : {"9", "600001", "", "x"}) EXPECT_FALSE(Parsed(heartbeat, bad, 5u)) << bad;
}

TEST(OptionSyntaxTest, PowerOfTwo) {
  for (uint32_t ok : {1u, 2u, 64u, 1024u}) {
    EXPECT_EQ(ok, Parsed(PowerOfTwo(1, 1024), std::to_string(ok), 0u));
  }
  for (const char* bad : {"0", "3", "96", "2048", "0x40"}) {
    EXPECT_FALSE(Parsed(PowerOfTwo(1, 1024), bad, 64u)) << bad;
  }
}

// Issue 12, item 11: uncatchable signals, synchronous fault signals (a returning handler makes a
// faulting program fault forever) and glibc's internal 32/33 are refused.
TEST(OptionSyntaxTest, SignalNumberRefusesUncatchableFaultAndGlibcSignals) {
  EXPECT_EQ(0u, Parsed(SignalNumber(), "0", 39u));
  EXPECT_EQ(64u, Parsed(SignalNumber(), "64", 39u));
  for (const char* good : {"1", "2", "6", "10", "12", "15", "34", "39"}) {
    EXPECT_TRUE(Parsed(SignalNumber(), good, 39u)) << good;
  }
  for (const char* bad : {"4", "5", "7", "8", "9", "11", "19", "31", "32", "33", "65", "SIGUSR1"}) {
    EXPECT_FALSE(Parsed(SignalNumber(), bad, 39u)) << bad;
  }
}

TEST(OptionSyntaxTest, NumberTakesAll64Bits) {
  EXPECT_EQ(UINT64_MAX, Parsed(Number(), "18446744073709551615", uint64_t{0}));
  EXPECT_FALSE(Parsed(Number(), "18446744073709551616", uint64_t{3}));
  EXPECT_FALSE(Parsed(Number(), "1K", uint64_t{3}));
}

TEST(OptionSyntaxTest, ByteCountHasUnits) {
  EXPECT_EQ(uint64_t{8} << 20, Parsed(ByteCount(), "8M", uint64_t{0}));
  EXPECT_FALSE(Parsed(ByteCount(), "8MB", uint64_t{1}));
}

TEST(OptionSyntaxTest, AutoOrFlag) {
  const AutoOrFlag watch(2, 1, 0);
  EXPECT_EQ(2u, Parsed(watch, "auto", 7u));
  EXPECT_EQ(1u, Parsed(watch, "yes", 7u));
  EXPECT_EQ(0u, Parsed(watch, "0", 7u));
  EXPECT_FALSE(Parsed(watch, "sometimes", 7u));
}

TEST(OptionSyntaxTest, SampleMean) {
  EXPECT_EQ(512u * 1024, Parsed(SampleMean(), "on", uint64_t{7}));
  EXPECT_EQ(0u, Parsed(SampleMean(), "off", uint64_t{7}));
  EXPECT_EQ(2u, Parsed(SampleMean(), "2", uint64_t{7}));
  EXPECT_EQ(uint64_t{1} << 30, Parsed(SampleMean(), "1G", uint64_t{7}));
  for (const char* bad : {"", "maybe", "1025M", "-1"}) {
    EXPECT_FALSE(Parsed(SampleMean(), bad, uint64_t{7})) << bad;
  }
}

TEST(OptionSyntaxTest, PathTextFitsItsArrayNulIncluded) {
  char path[8] = "old";
  EXPECT_TRUE(PathText(1).Parse("/a/b", 4, &path));
  EXPECT_STREQ("/a/b", path);
  EXPECT_TRUE(PathText(1).Parse("1234567", 7, &path));
  EXPECT_STREQ("1234567", path);
  EXPECT_FALSE(PathText(1).Parse("12345678", 8, &path));
  EXPECT_FALSE(PathText(1).Parse("", 0, &path));
  EXPECT_STREQ("1234567", path);
  EXPECT_TRUE(PathText(0).Parse("", 0, &path));
  EXPECT_STREQ("", path);
}

TEST(OptionSyntaxTest, PathTextAliasStandsForItsPath) {
  char path[8] = "old";
  const PathText text(0, "stderr", "-");
  EXPECT_TRUE(text.Parse("stderr", 6, &path));
  EXPECT_STREQ("-", path);
  EXPECT_TRUE(text.Parse("stderrx", 6, &path));  // only `length` bytes count
  EXPECT_STREQ("-", path);
  EXPECT_TRUE(PathText(1, "stderr", "").Parse("stderr", 6, &path));
  EXPECT_STREQ("", path);
}

TEST(OptionSyntaxTest, PercentagesStrictlyAscendingWithTheirCount) {
  uint32_t count = 3;
  uint32_t values[4] = {50, 75, 90, 0};
  const Percentages percentages(1, 100, &count);
  EXPECT_TRUE(percentages.Parse("10/20/95/100", 12, &values));
  EXPECT_EQ(4u, count);
  EXPECT_EQ(100u, values[3]);
  EXPECT_TRUE(percentages.Parse("80", 2, &values));
  EXPECT_EQ(1u, count);
  EXPECT_EQ(80u, values[0]);
  for (const char* bad : {"", "75/50", "50/50", "0/50", "50/101", "1/2/3/4/5", "50//75", "50/"}) {
    EXPECT_FALSE(percentages.Parse(bad, strlen(bad), &values)) << bad;
    EXPECT_EQ(1u, count);
    EXPECT_EQ(80u, values[0]);
  }
}

}  // namespace
}  // namespace heapgraph::option
