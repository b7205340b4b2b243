// tests/heap: WarningLine: the "heapgraph: " prefix, details, user text made harmless, and the one
// terminated line however long the text.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "heap/platform/WarningLine.h"

namespace heapgraph {
namespace {

// What `write` writes to the descriptor it is given (a pipe's write end).
template <typename WriteFn>
std::string Written(WriteFn write) {
  int ends[2];
  EXPECT_EQ(0, pipe2(ends, O_CLOEXEC));
  write(ends[1]);
  close(ends[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(ends[0], buffer, sizeof(buffer))) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
  }
  close(ends[0]);
  return text;
}

// What WarningLine::Print writes on stderr (fd 2 redirected to a pipe meanwhile).
std::string Printed(const char* what, const char* detail, const char* consequence) {
  return Written([&](int fd) {
    int saved = dup(2);
    dup2(fd, 2);
    WarningLine::Print(what, detail, consequence);
    dup2(saved, 2);
    close(saved);
  });
}

TEST(WarningLineTest, StartsWithThePrefix) {
  WarningLine line;
  EXPECT_EQ("heapgraph: ", std::string(line.data(), line.size()));
}

TEST(WarningLineTest, WriteEndsTheLine) {
  std::string text = Written([](int fd) { WarningLine().Append("x").Append("yz", 1).Write(fd); });
  EXPECT_EQ("heapgraph: xy\n", text);
}

TEST(WarningLineTest, DetailOnlyWhenPresent) {
  WarningLine line;
  line.Append("a").AppendDetail(nullptr).AppendDetail("").AppendDetail("b");
  EXPECT_EQ("heapgraph: a: b", std::string(line.data(), line.size()));
}

TEST(WarningLineTest, PrintPutsWhatDetailAndConsequenceOnStderr) {
  EXPECT_EQ("heapgraph: cannot start: No such file; not watching\n",
            Printed("cannot start", "No such file", "; not watching"));
  EXPECT_EQ("heapgraph: leak check failed\n", Printed("leak check failed", nullptr, nullptr));
  EXPECT_EQ("heapgraph: leak check failed\n", Printed("leak check failed", "", nullptr));
}

TEST(WarningLineTest, UntrustedTextHasNoControlCharacters) {
  WarningLine line;
  const std::string text = "a\nb\tc\x7f-\xc3\xa9";  // UTF-8 passes through
  line.AppendUntrusted(text.data(), text.size());
  EXPECT_EQ("heapgraph: a?b?c?-\xc3\xa9", std::string(line.data(), line.size()));
}

TEST(WarningLineTest, UntrustedTextIsCutAfterItsLimit) {
  std::string fits(WarningLine::kMaxUntrusted, 'f');
  WarningLine whole;
  whole.AppendUntrusted(fits.data(), fits.size());
  EXPECT_EQ("heapgraph: " + fits, std::string(whole.data(), whole.size()));
  std::string longer = fits + "g";
  WarningLine cut;
  cut.AppendUntrusted(longer.data(), longer.size());
  EXPECT_EQ("heapgraph: " + fits + "...", std::string(cut.data(), cut.size()));
}

TEST(WarningLineTest, AFullLineStillEndsWithOneNewline) {
  std::string huge(3 * LineBuffer::kCapacity, 'h');
  std::string text = Written([&](int fd) { WarningLine().Append(huge.c_str()).Write(fd); });
  ASSERT_EQ(LineBuffer::kCapacity, text.size());
  EXPECT_EQ(0u, text.rfind("heapgraph: hhh", 0));
  EXPECT_EQ(text.size() - 1, text.find('\n'));
}

}  // namespace
}  // namespace heapgraph
