#include "gtest/LeakCheckListener.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace heapgraph::gtest {
namespace {

constexpr char kCheckpoint[] = "heapgraph_gtest";
constexpr int kReportLines = 60;  // at most, of the text report's records, in the failure message

// The current test's marks (the macros run on the test's thread, between start and end).
bool g_skip_current = false;
unsigned long long g_expected_current = 0;

std::string FullName(const testing::TestInfo& test) {
  return std::string(test.test_suite_name()) + "." + test.name();
}

// A file name from a test name: characters other than [A-Za-z0-9._-] become '_' (parameterized
// tests have '/').
std::string FileName(const std::string& name) {
  std::string file = name;
  for (char& c : file) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
    if (!plain) c = '_';
  }
  return file;
}

// The leak records of a text report: its first lines, up to the category table.
std::string LeakRecords(const std::string& path, int lines) {
  std::ifstream in(path);
  std::string line, text;
  for (int i = 0; i < lines && std::getline(in, line) && line != "Categories:"; ++i) {
    text += line + "\n";
  }
  return text;
}

// Zeroes 64 KiB of stack below the caller. The test body's frames were there; the check's frames
// (and its caller's uninitialized slots) laid over them would keep stale copies of the test's
// pointers, which the check scans as the program's stack: yaml-cpp's forgotten YAML::Node stayed
// reachable from such a slot 0x2b8 bytes above the check until this was done.
__attribute__((noinline)) void ScrubDeadFrames() {
  constexpr size_t kBytes = 64 << 10;
  char area[kBytes];
  __builtin_memset(area, 0, kBytes);
  asm volatile("" : : "r"(area) : "memory");
}

}  // namespace

LeakCheckListener::LeakCheckListener(const LeakCheckApi& api, std::string report_dir,
                                     const std::string& skip, int first_checked_iteration)
    : api_(api),
      report_dir_(std::move(report_dir)),
      first_checked_iteration_(first_checked_iteration) {
  std::stringstream names(skip);
  for (std::string name; std::getline(names, name, ':');) {
    if (!name.empty()) skip_.insert(name);
  }
  mkdir(report_dir_.c_str(), 0700);
  const char* verbose = std::getenv("HEAPGRAPH_GTEST_VERBOSE");
  verbose_ = verbose != nullptr && verbose[0] == '1';
}

void LeakCheckListener::SkipCurrent() {
  g_skip_current = true;
}

void LeakCheckListener::ExpectCurrent(unsigned long long blocks) {
  g_expected_current = blocks;
}

void LeakCheckListener::OnTestIterationStart(const testing::UnitTest&, int iteration) {
  checking_iteration_ = iteration >= first_checked_iteration_;
}

bool LeakCheckListener::Checked(const testing::TestInfo& test) const {
  return checking_iteration_ && !g_skip_current && !test.result()->Skipped() &&
         skip_.count(test.test_suite_name()) == 0 && skip_.count(FullName(test)) == 0;
}

void LeakCheckListener::OnTestStart(const testing::TestInfo& test) {
  g_skip_current = false;
  g_expected_current = 0;
  // Before the checkpoint: the check's own strings are then no live blocks of the test's window,
  // and a test that frees what it allocated is checked without a scan.
  name_ = FullName(test);
  const std::string base = report_dir_ + "/" + FileName(name_);
  json_path_ = base + ".json";
  text_path_ = base + ".txt";
  api_.Checkpoint(kCheckpoint);
}

void LeakCheckListener::OnTestEnd(const testing::TestInfo& test) {
  if (!Checked(test)) return;
  ScrubDeadFrames();
  CheckTest();  // its frame on the zeroed stack
}

void LeakCheckListener::CheckTest() {
  const std::string& name = name_;
  const std::string& text = text_path_;
  heapgraph_leak_summary summary{};
  int leaked = api_.CheckSince(kCheckpoint, json_path_.c_str(), text.c_str(), &summary);
  if (verbose_) {
    std::fprintf(stderr, "heapgraph: %s: %d leaked, %llu live blocks, check %.1f ms\n",
                 name.c_str(), leaked, summary.live_blocks, summary.total_ms);
  }
  if (leaked < 0) {
    ADD_FAILURE() << "heapgraph: the leak check of " << name << " could not run: " << summary.error;
  } else if (static_cast<unsigned long long>(leaked) > g_expected_current) {
    Fail(name, leaked, text);
  }
}

void LeakCheckListener::Fail(const std::string& name, int leaked,
                             const std::string& text_path) const {
  ADD_FAILURE() << "heapgraph: " << name << " leaked " << leaked << " block(s)"
                << (g_expected_current != 0
                        ? " (HEAPGRAPH_EXPECT_N_LEAKS(" + std::to_string(g_expected_current) + "))"
                        : std::string())
                << "; report " << text_path << " (and .json)\n"
                << LeakRecords(text_path, kReportLines);
}

}  // namespace heapgraph::gtest
