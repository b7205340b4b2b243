// tests/reader: InputFile on real files: a regular file is read and bounded; a link (refused in a
// recording, followed for module paths), a FIFO, /dev/urandom and a 2 GiB sparse file each give
// one line at once, never a blocked open or an unbounded read.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "reader/InputFile.h"
#include "reader/RecordingError.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

std::string OpenError(const std::string& path, InputFile::Links links = InputFile::Links::kRefuse,
                      uint64_t max_size = 1 << 20) {
  try {
    std::optional<InputFile> file = InputFile::Open(path, "name", links);
    if (!file) return "missing";
    file->ReadAll(max_size);
  } catch (const RecordingError& e) {
    return e.what();
  }
  return "";
}

TEST(InputFileTest, ReadsARegularFileWithinItsSize) {
  TempDir dir;
  std::ofstream(dir.Path("f")) << "0123456789";
  std::optional<InputFile> file = InputFile::Open(dir.Path("f"), "f");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->size(), 10u);
  EXPECT_EQ(file->ReadAll(10), "0123456789");
  char bytes[4];
  file->ReadAt(6, bytes, 4, "tail");
  EXPECT_EQ(std::string(bytes, 4), "6789");
  try {
    file->ReadAt(8, bytes, 4, "tail");
    ADD_FAILURE() << "read past the end";
  } catch (const RecordingError& e) {
    EXPECT_STREQ(e.what(), "f: truncated (tail ends at 12, file is 10 bytes)");
  }
  InputFile copy = *file;  // copies share the descriptor
  file.reset();
  EXPECT_EQ(copy.ReadAll(10), "0123456789");
}

TEST(InputFileTest, MissingIsNulloptAndALargerFileThanTheBoundIsRefused) {
  TempDir dir;
  EXPECT_EQ(OpenError(dir.Path("none")), "missing");
  std::ofstream(dir.Path("f")) << "0123456789";
  EXPECT_EQ(OpenError(dir.Path("f"), InputFile::Links::kRefuse, 9),
            "name: too large (10 bytes, at most 9)");
}

TEST(InputFileTest, RefusesAFifoWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(mkfifo(dir.Path("fifo").c_str(), 0600), 0);
  EXPECT_EQ(OpenError(dir.Path("fifo")), "name: not a regular file (a FIFO, refused)");
  EXPECT_EQ(OpenError(dir.Path("fifo"), InputFile::Links::kFollow),
            "name: not a regular file (a FIFO, refused)");
}

TEST(InputFileTest, RefusesLinksOrFollowsThemToRegularFilesOnly) {
  TempDir dir;
  std::ofstream(dir.Path("real")) << "abc";
  std::filesystem::create_symlink(dir.Path("real"), dir.Path("link"));
  std::filesystem::create_symlink("/dev/urandom", dir.Path("random"));
  EXPECT_EQ(OpenError(dir.Path("link")), "name: is a symbolic link (refused)");
  EXPECT_EQ(OpenError(dir.Path("link"), InputFile::Links::kFollow), "");
  EXPECT_EQ(OpenError(dir.Path("random")), "name: is a symbolic link (refused)");
  EXPECT_EQ(OpenError(dir.Path("random"), InputFile::Links::kFollow),
            "name: not a regular file (a character device, refused)");
  EXPECT_EQ(OpenError(dir.path()), "name: not a regular file (a directory, refused)");
}

TEST(InputFileTest, RefusesAHugeSparseFileByItsSizeBeforeReadingIt) {
  TempDir dir;
  int fd = open(dir.Path("sparse").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, off_t{2} << 30), 0);
  close(fd);
  EXPECT_EQ(OpenError(dir.Path("sparse")), "name: too large (2147483648 bytes, at most 1048576)");
}

}  // namespace
}  // namespace heapgraph
