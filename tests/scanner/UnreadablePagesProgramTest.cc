// tests/scanner: a leak check survives memory that faults when read (issue 12, item 4), in real
// programs with real threads: tests/programs/unreadable_pages (a PROT_NONE or MADV_GUARD_INSTALL
// page inside a live block, an mmap'd chunk or a memalign'd brk block; guard pages inside an rw
// root mapping; a private file mapping whose file was truncated) and LeakSanitizer's
// Linux/leak_check_segv shape under `heapgraph run` (tests/programs/leak_check_segv). Before
// scanner/UnreadablePages every one of them failed the check ("the snapshot process wrote no
// result (killed by signal 11/7)", "the marking helper process died"). Each check must now give
// the exact leaks, find the block referenced only from past the faulting page (and the one
// referenced only from inside a PROT_NONE page of a block: its real contents are read), and
// count the faulting pages.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/ShellCommand.h"
#include "tests/TempDir.h"

namespace {

const std::string kProgramDir = HEAPGRAPH_PROGRAM_DIR;

struct UnreadableOutcome {
  int status = -1;
  std::string out;
  int ok = -1;
  size_t leaked = 0, kept_leaked = 0, hidden_leaked = 0, big_leaked = 0;
  unsigned long long unreadable = 0;
  bool skipped = false;
};

UnreadableOutcome RunUnreadableChild(const std::string& mode) {
  heapgraph::TempDir root;
  UnreadableOutcome o;
  o.status = heapgraph::shell::RunShellCommand("HEAPGRAPH_OPTIONS=dir=" + root.path() +
                                                   " TMPDIR=" + root.path() + " " + kProgramDir +
                                                   "/unreadable_pages " + mode + " 2>/dev/null",
                                               &o.out);
  o.skipped = o.out.rfind("skip=", 0) == 0;
  std::sscanf(o.out.c_str(),
              "ok=%d leaked=%zu kept_leaked=%zu hidden_leaked=%zu big_leaked=%zu unreadable=%llu",
              &o.ok, &o.leaked, &o.kept_leaked, &o.hidden_leaked, &o.big_leaked, &o.unreadable);
  return o;
}

// The verdict is exact and the scan went on past the faulting memory.
void ExpectNormalCheck(const UnreadableOutcome& o, size_t big_leaked,
                       unsigned long long unreadable) {
  ASSERT_EQ(o.status, 0) << o.out;
  ASSERT_EQ(o.ok, 1) << o.out;
  EXPECT_EQ(o.leaked, 7u) << o.out;
  EXPECT_EQ(o.kept_leaked, 0u) << o.out;    // referenced only from past the faulting page
  EXPECT_EQ(o.hidden_leaked, 0u) << o.out;  // only from inside a PROT_NONE page of a block
  EXPECT_EQ(o.big_leaked, big_leaked) << o.out;
  EXPECT_EQ(o.unreadable, unreadable) << o.out;
}

TEST(UnreadablePagesProgramTest, ProtNonePageInsideMmappedBlocks) {
  // One page in the reachable holder, one in the leaked big block (read for the leak graph).
  ExpectNormalCheck(RunUnreadableChild("mmap_block"), 1, 2);
}

TEST(UnreadablePagesProgramTest, ProtNonePageInsideMemalignedBrkBlock) {
  ExpectNormalCheck(RunUnreadableChild("brk_block"), 0, 1);
}

TEST(UnreadablePagesProgramTest, GuardPagesInsideMmappedBlocks) {
  UnreadableOutcome o = RunUnreadableChild("guard_block");
  if (o.skipped) GTEST_SKIP() << o.out;
  ExpectNormalCheck(o, 1, 2);
}

TEST(UnreadablePagesProgramTest, GuardPagesInsideAnRwRootMapping) {
  UnreadableOutcome o = RunUnreadableChild("guard_root");
  if (o.skipped) GTEST_SKIP() << o.out;
  ExpectNormalCheck(o, 0, 2);
}

// Asked to scan in place (a repeated check's way), a program whose block has a PROT_NONE page: the
// page ends the scan's helper task, not the program; the scan runs again with a snapshot process
// (exact, the page read there) and so does the next one.
TEST(UnreadablePagesProgramTest, ScanInPlaceFallsBackToASnapshotOnAFaultingPage) {
  UnreadableOutcome o = RunUnreadableChild("mmap_block in_place");
  ExpectNormalCheck(o, 1, 2);
  EXPECT_NE(o.out.find(" in_place=0 fell_back=1 again_ok=1 again_in_place=0 again_leaked=7"),
            std::string::npos)
      << o.out;
}

TEST(UnreadablePagesProgramTest, PrivateMappingOfATruncatedFile) {
  // Pages 1..255 lie past the end of the file (SIGBUS).
  ExpectNormalCheck(RunUnreadableChild("file_root"), 0, 255);
}

// LeakSanitizer dies on this program ("Tracer caught signal 11"); `heapgraph run` reports its 3
// leaks, exits with the leak status and counts the 4 pages of the block it could not read (the
// global's PROT_NONE pages are a mapping of their own, never read).
TEST(UnreadablePagesProgramTest, LeakSanitizersLeakCheckSegvShapeGivesANormalReport) {
  heapgraph::TempDir dir;
  std::string json_path = dir.Path("report.json"), text_path = dir.Path("report.txt");
  std::string out;
  int status = heapgraph::shell::RunShellCommand(
      "TMPDIR=" + dir.path() + " " + std::string(HEAPGRAPH_CLI) + " run --json " + json_path +
          " --text " + text_path + " -- " + kProgramDir + "/leak_check_segv 2>/dev/null",
      &out);
  std::ifstream json_file(json_path), text_file(text_path);
  std::stringstream json_text, text;
  json_text << json_file.rdbuf();
  text << text_file.rdbuf();
  EXPECT_EQ(status, 23) << text.str();  // leaks found
  nlohmann::json report = nlohmann::json::parse(json_text.str(), nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << json_text.str();
  const nlohmann::json& scan = report["scan"];
  ASSERT_TRUE(scan.value("ok", false)) << scan.dump();
  EXPECT_EQ(scan.value("unreadable_pages", 0), 4) << scan.dump();
  EXPECT_EQ(report["summary"].value("direct_blocks", 0), 3) << report["summary"].dump();
  EXPECT_EQ(report["summary"].value("leaked_bytes", 0), 3 * 2720) << report["summary"].dump();
  EXPECT_NE(text.str().find("4 unreadable page(s)."), std::string::npos) << text.str();
}

}  // namespace
