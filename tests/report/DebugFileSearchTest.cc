// DebugFileSearch on the symbolizer fixture (tests/report/CMakeLists.txt): the library, its
// stripped copy and its separate debug file share one build-id; the test binary itself is "another
// build".
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/DebugFileSearch.h"
#include "tests/ShellCommand.h"
#include "tests/TempDir.h"
#include "tests/report/SymbolizerFixtureFiles.h"

namespace heapgraph::report {
namespace {

namespace fs = std::filesystem;

class DebugFileSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    build_id_ = ElfBuildId(kFixture);
    ASSERT_GT(build_id_.size(), 2u);
    other_build_ = fs::read_symlink("/proc/self/exe");
    module_ = Copy(kStripped, "lib/libfixture.so");
  }

  // Copies `from` to <temp>/`to`, making its directories.
  std::string Copy(const std::string& from, const std::string& to) {
    std::string path = temp_.Path(to);
    fs::create_directories(fs::path(path).parent_path());
    fs::copy_file(from, path, fs::copy_options::overwrite_existing);
    return path;
  }
  std::string ByIdPath(const std::string& dir) {
    return dir + "/.build-id/" + build_id_.substr(0, 2) + "/" + build_id_.substr(2) + ".debug";
  }
  DebugFileSearch Search(std::vector<std::string> dirs, std::string system_dir = "") {
    return DebugFileSearch(
        {.debug_dirs = std::move(dirs), .system_dir = std::move(system_dir), .debuginfod = false});
  }

  TempDir temp_;
  std::string build_id_;
  std::string other_build_;
  std::string module_;
};

TEST_F(DebugFileSearchTest, ElfBuildIdIsTheNoteReadelfShows) {
  std::string notes;
  ASSERT_EQ(shell::RunShellCommand(std::string("readelf -n ") + kFixture, &notes), 0);
  EXPECT_NE(notes.find("Build ID: " + build_id_), std::string::npos) << notes;
  EXPECT_EQ(ElfBuildId(kStripped), build_id_);
  EXPECT_EQ(ElfBuildId(kSplitDebug), build_id_);
  EXPECT_NE(ElfBuildId(other_build_), build_id_);
  std::ofstream(temp_.Path("text")) << "not an ELF file\n";
  EXPECT_EQ(ElfBuildId(temp_.Path("text")), "");
  EXPECT_EQ(ElfBuildId(temp_.Path("missing")), "");
}

TEST_F(DebugFileSearchTest, ADebugDirsBuildIdLayoutComesBeforeTheModule) {
  // Also a flat candidate later in the same dir: the build-id layout wins.
  Copy(kFixture, "debug/libfixture.so");
  std::string debug = Copy(kSplitDebug, ByIdPath("debug"));
  DebugFileSearch search = Search({temp_.Path("missing"), temp_.Path("debug")});
  EXPECT_EQ(search.Find(module_, build_id_), debug);
  EXPECT_EQ(search.warnings().size(), 1u);  // the missing dir only
}

TEST_F(DebugFileSearchTest, AFlatDebugDirIsSearchedByTheModulesName) {
  std::string by_debug_name = Copy(kSplitDebug, "flat/libfixture.so.debug");
  EXPECT_EQ(Search({temp_.Path("flat")}).Find(module_, build_id_), by_debug_name);
  std::string by_name = Copy(kFixture, "flat2/libfixture.so");
  EXPECT_EQ(Search({temp_.Path("flat2")}).Find(module_, build_id_), by_name);
}

TEST_F(DebugFileSearchTest, TheSystemDebugTreeIsSearchedByBuildId) {
  std::string debug = Copy(kSplitDebug, ByIdPath("usr-lib-debug"));
  fs::remove(module_);  // rendered on another machine: the module is not there
  DebugFileSearch search = Search({}, temp_.Path("usr-lib-debug"));
  EXPECT_EQ(search.Find(module_, build_id_), debug);
  EXPECT_TRUE(search.warnings().empty());
}

TEST_F(DebugFileSearchTest, TheModuleItselfWhenNothingElseHasItsBuild) {
  DebugFileSearch search = Search({temp_.Path("none")});
  EXPECT_EQ(search.Find(module_, build_id_), module_);
  fs::remove(module_);
  EXPECT_EQ(Search({}).Find(module_, build_id_), std::nullopt);
}

TEST_F(DebugFileSearchTest, AFileOfAnotherBuildIsRefusedWithOneWarning) {
  Copy(other_build_, "other/libfixture.so.debug");
  DebugFileSearch search = Search({temp_.Path("other")});
  EXPECT_EQ(search.Find(module_, build_id_), module_);
  EXPECT_EQ(search.Find(module_, build_id_), module_);
  EXPECT_EQ(search.Find(module_ + "2", build_id_), std::nullopt);  // same candidate, other module
  ASSERT_EQ(search.warnings().size(), 1u);
  EXPECT_EQ(search.warnings()[0],
            temp_.Path("other/libfixture.so.debug") + ": build-id " + ElfBuildId(other_build_) +
                ", the recording's libfixture.so had " + build_id_ + ": its symbols are not used");
}

TEST_F(DebugFileSearchTest, AModuleRebuiltSinceTheRecordingLendsNoNames) {
  std::string rebuilt = Copy(other_build_, "lib/librebuilt.so");
  DebugFileSearch search = Search({});
  EXPECT_EQ(search.Find(rebuilt, build_id_), std::nullopt);
  ASSERT_EQ(search.warnings().size(), 1u);
  EXPECT_NE(search.warnings()[0].find(rebuilt + ": build-id "), std::string::npos);
}

TEST_F(DebugFileSearchTest, WithoutARecordedBuildIdOnlyTheModuleIsUsed) {
  Copy(kSplitDebug, "flat/libfixture.so.debug");
  EXPECT_EQ(Search({temp_.Path("flat")}).Find(module_, ""), module_);
  EXPECT_EQ(Search({}).Find("", ""), std::nullopt);
}

TEST_F(DebugFileSearchTest, AMissingDebugDirIsOneWarningAndTheSearchGoesOn) {
  DebugFileSearch search = Search({temp_.Path("missing")});
  ASSERT_EQ(search.warnings().size(), 1u);
  EXPECT_EQ(search.warnings()[0], "--debug-dir " + temp_.Path("missing") + ": no such directory");
  EXPECT_EQ(search.Find(module_, build_id_), module_);
}

TEST_F(DebugFileSearchTest, AFifoCandidateIsRefusedWithoutBlocking) {
  fs::create_directories(temp_.Path("fifo"));
  ASSERT_EQ(mkfifo(temp_.Path("fifo/libfixture.so.debug").c_str(), 0600), 0);
  DebugFileSearch search = Search({temp_.Path("fifo")});
  EXPECT_EQ(search.Find(module_, build_id_), module_);
  ASSERT_EQ(search.warnings().size(), 1u);
  EXPECT_NE(search.warnings()[0].find("not a regular file"), std::string::npos)
      << search.warnings()[0];
}

}  // namespace
}  // namespace heapgraph::report
