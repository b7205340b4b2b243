// SymbolCache: results kept by one process and found by another, records checked one by one,
// concurrent writers (real forked processes), and file names that are not build-ids.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "report/SymbolCache.h"

namespace heapgraph::report {
namespace {

const std::string kCachedBuildId = "0123456789abcdef0123456789abcdef01234567";

std::vector<SourceFrame> CachedFrames(int n) {
  return {{"inner_" + std::to_string(n), "/src/inner.h", 10 + n, true},
          {"outer(int)", "/src/outer.cc", 20 + n, false}};
}

class SymbolCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "symbol_cache_" + std::to_string(getpid());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The file of a build-id without a debug file under /usr/lib/debug (none of the test ids has
  // one).
  std::string FileOf(const std::string& build_id) const { return dir_ + "/" + build_id + ".n"; }
  std::string Read(const std::string& path) const {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void Write(const std::string& path, const std::string& bytes) const {
    std::filesystem::create_directories(dir_);
    std::ofstream(path, std::ios::binary) << bytes;
  }

  std::string dir_;
};

TEST_F(SymbolCacheTest, WhatOneProcessKeepsAnotherFinds) {
  {
    SymbolCache writer(dir_);  // the directory is made at the first Add
    EXPECT_FALSE(writer.Find(kCachedBuildId, 0x1234));
    writer.Add(kCachedBuildId, 0x1234, CachedFrames(1));
    writer.Add(kCachedBuildId, 0x5678, {});  // nothing names it: kept as such
    writer.Add(kCachedBuildId, 0x9abc, {{"stripped_name", "", 0, false}});
    EXPECT_EQ(writer.Find(kCachedBuildId, 0x1234), CachedFrames(1));
  }
  EXPECT_EQ(std::filesystem::status(dir_).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  SymbolCache reader(dir_);
  EXPECT_EQ(reader.Find(kCachedBuildId, 0x1234), CachedFrames(1));
  ASSERT_TRUE(reader.Find(kCachedBuildId, 0x5678));
  EXPECT_TRUE(reader.Find(kCachedBuildId, 0x5678)->empty());
  EXPECT_EQ(reader.Find(kCachedBuildId, 0x9abc)->at(0).function, "stripped_name");
  EXPECT_FALSE(reader.Find(kCachedBuildId, 0x1235));
  EXPECT_FALSE(reader.Find("ffffffffffffffffffffffffffffffffffffffff", 0x1234));
}

// A cache kept across runs: results computed before the module's debug file was installed (or
// replaced) are not served after it, and those computed with it are found again while it stays.
TEST_F(SymbolCacheTest, ResultsAreKeptPerStateOfTheModulesDebugFile) {
  const std::string debug_root = dir_ + "-debug";
  const std::string debug_file = debug_root + "/.build-id/" + kCachedBuildId.substr(0, 2) + "/" +
                                 kCachedBuildId.substr(2) + ".debug";
  {
    SymbolCache without(dir_, debug_root);
    without.Add(kCachedBuildId, 0x1234, {{"stripped_name", "", 0, false}});
  }
  std::filesystem::create_directories(std::filesystem::path(debug_file).parent_path());
  std::ofstream(debug_file) << "debug information";
  {
    SymbolCache with(dir_, debug_root);
    EXPECT_FALSE(with.Find(kCachedBuildId, 0x1234)) << "computed without the debug file";
    with.Add(kCachedBuildId, 0x1234, CachedFrames(1));
  }
  EXPECT_EQ(SymbolCache(dir_, debug_root).Find(kCachedBuildId, 0x1234), CachedFrames(1));
  std::ofstream(debug_file, std::ios::app) << " replaced";
  EXPECT_FALSE(SymbolCache(dir_, debug_root).Find(kCachedBuildId, 0x1234)) << "replaced since";
  std::filesystem::remove(debug_file);
  EXPECT_EQ(SymbolCache(dir_, debug_root).Find(kCachedBuildId, 0x1234),
            (std::vector<SourceFrame>{{"stripped_name", "", 0, false}}));
  std::filesystem::remove_all(debug_root);
}

TEST_F(SymbolCacheTest, ARecordThatFailsItsCheckEndsTheFile) {
  std::string first = SymbolCache::Encode(1, CachedFrames(1));
  std::string second = SymbolCache::Encode(2, CachedFrames(2));
  std::string third = SymbolCache::Encode(3, CachedFrames(3));
  std::string bad = second;
  bad[bad.size() - 3] ^= 0x20;  // a byte of the payload: the check no longer matches
  SymbolCache::Records records = SymbolCache::Parse(first + bad + third);
  EXPECT_EQ(records.size(), 1u);
  EXPECT_EQ(records.at(1), CachedFrames(1));

  // Cut short, as by a kill during its write: the records before it count.
  records = SymbolCache::Parse(first + second + third.substr(0, third.size() - 5));
  EXPECT_EQ(records.size(), 2u);
  EXPECT_EQ(records.at(2), CachedFrames(2));

  // The first record of an address wins.
  records = SymbolCache::Parse(first + SymbolCache::Encode(1, CachedFrames(9)));
  EXPECT_EQ(records.at(1), CachedFrames(1));

  EXPECT_TRUE(SymbolCache::Parse("").empty());
  EXPECT_TRUE(SymbolCache::Parse(std::string(4096, '\0')).empty());
  EXPECT_TRUE(SymbolCache::Parse(std::string(100, '\xff')).empty());
}

TEST_F(SymbolCacheTest, AFrameThatBreaksTheLineInvariantFailsItsRecord) {
  // A line without a file: a record no Symbolizer writes.
  std::string record = SymbolCache::Encode(7, {{"f", "", 3, false}});
  EXPECT_TRUE(SymbolCache::Parse(record).empty());
}

TEST_F(SymbolCacheTest, ConcurrentProcessesAppendWholeRecords) {
  constexpr int kProcesses = 4;
  constexpr int kAddresses = 300;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      SymbolCache cache(dir_);
      for (int a = 0; a < kAddresses; ++a) {
        cache.Add(kCachedBuildId, static_cast<uint64_t>(p) << 32 | a, CachedFrames(a));
        cache.Add(kCachedBuildId, 0xfeed, CachedFrames(0));  // every process misses this one too
        cache.CloseFiles();  // written now: one write(2) per record, racing the other processes
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  SymbolCache::Records records = SymbolCache::Parse(Read(FileOf(kCachedBuildId)));
  EXPECT_EQ(records.size(), size_t{kProcesses} * kAddresses + 1);
  for (int p = 0; p < kProcesses; ++p) {
    for (int a = 0; a < kAddresses; a += 37) {
      EXPECT_EQ(records.at(static_cast<uint64_t>(p) << 32 | a), CachedFrames(a));
    }
  }
}

TEST_F(SymbolCacheTest, OnlyBuildIdsNameFiles) {
  SymbolCache cache(dir_);
  for (const std::string& bad : {std::string(""), std::string("../escape"), std::string("ABCD"),
                                 std::string("abc"), std::string(200, 'a')}) {
    cache.Add(bad, 1, CachedFrames(1));
    EXPECT_FALSE(cache.Find(bad, 1)) << bad;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_));  // nothing was ever written
  SymbolCache none("");
  none.Add(kCachedBuildId, 1, CachedFrames(1));
  EXPECT_FALSE(none.Find(kCachedBuildId, 1));
}

TEST_F(SymbolCacheTest, AFifoIsNeitherReadNorWritten) {
  std::filesystem::create_directories(dir_);
  ASSERT_EQ(mkfifo(FileOf(kCachedBuildId).c_str(), 0600), 0);
  SymbolCache cache(dir_);  // neither call may block on the FIFO
  EXPECT_FALSE(cache.Find(kCachedBuildId, 1));
  cache.Add(kCachedBuildId, 1, CachedFrames(1));
  SymbolCache again(dir_);
  EXPECT_FALSE(again.Find(kCachedBuildId, 1));
}

TEST_F(SymbolCacheTest, AFileOverTheBoundIsNotReadNorGrown) {
  std::string path = FileOf(kCachedBuildId);
  Write(path, SymbolCache::Encode(1, CachedFrames(1)));
  std::filesystem::resize_file(path, SymbolCache::kMaxFileBytes + 1);
  SymbolCache cache(dir_);
  EXPECT_FALSE(cache.Find(kCachedBuildId, 1));
  cache.Add(kCachedBuildId, 2, CachedFrames(2));
  cache.CloseFiles();
  EXPECT_EQ(std::filesystem::file_size(path), SymbolCache::kMaxFileBytes + 1);
}

TEST_F(SymbolCacheTest, GarbageBeforeRecordsHidesThemButAppendsStillWork) {
  Write(FileOf(kCachedBuildId), "not a record at all");
  SymbolCache cache(dir_);
  EXPECT_FALSE(cache.Find(kCachedBuildId, 1));
  cache.Add(kCachedBuildId, 1, CachedFrames(1));
  EXPECT_EQ(cache.Find(kCachedBuildId, 1), CachedFrames(1));  // this object remembers what it added
  cache.CloseFiles();
  cache.Add(kCachedBuildId, 2, CachedFrames(2));  // the descriptor is opened again
  EXPECT_EQ(cache.Find(kCachedBuildId, 2), CachedFrames(2));
  cache.CloseFiles();
  // After the garbage: another reader stops there, so it finds neither.
  EXPECT_TRUE(SymbolCache::Parse(Read(FileOf(kCachedBuildId))).empty());
  EXPECT_GT(std::filesystem::file_size(FileOf(kCachedBuildId)), 19u);
}

TEST_F(SymbolCacheTest, RecordsAreWrittenWhenTheCheckClosesItsFiles) {
  SymbolCache writer(dir_);
  writer.Add(kCachedBuildId, 1, CachedFrames(1));
  SymbolCache early(dir_);
  EXPECT_FALSE(early.Find(kCachedBuildId, 1));  // still pending in the writer
  writer.CloseFiles();
  SymbolCache late(dir_);
  EXPECT_EQ(late.Find(kCachedBuildId, 1), CachedFrames(1));
  // Many records: written in 64 KiB batches without waiting for CloseFiles.
  for (uint64_t a = 100; a < 2100; ++a) writer.Add(kCachedBuildId, a, CachedFrames(7));
  EXPECT_GT(std::filesystem::file_size(FileOf(kCachedBuildId)), uint64_t{64} << 10);
}

}  // namespace
}  // namespace heapgraph::report
