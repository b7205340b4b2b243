// tests/check: ReportFile on real files (issue 12, item 12): a new report is 0600 whatever the
// umask, an existing one is replaced by a new 0600 file, a symbolic link is neither followed nor
// replaced (one line says why), /dev/null is written, a FIFO is refused without blocking.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "check/ReportFile.h"
#include "tests/TempDir.h"

namespace heapgraph::report {
namespace {

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

// The names in `dir`, to see that no temporary file is left behind.
size_t EntryCount(const TempDir& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++n;
  return n;
}

TEST(ReportFileTest, NewAndReplacedReportsAre0600WhateverTheUmask) {
  TempDir dir;
  mode_t old = umask(022);
  std::string error;
  EXPECT_TRUE(ReportFile::Write(dir.Path("r.json"), "one", &error)) << error;
  EXPECT_EQ(Contents(dir.Path("r.json")), "one");
  EXPECT_EQ(ModeOf(dir.Path("r.json")), 0600u);
  std::ofstream(dir.Path("old.txt")) << "a longer old report";
  chmod(dir.Path("old.txt").c_str(), 0644);
  EXPECT_TRUE(ReportFile::Write(dir.Path("old.txt"), "new", &error)) << error;
  umask(old);
  EXPECT_EQ(Contents(dir.Path("old.txt")), "new");
  EXPECT_EQ(ModeOf(dir.Path("old.txt")), 0600u);
  EXPECT_EQ(EntryCount(dir), 2u);
}

TEST(ReportFileTest, SymbolicLinkIsNeitherFollowedNorReplaced) {
  TempDir dir;
  std::ofstream(dir.Path("victim")) << "precious";
  std::filesystem::create_symlink(dir.Path("victim"), dir.Path("leaks.json"));
  std::string error;
  EXPECT_FALSE(ReportFile::Write(dir.Path("leaks.json"), "report", &error));
  EXPECT_EQ(error,
            "cannot write " + dir.Path("leaks.json") + ": is a symbolic link (not followed)");
  EXPECT_EQ(Contents(dir.Path("victim")), "precious");
  EXPECT_TRUE(std::filesystem::is_symlink(dir.Path("leaks.json")));
  // A dangling link would have created its target.
  std::filesystem::create_symlink(dir.Path("created"), dir.Path("dangling.json"));
  EXPECT_FALSE(ReportFile::Write(dir.Path("dangling.json"), "report", &error));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("created")));
  EXPECT_EQ(EntryCount(dir), 3u);
}

TEST(ReportFileTest, CharacterDeviceIsWrittenAndAFifoRefusedWithoutBlocking) {
  TempDir dir;
  std::string error;
  EXPECT_TRUE(ReportFile::Write("/dev/null", "report", &error)) << error;
  ASSERT_EQ(mkfifo(dir.Path("fifo").c_str(), 0600), 0);
  const std::string refused = ": not a regular file or a character device (refused)";
  EXPECT_FALSE(ReportFile::Write(dir.Path("fifo"), "report", &error));
  EXPECT_EQ(error, "cannot write " + dir.Path("fifo") + refused);
  EXPECT_FALSE(ReportFile::Write(dir.path(), "report", &error));  // a directory
  EXPECT_EQ(error, "cannot write " + dir.path() + refused);
  EXPECT_EQ(EntryCount(dir), 1u);
}

TEST(ReportFileTest, MissingDirectoryIsOneLine) {
  TempDir dir;
  std::string error;
  EXPECT_FALSE(ReportFile::Write(dir.Path("no/such/dir/r.json"), "report", &error));
  EXPECT_EQ(error,
            "cannot write " + dir.Path("no/such/dir/r.json") + ": No such file or directory");
}

}  // namespace
}  // namespace heapgraph::report
