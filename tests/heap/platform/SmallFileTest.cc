// tests/heap: SmallFile: whole small files (several reads for procfs), relative to a directory,
// cut to the buffer and always NUL-terminated; refusal of what is not a regular file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "heap/platform/SmallFile.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(SmallFileTest, ReadsTheWholeFileAndTerminatesIt) {
  TempDir dir;
  WriteFile(dir.Path("f"), "12345\n");
  char buffer[64];
  memset(buffer, 'x', sizeof(buffer));
  EXPECT_EQ(6, SmallFile::Read(dir.Path("f").c_str(), buffer, sizeof(buffer)));
  EXPECT_STREQ("12345\n", buffer);
}

TEST(SmallFileTest, ReadsRelativeToADirectory) {
  TempDir dir;
  WriteFile(dir.Path("memory.max"), "max\n");
  char buffer[16];
  EXPECT_EQ(4, SmallFile::Read(dir.fd(), "memory.max", buffer, sizeof(buffer)));
  EXPECT_STREQ("max\n", buffer);
}

TEST(SmallFileTest, CutsToTheBufferLessOne) {
  TempDir dir;
  WriteFile(dir.Path("f"), "abcdefgh");
  char buffer[4];
  EXPECT_EQ(3, SmallFile::Read(dir.Path("f").c_str(), buffer, sizeof(buffer)));
  EXPECT_STREQ("abc", buffer);
}

TEST(SmallFileTest, EmptyFileIsZeroBytes) {
  TempDir dir;
  WriteFile(dir.Path("empty"), "");
  char buffer[8] = "junk";
  EXPECT_EQ(0, SmallFile::Read(dir.Path("empty").c_str(), buffer, sizeof(buffer)));
  EXPECT_STREQ("", buffer);
}

// procfs serves /proc/self/maps a page or less per read: all of it must still come.
TEST(SmallFileTest, ReadsProcFilesLongerThanOneRead) {
  std::ifstream in("/proc/self/maps");
  std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(whole.size(), 4096u) << "a test binary maps more than that";
  std::string buffer(whole.size() + 4096, '\0');
  ssize_t n = SmallFile::Read("/proc/self/maps", buffer.data(), buffer.size());
  ASSERT_GT(n, 4096);
  // The maps may change between the two reads (ASan, threads); their first lines do not.
  EXPECT_EQ(whole.substr(0, 200), buffer.substr(0, 200));
}

TEST(SmallFileTest, RefusesMissingFilesDirectoriesAndFifos) {
  TempDir dir;
  ASSERT_EQ(0, mkfifo(dir.Path("fifo").c_str(), 0600));  // would block a blocking open
  char buffer[8] = "junk";
  EXPECT_EQ(-1, SmallFile::Read(dir.Path("missing").c_str(), buffer, sizeof(buffer)));
  EXPECT_STREQ("", buffer);
  strcpy(buffer, "junk");
  EXPECT_EQ(-1, SmallFile::Read(dir.path().c_str(), buffer, sizeof(buffer)));
  EXPECT_STREQ("", buffer);
  strcpy(buffer, "junk");
  EXPECT_EQ(-1, SmallFile::Read(dir.fd(), "fifo", buffer, sizeof(buffer)));
  EXPECT_STREQ("", buffer);
}

TEST(SmallFileTest, ZeroSizedBufferIsRefusedUntouched) {
  char byte = 'x';
  EXPECT_EQ(-1, SmallFile::Read("/proc/self/stat", &byte, 0));
  EXPECT_EQ('x', byte);
}

}  // namespace
}  // namespace heapgraph
