// tests/heap: MappedFile: exclusive, non-following creation with mode 0600, disk reservation,
// MAP_SHARED persistence, and the fork pairs CopyTo / Adopt and CopyToMemory / AdoptMemoryCopy.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "heap/store/MappedFile.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

// The file's bytes, read with pread through a descriptor of our own.
std::string ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  if (fd < 0) return "";
  struct stat st;
  fstat(fd, &st);
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  return bytes;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ssize_t(bytes.size()), write(fd, bytes.data(), bytes.size()));
  close(fd);
}

uint64_t AllocatedBytes(const std::string& path) {
  struct stat st;
  EXPECT_EQ(0, stat(path.c_str(), &st));
  return uint64_t(st.st_blocks) * 512;
}

void Fill(MappedFile& file, uint64_t offset, uint64_t length, uint8_t seed) {
  for (uint64_t i = 0; i < length; ++i) file.data()[offset + i] = uint8_t(seed + i * 7);
}

bool IsFilled(const std::string& bytes, uint64_t offset, uint64_t length, uint8_t seed) {
  for (uint64_t i = 0; i < length; ++i) {
    if (uint8_t(bytes[offset + i]) != uint8_t(seed + i * 7)) return false;
  }
  return true;
}

bool IsZero(const std::string& bytes, uint64_t offset, uint64_t length) {
  for (uint64_t i = 0; i < length; ++i) {
    if (bytes[offset + i] != 0) return false;
  }
  return true;
}

constexpr uint64_t kSize = 256 * 1024;

TEST(MappedFileTest, CreateMapsAZeroFilledFileOfTheGivenSize) {
  TempDir dir;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  ASSERT_NE(nullptr, file.data());
  EXPECT_EQ(kSize, file.size());
  EXPECT_GE(file.fd(), 0);
  std::string bytes = ReadFile(dir.Path("f"));
  EXPECT_EQ(kSize, bytes.size());
  EXPECT_TRUE(IsZero(bytes, 0, kSize));
  EXPECT_EQ(0, file.data()[kSize - 1]);
  EXPECT_EQ(FD_CLOEXEC, fcntl(file.fd(), F_GETFD) & FD_CLOEXEC);
  file.Unmap();
}

TEST(MappedFileTest, CreatedFileHasMode0600WhateverTheUmask) {
  TempDir dir;
  for (mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}}) {
    mode_t saved = umask(mask);
    MappedFile file;
    std::string name = "f" + std::to_string(mask);
    bool created = file.Create(dir.fd(), name.c_str(), 4096);
    umask(saved);
    ASSERT_TRUE(created);
    struct stat st;
    ASSERT_EQ(0, stat(dir.Path(name).c_str(), &st));
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(0600u, st.st_mode & 07777) << "umask " << mask;
    file.Unmap();
  }
}

TEST(MappedFileTest, CreateRefusesAnExistingFile) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(WriteFile(dir.Path("f"), "precious"));
  MappedFile file;
  errno = 0;
  EXPECT_FALSE(file.Create(dir.fd(), "f", 4096));
  EXPECT_EQ(EEXIST, errno);
  EXPECT_EQ(nullptr, file.data());
  EXPECT_EQ("precious", ReadFile(dir.Path("f")));
}

TEST(MappedFileTest, CreateRefusesASymlinkToAnExistingFile) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(WriteFile(dir.Path("target"), "precious"));
  ASSERT_EQ(0, symlinkat("target", dir.fd(), "link"));
  MappedFile file;
  EXPECT_FALSE(file.Create(dir.fd(), "link", 4096));
  EXPECT_EQ("precious", ReadFile(dir.Path("target")));
}

TEST(MappedFileTest, CreateRefusesADanglingSymlinkAndCreatesNothing) {
  TempDir dir;
  ASSERT_EQ(0, symlinkat("target", dir.fd(), "link"));
  MappedFile file;
  EXPECT_FALSE(file.Create(dir.fd(), "link", 4096));
  struct stat st;
  EXPECT_NE(0, fstatat(dir.fd(), "target", &st, AT_SYMLINK_NOFOLLOW));
}

// A file parked for reuse (a spare's, MappedFile::kReusePrefix) becomes the new file: same inode,
// the new size, zeros.
TEST(MappedFileTest, CreateTakesOverAnEmptyParkedFile) {
  TempDir dir;
  const std::string parked = dir.Path(std::string(MappedFile::kReusePrefix) + "f");
  ASSERT_NO_FATAL_FAILURE(WriteFile(parked, ""));
  struct stat before;
  ASSERT_EQ(0, stat(parked.c_str(), &before));
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  struct stat after;
  ASSERT_EQ(0, stat(dir.Path("f").c_str(), &after));
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(kSize, uint64_t(after.st_size));
  EXPECT_NE(0, access(parked.c_str(), F_OK));
  EXPECT_TRUE(IsZero(ReadFile(dir.Path("f")), 0, kSize));
  file.Unmap();
}

TEST(MappedFileTest, ParkedFileThatIsNotEmptyIsRemovedNotUsed) {
  TempDir dir;
  const std::string parked = dir.Path(std::string(MappedFile::kReusePrefix) + "f");
  ASSERT_NO_FATAL_FAILURE(WriteFile(parked, "stale"));
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  std::string bytes = ReadFile(dir.Path("f"));
  ASSERT_EQ(kSize, bytes.size());
  EXPECT_TRUE(IsZero(bytes, 0, kSize)) << "the stale bytes are gone";
  EXPECT_NE(0, access(parked.c_str(), F_OK));
  file.Unmap();
}

TEST(MappedFileTest, ParkedFileNeverReplacesAnExistingOne) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(WriteFile(dir.Path(std::string(MappedFile::kReusePrefix) + "f"), ""));
  ASSERT_NO_FATAL_FAILURE(WriteFile(dir.Path("f"), "precious"));
  MappedFile file;
  EXPECT_FALSE(file.Create(dir.fd(), "f", kSize));
  EXPECT_EQ("precious", ReadFile(dir.Path("f")));
}

TEST(MappedFileTest, StoresReachTheFileWithoutSync) {
  TempDir dir;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  Fill(file, 100, 5000, 3);
  EXPECT_TRUE(IsFilled(ReadFile(dir.Path("f")), 100, 5000, 3));
  file.Sync();
  EXPECT_TRUE(IsFilled(ReadFile(dir.Path("f")), 100, 5000, 3));
  file.Unmap();
}

TEST(MappedFileTest, DataPersistsAfterUnmap) {
  TempDir dir;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  Fill(file, kSize - 4096, 4096, 9);
  file.Unmap();
  EXPECT_EQ(nullptr, file.data());
  EXPECT_EQ(0u, file.size());
  EXPECT_EQ(-1, file.fd());
  std::string bytes = ReadFile(dir.Path("f"));
  ASSERT_EQ(kSize, bytes.size());
  EXPECT_TRUE(IsFilled(bytes, kSize - 4096, 4096, 9));
  EXPECT_TRUE(IsZero(bytes, 0, kSize - 4096));
  file.Unmap();  // a second Unmap is harmless
}

TEST(MappedFileTest, ReserveGivesTheRangeDiskBlocks) {
  TempDir dir;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", 4 * kSize));
  uint64_t before = AllocatedBytes(dir.Path("f"));
  EXPECT_LT(before, kSize) << "a new file is sparse";
  ASSERT_TRUE(file.Reserve(kSize, kSize));
  EXPECT_GE(AllocatedBytes(dir.Path("f")), before + kSize);
  file.Unmap();
}

TEST(MappedFileTest, ReserveIsClampedToTheFileAndNeverGrowsIt) {
  TempDir dir;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  EXPECT_TRUE(file.Reserve(kSize - 4096, 100 * kSize));
  EXPECT_FALSE(file.Reserve(kSize, 4096));
  EXPECT_FALSE(file.Reserve(UINT64_MAX, 1));
  struct stat st;
  ASSERT_EQ(0, stat(dir.Path("f").c_str(), &st));
  EXPECT_EQ(off_t(kSize), st.st_size);
  file.Unmap();
}

TEST(MappedFileTest, CopyToCopiesOnlyTheGivenRanges) {
  TempDir dir, child;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  Fill(file, 0, kSize, 1);
  const MappedFile::Range ranges[] = {{0, 4096}, {65536, 8192}, {100000, 5}};
  ASSERT_TRUE(file.CopyTo(child.fd(), "copy", ranges, 3));

  std::string copy = ReadFile(child.Path("copy"));
  ASSERT_EQ(kSize, copy.size());
  std::string original = ReadFile(dir.Path("f"));
  uint64_t covered = 0;
  for (const MappedFile::Range& r : ranges) {
    EXPECT_EQ(0, memcmp(copy.data() + r.offset, original.data() + r.offset, r.length));
    covered += r.length;
  }
  EXPECT_TRUE(IsZero(copy, 4096, 65536 - 4096));
  EXPECT_TRUE(IsZero(copy, 65536 + 8192, 100000 - 65536 - 8192));
  EXPECT_TRUE(IsZero(copy, 100005, kSize - 100005));
  EXPECT_GE(AllocatedBytes(child.Path("copy")), covered) << "copied ranges are reserved";
  EXPECT_LT(AllocatedBytes(child.Path("copy")), kSize / 2) << "the rest stays sparse";
  struct stat st;
  ASSERT_EQ(0, stat(child.Path("copy").c_str(), &st));
  EXPECT_EQ(0600u, st.st_mode & 07777);

  // The source is untouched and still the mapped file.
  EXPECT_TRUE(IsFilled(original, 0, kSize, 1));
  file.data()[5000] = 0x5a;
  EXPECT_EQ(0x5a, ReadFile(dir.Path("f"))[5000]);
  EXPECT_EQ(0, ReadFile(child.Path("copy"))[5000]);
  file.Unmap();
}

TEST(MappedFileTest, CopyToClampsRangesToTheFile) {
  TempDir dir;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  Fill(file, 0, kSize, 4);
  const MappedFile::Range ranges[] = {{kSize - 100, 1000}, {kSize, 10}, {500, 0}, {UINT64_MAX, 1}};
  ASSERT_TRUE(file.CopyTo(dir.fd(), "copy", ranges, 4));
  std::string copy = ReadFile(dir.Path("copy"));
  ASSERT_EQ(kSize, copy.size());
  EXPECT_EQ(0, memcmp(copy.data() + kSize - 100, file.data() + kSize - 100, 100));
  EXPECT_TRUE(IsZero(copy, 0, kSize - 100));
  file.Unmap();
}

TEST(MappedFileTest, CopyToRefusesAnExistingNameOrSymlink) {
  TempDir dir;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  const MappedFile::Range all = {0, kSize};
  EXPECT_FALSE(file.CopyTo(dir.fd(), "f", &all, 1));
  ASSERT_NO_FATAL_FAILURE(WriteFile(dir.Path("target"), "precious"));
  ASSERT_EQ(0, symlinkat("target", dir.fd(), "link"));
  EXPECT_FALSE(file.CopyTo(dir.fd(), "link", &all, 1));
  EXPECT_EQ("precious", ReadFile(dir.Path("target")));
  file.Unmap();
}

// The fork's memory copy: same size, only the ranges, no directory entry anywhere; mapped over
// the original under the original's descriptor number, stores reach the copy and no longer the
// file; the file can then be written from it.
TEST(MappedFileTest, CopyToMemoryThenAdoptMemoryCopyLeavesTheFileAlone) {
  TempDir dir, later;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  Fill(file, 0, kSize, 3);
  const MappedFile::Range ranges[] = {{4096, 4096}, {65536, 100}};
  int fd = file.CopyToMemory("copy", ranges, 2);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
  struct stat st;
  ASSERT_EQ(0, fstat(fd, &st));
  EXPECT_EQ(kSize, uint64_t(st.st_size));
  size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    entries += entry.exists();
  EXPECT_EQ(1u, entries) << "nothing new in the directory";
  uint8_t* data = file.data();
  const int number = file.fd();

  ASSERT_TRUE(file.AdoptMemoryCopy(fd));
  EXPECT_EQ(data, file.data());
  EXPECT_EQ(number, file.fd()) << "the copy took the file's number";
  EXPECT_EQ(number, file.OwnFd()) << "and is the file remembered";
  EXPECT_EQ(-1, fcntl(fd, F_GETFD)) << "its own number is closed";
  EXPECT_EQ(FD_CLOEXEC, fcntl(number, F_GETFD) & FD_CLOEXEC);
  struct stat now;
  ASSERT_EQ(0, fstat(number, &now));
  EXPECT_EQ(st.st_ino, now.st_ino);
  EXPECT_TRUE(IsZero(std::string(reinterpret_cast<char*>(data), 4096), 0, 4096));
  EXPECT_EQ(0, memcmp(data + 4096, ReadFile(dir.Path("f")).data() + 4096, 4096));
  data[70000] = 0x77;
  EXPECT_NE(0x77, ReadFile(dir.Path("f"))[70000]) << "the original file is not written";

  const MappedFile::Range all = {0, kSize};
  ASSERT_TRUE(file.CopyTo(later.fd(), "f", &all, 1));
  ASSERT_TRUE(file.Adopt(later.fd(), "f"));
  EXPECT_EQ(data, file.data());
  data[70001] = 0x78;
  std::string written = ReadFile(later.Path("f"));
  EXPECT_EQ(0x77, written[70000]);
  EXPECT_EQ(0x78, written[70001]) << "stores reach the file adopted last";
  file.Unmap();
}

TEST(MappedFileTest, AdoptMemoryCopyRefusesAFileOfAnotherSizeAndClosesIt) {
  TempDir dir;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  file.data()[0] = 9;
  const MappedFile::Range all = {0, kSize};
  MappedFile other;
  ASSERT_TRUE(other.Create(dir.fd(), "g", kSize / 2));
  int fd = other.CopyToMemory("other", &all, 1);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(file.AdoptMemoryCopy(fd));
  EXPECT_EQ(-1, fcntl(fd, F_GETFD)) << "closed";
  EXPECT_EQ(file.fd(), file.OwnFd()) << "the file's number still its own";
  EXPECT_EQ(9, file.data()[0]) << "still the original mapping";
  EXPECT_EQ(9, ReadFile(dir.Path("f"))[0]);
  other.Unmap();
  file.Unmap();
}

TEST(MappedFileTest, AdoptMapsTheCopyAtTheSameAddressAndStopsWritingTheOriginal) {
  TempDir dir, child;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  Fill(file, 0, kSize, 2);
  const MappedFile::Range ranges[] = {{0, 8192}};
  ASSERT_TRUE(file.CopyTo(child.fd(), "copy", ranges, 1));
  uint8_t* data = file.data();
  struct stat before = {};
  ASSERT_EQ(0, fstat(file.fd(), &before));
  const ino_t original_inode = before.st_ino;

  ASSERT_TRUE(file.Adopt(child.fd(), "copy"));
  EXPECT_EQ(data, file.data());
  EXPECT_EQ(kSize, file.size());
  EXPECT_GE(file.fd(), 0);
  // The original's descriptor is closed; its number may be the copy's now (both are placed at
  // the lowest free high number), so compare files, not numbers.
  struct stat now = {};
  struct stat copy = {};
  ASSERT_EQ(0, fstat(file.fd(), &now));
  ASSERT_EQ(0, fstatat(child.fd(), "copy", &copy, AT_SYMLINK_NOFOLLOW));
  EXPECT_EQ(copy.st_ino, now.st_ino) << "the descriptor is the copy's";
  EXPECT_NE(original_inode, now.st_ino);
  // The mapping now shows the copy: the copied range, zeros elsewhere.
  std::string original = ReadFile(dir.Path("f"));
  EXPECT_EQ(0, memcmp(file.data(), original.data(), 8192));
  EXPECT_EQ(0, file.data()[8192]);

  Fill(file, 10000, 3000, 77);
  EXPECT_TRUE(IsFilled(ReadFile(child.Path("copy")), 10000, 3000, 77));
  EXPECT_TRUE(original == ReadFile(dir.Path("f"))) << "the original was written after Adopt";
  file.Unmap();
}

TEST(MappedFileTest, AdoptFailsForAMissingFileOrASymlinkAndKeepsTheMapping) {
  TempDir dir, child;
  MappedFile file;
  ASSERT_TRUE(file.Create(dir.fd(), "f", kSize));
  const MappedFile::Range all = {0, kSize};
  ASSERT_TRUE(file.CopyTo(child.fd(), "copy", &all, 1));
  ASSERT_EQ(0, symlinkat("copy", child.fd(), "link"));
  EXPECT_FALSE(file.Adopt(child.fd(), "missing"));
  EXPECT_FALSE(file.Adopt(child.fd(), "link"));
  file.data()[1] = 0x42;
  EXPECT_EQ(0x42, ReadFile(dir.Path("f"))[1]);
  EXPECT_EQ(0, ReadFile(child.Path("copy"))[1]);
  file.Unmap();
}

}  // namespace
}  // namespace heapgraph
