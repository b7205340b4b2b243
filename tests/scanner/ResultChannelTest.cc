// tests/scanner: scanner::ResultChannel, the leak result from the snapshot process to the scanning
// one. A result written by a forked child round-trips through the file; a short, missing or
// garbled file is an error (its message), never a crash or a huge allocation.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <vector>

#include "scanner/ResultChannel.h"

namespace heapgraph::scanner {
namespace {

using Edge = ResultChannel::Edge;

class ResultChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = memfd_create("result-channel-test", MFD_CLOEXEC);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override { close(fd_); }

  // Runs `write` in a forked child (as the snapshot process writes) and returns its exit status.
  int WriteInChild(const std::function<bool(int)>& write) {
    pid_t pid = fork();
    if (pid == 0) _exit(write(fd_) ? 0 : 1);
    int status = -1;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    return status;
  }

  static std::vector<LeakedBlock> Blocks(size_t count) {
    std::vector<LeakedBlock> blocks(count);
    for (size_t i = 0; i < count; ++i) {
      blocks[i] = {0x10000 + 64 * i, 16 + i, static_cast<uint32_t>(i % 7), static_cast<uint32_t>(i),
                   format::AllocFunction::kNone};
    }
    return blocks;
  }

  // Writes a whole result in this process; the header can then be altered.
  void WriteHere(size_t blocks, std::vector<Edge> edges) {
    ASSERT_TRUE(ResultChannel::Write(fd_, {}, Blocks(blocks), edges));
  }
  ResultChannel::Header ReadHeader() {
    ResultChannel::Header header;
    EXPECT_EQ(pread(fd_, &header, sizeof(header), 0), static_cast<ssize_t>(sizeof(header)));
    return header;
  }
  void WriteHeader(const ResultChannel::Header& header) {
    ASSERT_EQ(pwrite(fd_, &header, sizeof(header), 0), static_cast<ssize_t>(sizeof(header)));
  }
  std::string ReadError() {
    ScanResult result;
    EXPECT_FALSE(ResultChannel::Read(fd_, &result));
    return result.error;
  }

  int fd_ = -1;
};

// More blocks and edges than one 16 KiB read buffer holds.
TEST_F(ResultChannelTest, RoundTripsAResultWrittenByAChild) {
  const std::vector<LeakedBlock> blocks = Blocks(1500);
  std::vector<Edge> edges;
  for (uint32_t i = 0; i + 1 < 1500; ++i) edges.push_back({i, i + 1});
  edges.push_back({1499, 0});
  ResultChannel::Totals totals = {100000, 123456789, 42, 8 << 20, 777777, 3, 1 << 20};
  ASSERT_EQ(WriteInChild([&](int fd) { return ResultChannel::Write(fd, totals, blocks, edges); }),
            0);

  ScanResult result;
  ASSERT_TRUE(ResultChannel::Read(fd_, &result)) << result.error;
  ASSERT_EQ(result.leaked.size(), blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(result.leaked[i].address, blocks[i].address) << i;
    EXPECT_EQ(result.leaked[i].size, blocks[i].size) << i;
    EXPECT_EQ(result.leaked[i].stack, blocks[i].stack) << i;
    EXPECT_EQ(result.leaked[i].seq, blocks[i].seq) << i;
  }
  EXPECT_EQ(result.edges, edges);
  EXPECT_EQ(result.stats.live_blocks, 100000u);
  EXPECT_EQ(result.stats.live_bytes, 123456789u);
  EXPECT_EQ(result.stats.root_ranges, 42u);
  EXPECT_EQ(result.stats.root_bytes, 8u << 20);
  EXPECT_EQ(result.stats.heap_words_scanned, 777777u);
  EXPECT_EQ(result.stats.unreadable_pages, 3u);
  EXPECT_EQ(result.stats.absent_pages, 1u << 20);
}

TEST_F(ResultChannelTest, RoundTripsAnEmptyResult) {
  ASSERT_EQ(WriteInChild([](int fd) { return ResultChannel::Write(fd, {}, {}, {}); }), 0);
  ScanResult result;
  ASSERT_TRUE(ResultChannel::Read(fd_, &result)) << result.error;
  EXPECT_TRUE(result.leaked.empty());
  EXPECT_TRUE(result.edges.empty());
}

TEST_F(ResultChannelTest, CarriesTheChildsErrorLine) {
  ASSERT_EQ(WriteInChild([](int fd) {
              return ResultChannel::WriteError(fd, "cannot read /proc/self/maps", "No such file");
            }),
            0);
  EXPECT_EQ(ReadError(), "cannot read /proc/self/maps: No such file");
  ASSERT_TRUE(ResultChannel::WriteError(fd_, "the marking helper process died"));
  EXPECT_EQ(ReadError(), "the marking helper process died");
}

TEST_F(ResultChannelTest, CutsALongErrorLineToFit) {
  std::string detail(1000, 'x');
  ASSERT_TRUE(ResultChannel::WriteError(fd_, "what", detail.c_str()));
  std::string error = ReadError();
  EXPECT_EQ(error.size(), sizeof(ResultChannel::Header::error) - 1);
  EXPECT_EQ(error.substr(0, 8), "what: xx");
}

TEST_F(ResultChannelTest, NothingWrittenIsNoResult) {
  EXPECT_EQ(ReadError(), "the snapshot process wrote no result");
  ASSERT_EQ(write(fd_, "HGSCAN", 6), 6);  // a header cut short
  EXPECT_EQ(ReadError(), "the snapshot process wrote no result");
}

TEST_F(ResultChannelTest, AWrongMagicIsNoResult) {
  WriteHere(3, {{0, 1}});
  ResultChannel::Header header = ReadHeader();
  header.magic ^= 1;
  WriteHeader(header);
  EXPECT_EQ(ReadError(), "the snapshot process wrote no result");
}

// A snapshot killed while writing: every cut of the arrays is caught.
TEST_F(ResultChannelTest, ATruncatedResultIsAnError) {
  WriteHere(1000, {{0, 1}, {1, 2}, {2, 0}});
  off_t whole = lseek(fd_, 0, SEEK_END);
  for (off_t cut : {whole - 1, whole - 8, whole - 24, off_t{sizeof(ResultChannel::Header) + 40},
                    off_t{sizeof(ResultChannel::Header)}}) {
    ASSERT_EQ(ftruncate(fd_, cut), 0);
    EXPECT_EQ(ReadError(), "the snapshot process wrote a truncated result") << cut;
  }
}

// Counts far beyond the file (not allocated: no bad_alloc), and counts that overflow.
TEST_F(ResultChannelTest, ImpossibleCountsAreAnError) {
  WriteHere(4, {{0, 1}});
  ResultChannel::Header header = ReadHeader();
  header.leaked_count = uint64_t{1} << 40;
  WriteHeader(header);
  EXPECT_EQ(ReadError(), "the snapshot process wrote a truncated result");
  header.leaked_count = 4;
  header.edge_count = ~uint64_t{0} / 4;
  WriteHeader(header);
  EXPECT_EQ(ReadError(), "the snapshot process wrote a garbled result");
  header.edge_count = ~uint64_t{0};
  header.leaked_count = ~uint64_t{0};
  WriteHeader(header);
  EXPECT_EQ(ReadError(), "the snapshot process wrote a garbled result");
}

TEST_F(ResultChannelTest, BytesAfterTheEdgesAreAnError) {
  WriteHere(4, {{0, 1}});
  off_t whole = lseek(fd_, 0, SEEK_END);
  ASSERT_EQ(pwrite(fd_, "x", 1, whole), 1);
  EXPECT_EQ(ReadError(), "the snapshot process wrote a garbled result");
}

// An edge index that names no leaked block (a stray write), at either end.
TEST_F(ResultChannelTest, AnEdgeToNoLeakedBlockIsAnError) {
  WriteHere(4, {{0, 4}});
  EXPECT_EQ(ReadError(), "the snapshot process wrote a garbled result");
  WriteHere(4, {{4, 0}});
  EXPECT_EQ(ReadError(), "the snapshot process wrote a garbled result");
  WriteHere(4, {{3, 0}, {0, 3}});
  ScanResult result;
  EXPECT_TRUE(ResultChannel::Read(fd_, &result)) << result.error;
}

}  // namespace
}  // namespace heapgraph::scanner
