// HighDescriptor: a descriptor moved out of the host's low numbers, and told apart from the file
// a host opens on the same number after closing ours; another file taking over the number (a
// forked child's memory copy).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heap/platform/HighDescriptor.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

int OpenIn(const TempDir& dir, const char* name) {
  return openat(dir.fd(), name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
}

TEST(HighDescriptorTest, AdoptMovesAboveTheLowNumbersAndClosesTheOriginal) {
  struct rlimit limit;
  ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &limit));
  TempDir dir;
  int low = OpenIn(dir, "a");
  ASSERT_GE(low, 0);
  HighDescriptor file;
  ASSERT_TRUE(file.Adopt(low));
  if (limit.rlim_cur > static_cast<rlim_t>(HighDescriptor::kPreferredMinimum) + 64) {
    EXPECT_GE(file.fd(), HighDescriptor::kPreferredMinimum);
  } else {
    EXPECT_GE(file.fd(), static_cast<int>(limit.rlim_cur * 3 / 4));
  }
  EXPECT_EQ(-1, fcntl(low, F_GETFD));  // the low number is free again
  EXPECT_EQ(FD_CLOEXEC, fcntl(file.fd(), F_GETFD) & FD_CLOEXEC);
  EXPECT_TRUE(file.StillOurs());
  close(file.fd());
}

TEST(HighDescriptorTest, ClosedOrReusedNumberIsNotOurs) {
  TempDir dir;
  HighDescriptor file;
  ASSERT_TRUE(file.Adopt(OpenIn(dir, "ours")));
  int number = file.fd();
  close(number);  // the host's closefrom()
  EXPECT_FALSE(file.StillOurs());
  int other = OpenIn(dir, "theirs");
  ASSERT_GE(other, 0);
  ASSERT_EQ(number, dup2(other, number));  // the host reuses the number
  EXPECT_FALSE(file.StillOurs());
  close(other);
  close(number);
}

TEST(HighDescriptorTest, TakeOverPutsAnotherFileOnTheSameNumber) {
  TempDir dir;
  HighDescriptor file;
  ASSERT_TRUE(file.Adopt(OpenIn(dir, "parent")));
  const int number = file.fd();
  int other = OpenIn(dir, "child");
  ASSERT_GE(other, 0);
  struct stat st;
  ASSERT_EQ(0, fstat(other, &st));
  ASSERT_TRUE(file.TakeOver(other, st));
  EXPECT_EQ(number, file.fd());
  EXPECT_EQ(-1, fcntl(other, F_GETFD)) << "the other number is closed";
  EXPECT_EQ(FD_CLOEXEC, fcntl(number, F_GETFD) & FD_CLOEXEC);
  struct stat now;
  ASSERT_EQ(0, fstat(number, &now));
  EXPECT_EQ(st.st_ino, now.st_ino) << "the number refers to the other file";
  EXPECT_TRUE(file.StillOurs());
  close(number);
  // Without a number yet, as Adopt.
  HighDescriptor fresh;
  int third = OpenIn(dir, "third");
  ASSERT_EQ(0, fstat(third, &st));
  ASSERT_TRUE(fresh.TakeOver(third, st));
  EXPECT_TRUE(fresh.StillOurs());
  close(fresh.fd());
}

TEST(HighDescriptorTest, AdoptRefusesANumberThatIsNotOpen) {
  HighDescriptor file;
  EXPECT_FALSE(file.Adopt(-1));
  EXPECT_FALSE(file.StillOurs());
  TempDir dir;
  int fd = OpenIn(dir, "x");
  close(fd);
  EXPECT_FALSE(file.Adopt(fd));
}

}  // namespace
}  // namespace heapgraph
