// tests/heap: WriteAt: the whole buffer lands at its offset (also past the end of the file and in
// pieces larger than one pipe-sized write), and a descriptor that cannot be written gives false.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "heap/platform/WriteAt.h"

namespace heapgraph {
namespace {

std::string Contents(int fd) {
  std::string all(static_cast<size_t>(lseek(fd, 0, SEEK_END)), '\0');
  EXPECT_EQ(static_cast<ssize_t>(all.size()), pread(fd, all.data(), all.size(), 0));
  return all;
}

TEST(WriteAtTest, WritesAtTheOffsetAndLeavesAHoleBefore) {
  int fd = memfd_create("write_at", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteAt(fd, "abc", 3, 5));
  EXPECT_EQ(std::string("\0\0\0\0\0abc", 8), Contents(fd));
  ASSERT_TRUE(WriteAt(fd, "XY", 2, 1));
  EXPECT_EQ(std::string("\0XY\0\0abc", 8), Contents(fd));
  close(fd);
}

TEST(WriteAtTest, WritesALargeBufferWhole) {
  int fd = memfd_create("write_at", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<char> data(8 << 20);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  ASSERT_TRUE(WriteAt(fd, data.data(), data.size(), 4096));
  std::string all = Contents(fd);
  ASSERT_EQ(data.size() + 4096, all.size());
  EXPECT_EQ(0, memcmp(all.data() + 4096, data.data(), data.size()));
  close(fd);
}

TEST(WriteAtTest, FailsOnADescriptorItCannotWrite) {
  int fds[2];
  ASSERT_EQ(0, pipe(fds));
  EXPECT_FALSE(WriteAt(fds[1], "x", 1, 0));  // a pipe has no offsets (ESPIPE)
  int read_only = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  EXPECT_FALSE(WriteAt(read_only, "x", 1, 0));
  EXPECT_TRUE(WriteAt(read_only, "", 0, 0));  // nothing to write is done at once
  close(read_only);
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace heapgraph
