// tests/heap: LineBuffer: decimal, hex and byte formatting, cutting at capacity without
// overflowing, and WriteTo.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "heap/platform/LineBuffer.h"

namespace heapgraph {
namespace {

std::string Text(const LineBuffer& line) {
  return std::string(line.data(), line.size());
}

TEST(LineBufferTest, StartsEmpty) {
  LineBuffer line;
  EXPECT_EQ(0u, line.size());
  EXPECT_EQ("", Text(line));
}

TEST(LineBufferTest, AppendsTextAndChainsCalls) {
  LineBuffer line;
  line.Append("abc").Append("defgh", 2).AppendChar('!').Append("");
  EXPECT_EQ("abcde!", Text(line));
}

TEST(LineBufferTest, AppendWithLengthCopiesEmbeddedNul) {
  LineBuffer line;
  line.Append("a\0b", 3);
  EXPECT_EQ(std::string("a\0b", 3), Text(line));
}

TEST(LineBufferTest, AppendDecimal) {
  LineBuffer line;
  line.AppendDecimal(0).AppendChar(' ').AppendDecimal(7).AppendChar(' ').AppendDecimal(10);
  line.AppendChar(' ').AppendDecimal(1234567890).AppendChar(' ').AppendDecimal(UINT64_MAX);
  EXPECT_EQ("0 7 10 1234567890 18446744073709551615", Text(line));
}

TEST(LineBufferTest, AppendHexIsPrefixedAndLowercase) {
  LineBuffer line;
  line.AppendHex(0).AppendChar(' ').AppendHex(0xa).AppendChar(' ').AppendHex(0xDEADBEEF);
  line.AppendChar(' ').AppendHex(0x10).AppendChar(' ').AppendHex(UINT64_MAX);
  EXPECT_EQ("0x0 0xa 0xdeadbeef 0x10 0xffffffffffffffff", Text(line));
}

TEST(LineBufferTest, AppendHexBytesHasTwoDigitsPerByteAndNoPrefix) {
  const uint8_t bytes[] = {0x00, 0x0f, 0xa5, 0xff, 0x10};
  LineBuffer line;
  line.AppendHexBytes(bytes, sizeof(bytes));
  EXPECT_EQ("000fa5ff10", Text(line));
  line.AppendHexBytes(bytes, 0);
  EXPECT_EQ("000fa5ff10", Text(line));
}

TEST(LineBufferTest, ClearEmptiesTheLine) {
  LineBuffer line;
  line.Append("abc");
  line.Clear();
  EXPECT_EQ(0u, line.size());
  line.Append("x");
  EXPECT_EQ("x", Text(line));
}

// Heap-allocated so ASan would see a write past the object; size() proves nothing leaked into it.
TEST(LineBufferTest, TextPastCapacityIsCutNotOverflowed) {
  auto line = std::make_unique<LineBuffer>();
  std::string long_text(LineBuffer::kCapacity - 3, 'a');
  line->Append(long_text.c_str()).Append("bcdefgh");
  EXPECT_EQ(LineBuffer::kCapacity, line->size());
  EXPECT_EQ(long_text + "bcd", Text(*line));

  line->Append("more").AppendChar('c').AppendDecimal(12345).AppendHex(0xabc);
  uint8_t bytes[] = {1, 2, 3};
  line->AppendHexBytes(bytes, 3);
  EXPECT_EQ(LineBuffer::kCapacity, line->size());
  EXPECT_EQ(long_text + "bcd", Text(*line));
}

TEST(LineBufferTest, NumbersAreCutAtCapacityFromTheMostSignificantDigit) {
  LineBuffer line;
  std::string fill(LineBuffer::kCapacity - 2, '.');
  line.Append(fill.c_str()).AppendDecimal(12345);
  EXPECT_EQ(fill + "12", Text(line));

  line.Clear();
  fill.assign(LineBuffer::kCapacity - 3, '.');
  line.Append(fill.c_str()).AppendHex(0xabc);
  EXPECT_EQ(fill + "0xa", Text(line));

  line.Clear();
  fill.assign(LineBuffer::kCapacity - 3, '.');
  const uint8_t bytes[] = {0x12, 0x34};
  line.Append(fill.c_str()).AppendHexBytes(bytes, 2);
  EXPECT_EQ(fill + "123", Text(line));
}

TEST(LineBufferTest, ExactlyFullLineKeepsEverything) {
  LineBuffer line;
  std::string text(LineBuffer::kCapacity, 'z');
  line.Append(text.data(), text.size());
  EXPECT_EQ(text, Text(line));
}

std::string ReadAll(int fd) {
  std::string text;
  char buffer[512];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  return text;
}

TEST(LineBufferTest, WriteToWritesTheWholeLine) {
  int fds[2];
  ASSERT_EQ(0, pipe(fds));
  LineBuffer line;
  line.Append("heapgraph: ").AppendDecimal(42).AppendChar('\n');
  line.WriteTo(fds[1]);
  close(fds[1]);
  EXPECT_EQ("heapgraph: 42\n", ReadAll(fds[0]));
  close(fds[0]);
}

TEST(LineBufferTest, WriteToWritesAFullLineAndCanBeRepeated) {
  int fds[2];
  ASSERT_EQ(0, pipe(fds));
  LineBuffer line;
  std::string text(LineBuffer::kCapacity, 'q');
  line.Append(text.c_str());
  line.WriteTo(fds[1]);
  line.WriteTo(fds[1]);
  close(fds[1]);
  EXPECT_EQ(text + text, ReadAll(fds[0]));
  close(fds[0]);
}

TEST(LineBufferTest, WriteToOfAnEmptyLineWritesNothing) {
  int fds[2];
  ASSERT_EQ(0, pipe(fds));
  LineBuffer().WriteTo(fds[1]);
  close(fds[1]);
  EXPECT_EQ("", ReadAll(fds[0]));
  close(fds[0]);
}

TEST(LineBufferTest, WriteToABadDescriptorGivesUp) {
  LineBuffer line;
  line.Append("lost\n");
  line.WriteTo(-1);  // returns instead of retrying forever
  int fds[2];
  ASSERT_EQ(0, pipe(fds));
  close(fds[0]);
  signal(SIGPIPE, SIG_IGN);
  line.WriteTo(fds[1]);  // EPIPE
  signal(SIGPIPE, SIG_DFL);
  close(fds[1]);
}

}  // namespace
}  // namespace heapgraph
