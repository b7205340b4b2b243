// tests/heap: LargeAllocationMonitor: threshold edge cases, the exact log record (header line plus
// one "module+offset (build-id)" line per frame), the log file, stderr fallback and the callback.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "heap/runtime/LargeAllocationMonitor.h"
#include "heap/store/ModuleMap.h"
#include "heap/store/PersistedFormat.h"
#include "tests/StderrCapture.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

using format::AllocFunction;

std::string ReadFile(const std::string& path) {
  std::string text;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) text.append(buffer, size_t(n));
  close(fd);
  return text;
}

void WriteFile(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ssize_t(text.size()), write(fd, text.data(), text.size()));
  close(fd);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  EXPECT_EQ(text.size(), start) << "unterminated last line";
  return lines;
}

__attribute__((noinline)) int FunctionInTheTest(int x) {
  return x + 1;
}

std::string Hex(uint64_t value) {
  char text[32];
  snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string HexBytes(const uint8_t* bytes, uint32_t count) {
  std::string text;
  char byte[3];
  for (uint32_t i = 0; i < count; ++i) {
    snprintf(byte, sizeof(byte), "%02x", bytes[i]);
    text += byte;
  }
  return text;
}

// The frame line LargeAllocationMonitor must print for `frame`, from the module map's record.
std::string ExpectedFrameLine(uint32_t index, uintptr_t frame, const ModuleMap& modules) {
  std::string line = "    #" + std::to_string(index) + " " + Hex(frame) + " ";
  const format::ModuleRecord* m = modules.Find(frame);
  if (m == nullptr) return line + "<unknown module>";
  line += std::filesystem::path(m->path).filename().string() + "+" + Hex(frame - m->load_bias);
  if (m->build_id_len != 0) line += " (build-id " + HexBytes(m->build_id, m->build_id_len) + ")";
  return line;
}

std::string ExpectedHeader(uint64_t size, const char* function, const void* address) {
  return "heapgraph: large allocation of " + std::to_string(size) + " bytes by " + function +
         " at " + Hex(reinterpret_cast<uintptr_t>(address)) + " (thread " +
         std::to_string(syscall(SYS_gettid)) + ")";
}

class LargeAllocationMonitorTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(modules_.Create(dir_.fd(), format::kModuleFile));
    log_ = dir_.Path("large.log");
  }

  TempDir dir_;
  ModuleMap modules_;
  std::string log_;
  LargeAllocationMonitor monitor_;
};

void* const kBlock = reinterpret_cast<void*>(uintptr_t{0x7f12'3456'7890});

TEST_F(LargeAllocationMonitorTest, DisabledUntilConfigured) {
  EXPECT_FALSE(monitor_.IsLarge(0));
  EXPECT_FALSE(monitor_.IsLarge(UINT64_MAX));
  EXPECT_EQ(0u, monitor_.reported());
}

TEST_F(LargeAllocationMonitorTest, ThresholdIsInclusive) {
  monitor_.Configure(100, "");
  EXPECT_FALSE(monitor_.IsLarge(0));
  EXPECT_FALSE(monitor_.IsLarge(99));
  EXPECT_TRUE(monitor_.IsLarge(100));
  EXPECT_TRUE(monitor_.IsLarge(101));
  EXPECT_TRUE(monitor_.IsLarge(UINT64_MAX));
}

TEST_F(LargeAllocationMonitorTest, ZeroThresholdDisables) {
  monitor_.Configure(0, "");
  EXPECT_FALSE(monitor_.IsLarge(0));
  EXPECT_FALSE(monitor_.IsLarge(UINT64_MAX));
  monitor_.set_threshold(8 << 20);
  EXPECT_TRUE(monitor_.IsLarge(8 << 20));
  monitor_.set_threshold(0);
  EXPECT_FALSE(monitor_.IsLarge(UINT64_MAX));
}

TEST_F(LargeAllocationMonitorTest, ExtremeThresholds) {
  monitor_.set_threshold(1);
  EXPECT_FALSE(monitor_.IsLarge(0));
  EXPECT_TRUE(monitor_.IsLarge(1));
  monitor_.set_threshold(UINT64_MAX);
  EXPECT_FALSE(monitor_.IsLarge(UINT64_MAX - 1));
  EXPECT_TRUE(monitor_.IsLarge(UINT64_MAX));
}

TEST_F(LargeAllocationMonitorTest, ReportLogsAHeaderAndOneLinePerFrame) {
  monitor_.Configure(1 << 20, log_.c_str());
  const uintptr_t frames[] = {reinterpret_cast<uintptr_t>(&FunctionInTheTest) + 4,
                              reinterpret_cast<uintptr_t>(&getpid) + 1, 0x10};
  modules_.Learn(frames, 3);
  ASSERT_NE(nullptr, modules_.Find(frames[0]));
  ASSERT_NE(nullptr, modules_.Find(frames[1]));
  monitor_.Report(kBlock, 8 << 20, AllocFunction::kMalloc, frames, 3, &modules_);

  std::vector<std::string> lines = Lines(ReadFile(log_));
  ASSERT_EQ(4u, lines.size());
  EXPECT_EQ(ExpectedHeader(8 << 20, "malloc", kBlock), lines[0]);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ExpectedFrameLine(i, frames[i], modules_), lines[i + 1]);
  }

  // Spelled out once, independently of the helper above.
  const format::ModuleRecord* exe = modules_.Find(frames[0]);
  const std::string exe_name = std::filesystem::read_symlink("/proc/self/exe").filename();
  EXPECT_EQ(0u, lines[1].rfind("    #0 " + Hex(frames[0]) + " " + exe_name + "+0x", 0)) << lines[1];
  ASSERT_NE(0u, exe->build_id_len);
  EXPECT_NE(std::string::npos,
            lines[1].find(" (build-id " + HexBytes(exe->build_id, exe->build_id_len) + ")"));
  EXPECT_EQ(0u, lines[2].rfind("    #1 " + Hex(frames[1]) + " libc.so.6+0x", 0)) << lines[2];
  EXPECT_EQ("    #2 0x10 <unknown module>", lines[3]);
  EXPECT_EQ(1u, monitor_.reported());
}

TEST_F(LargeAllocationMonitorTest, WithoutAModuleMapEveryFrameIsUnknown) {
  monitor_.Configure(1, log_.c_str());
  const uintptr_t frames[] = {reinterpret_cast<uintptr_t>(&FunctionInTheTest)};
  monitor_.Report(kBlock, 5, AllocFunction::kCalloc, frames, 1, nullptr);
  std::vector<std::string> lines = Lines(ReadFile(log_));
  ASSERT_EQ(2u, lines.size());
  EXPECT_EQ("    #0 " + Hex(frames[0]) + " <unknown module>", lines[1]);
}

TEST_F(LargeAllocationMonitorTest, NoFramesGivesOnlyTheHeader) {
  monitor_.Configure(1, log_.c_str());
  monitor_.Report(kBlock, 5, AllocFunction::kMmap, nullptr, 0, &modules_);
  std::vector<std::string> lines = Lines(ReadFile(log_));
  ASSERT_EQ(1u, lines.size());
  EXPECT_EQ(ExpectedHeader(5, "mmap", kBlock), lines[0]);
}

TEST_F(LargeAllocationMonitorTest, HeaderNamesTheAllocationFunction) {
  monitor_.Configure(1, log_.c_str());
  const std::vector<std::pair<AllocFunction, const char*>> names = {
      {AllocFunction::kMalloc, "malloc"},
      {AllocFunction::kCalloc, "calloc"},
      {AllocFunction::kRealloc, "realloc"},
      {AllocFunction::kReallocArray, "reallocarray"},
      {AllocFunction::kMemalign, "memalign"},
      {AllocFunction::kPosixMemalign, "posix_memalign"},
      {AllocFunction::kAlignedAlloc, "aligned_alloc"},
      {AllocFunction::kValloc, "valloc"},
      {AllocFunction::kPvalloc, "pvalloc"},
      {AllocFunction::kMmap, "mmap"},
      {AllocFunction::kMremap, "mremap"},
  };
  for (const auto& [function, name] : names) {
    EXPECT_STREQ(name, AllocFunctionName(function));
    monitor_.Report(kBlock, 1 << 30, function, nullptr, 0, nullptr);
  }
  EXPECT_STREQ("?", AllocFunctionName(AllocFunction::kNone));
  std::vector<std::string> lines = Lines(ReadFile(log_));
  ASSERT_EQ(names.size(), lines.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(ExpectedHeader(1 << 30, names[i].second, kBlock), lines[i]);
  }
  EXPECT_EQ(names.size(), monitor_.reported());
}

TEST_F(LargeAllocationMonitorTest, LogIsAppendedToAndCreatedPrivate) {
  ASSERT_NO_FATAL_FAILURE(WriteFile(log_, "earlier line\n"));
  monitor_.Configure(1, log_.c_str());
  monitor_.Report(kBlock, 7, AllocFunction::kMalloc, nullptr, 0, nullptr);
  std::vector<std::string> lines = Lines(ReadFile(log_));
  ASSERT_EQ(2u, lines.size());
  EXPECT_EQ("earlier line", lines[0]);

  LargeAllocationMonitor other;
  const std::string fresh = dir_.Path("fresh.log");
  other.Configure(1, fresh.c_str());
  struct stat st;
  ASSERT_EQ(0, stat(fresh.c_str(), &st));
  EXPECT_EQ(0600u, st.st_mode & 07777);
}

// The recording directory's large.log exists only once something was logged; the monitor keeps
// its own descriptor of the directory, so the caller's may be closed meanwhile.
TEST_F(LargeAllocationMonitorTest, DefaultLogIsCreatedByTheFirstRecordOnly) {
  int dir_fd = open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir_fd, 0);
  monitor_.Configure(1, "", dir_fd);
  close(dir_fd);
  struct stat st;
  EXPECT_NE(0, stat(log_.c_str(), &st)) << "created before anything was logged";
  {
    StderrCapture capture;
    monitor_.Report(kBlock, 5, AllocFunction::kMalloc, nullptr, 0, nullptr);
    monitor_.Report(kBlock, 6, AllocFunction::kMalloc, nullptr, 0, nullptr);
    EXPECT_EQ("", capture.Text());
  }
  ASSERT_EQ(0, stat(log_.c_str(), &st));
  EXPECT_EQ(0600u, st.st_mode & 07777);
  std::vector<std::string> lines = Lines(ReadFile(log_));
  ASSERT_EQ(2u, lines.size());
  EXPECT_EQ(ExpectedHeader(5, "malloc", kBlock), lines[0]);
  EXPECT_EQ(ExpectedHeader(6, "malloc", kBlock), lines[1]);
}

TEST_F(LargeAllocationMonitorTest, DefaultLogWithoutADirectoryGoesToStderr) {
  monitor_.Configure(1, "", -1);
  StderrCapture capture;
  monitor_.Report(kBlock, 3, AllocFunction::kMalloc, nullptr, 0, nullptr);
  std::vector<std::string> lines = Lines(capture.Text());
  ASSERT_EQ(1u, lines.size());
  EXPECT_EQ(ExpectedHeader(3, "malloc", kBlock), lines[0]);
}

TEST_F(LargeAllocationMonitorTest, EmptyLogPathMeansStderr) {
  monitor_.Configure(1, "");
  StderrCapture capture;
  monitor_.Report(kBlock, 3, AllocFunction::kMalloc, nullptr, 0, nullptr);
  std::vector<std::string> lines = Lines(capture.Text());
  ASSERT_EQ(1u, lines.size());
  EXPECT_EQ(ExpectedHeader(3, "malloc", kBlock), lines[0]);
}

TEST_F(LargeAllocationMonitorTest, UnopenableLogFallsBackToStderrWithOneLine) {
  std::string configure_output;
  {
    StderrCapture capture;
    monitor_.Configure(1, dir_.Path("missing-dir/large.log").c_str());
    configure_output = capture.Text();
  }
  std::vector<std::string> lines = Lines(configure_output);
  ASSERT_EQ(1u, lines.size()) << configure_output;
  EXPECT_EQ(0u, lines[0].rfind("heapgraph: cannot open large_log ", 0)) << lines[0];
  EXPECT_NE(std::string::npos, lines[0].find("; logging to stderr")) << lines[0];

  StderrCapture capture;
  monitor_.Report(kBlock, 3, AllocFunction::kMalloc, nullptr, 0, nullptr);
  lines = Lines(capture.Text());
  ASSERT_EQ(1u, lines.size());
  EXPECT_EQ(ExpectedHeader(3, "malloc", kBlock), lines[0]);
}

TEST_F(LargeAllocationMonitorTest, SymlinkedLogIsRefused) {
  const std::string target = dir_.Path("target");
  ASSERT_NO_FATAL_FAILURE(WriteFile(target, "precious\n"));
  ASSERT_EQ(0, symlink(target.c_str(), log_.c_str()));
  {
    StderrCapture capture;
    monitor_.Configure(1, log_.c_str());
    EXPECT_EQ(1u, Lines(capture.Text()).size());
  }
  StderrCapture capture;
  monitor_.Report(kBlock, 3, AllocFunction::kMalloc, nullptr, 0, nullptr);
  EXPECT_EQ(1u, Lines(capture.Text()).size());
  EXPECT_EQ("precious\n", ReadFile(target));
}

struct Captured {
  int calls = 0;
  void* address = nullptr;
  size_t size = 0;
  std::vector<uintptr_t> frames;
  void* user_data = nullptr;
  size_t log_lines_at_call = 0;
  std::string log;
};

void Capture(void* address, size_t size, const uintptr_t* frames, size_t depth, void* user) {
  auto* c = static_cast<Captured*>(user);
  ++c->calls;
  c->address = address;
  c->size = size;
  c->frames.assign(frames, frames + depth);
  c->user_data = user;
  c->log_lines_at_call = Lines(ReadFile(c->log)).size();
}

TEST_F(LargeAllocationMonitorTest, CallbackGetsAddressSizeAndFramesAfterTheLog) {
  monitor_.Configure(1, log_.c_str());
  Captured captured;
  captured.log = log_;
  monitor_.SetCallback(&Capture, &captured);
  const uintptr_t frames[] = {0x5555'0000'1000, 0x5555'0000'2000};
  monitor_.Report(kBlock, 12345, AllocFunction::kRealloc, frames, 2, &modules_);
  EXPECT_EQ(1, captured.calls);
  EXPECT_EQ(kBlock, captured.address);
  EXPECT_EQ(12345u, captured.size);
  EXPECT_EQ((std::vector<uintptr_t>{0x5555'0000'1000, 0x5555'0000'2000}), captured.frames);
  EXPECT_EQ(&captured, captured.user_data);
  EXPECT_EQ(3u, captured.log_lines_at_call) << "the record is logged before the callback runs";
}

TEST_F(LargeAllocationMonitorTest, ClearedCallbackIsNotCalled) {
  monitor_.Configure(1, log_.c_str());
  Captured captured;
  captured.log = log_;
  monitor_.SetCallback(&Capture, &captured);
  monitor_.SetCallback(nullptr, nullptr);
  monitor_.Report(kBlock, 1, AllocFunction::kMalloc, nullptr, 0, nullptr);
  EXPECT_EQ(0, captured.calls);
  EXPECT_EQ(1u, monitor_.reported());
}

// BUG: Configure(threshold, "") after a log file was configured keeps writing to that file (and a
// second path leaks the first descriptor): fd_ only ever changes when a file opens, although ""
// means stderr.
TEST_F(LargeAllocationMonitorTest, ReconfiguringWithAnEmptyPathReturnsToStderr) {
  monitor_.Configure(1, log_.c_str());
  monitor_.Configure(1, "");
  StderrCapture capture;
  monitor_.Report(kBlock, 3, AllocFunction::kMalloc, nullptr, 0, nullptr);
  EXPECT_EQ(1u, Lines(capture.Text()).size());
  EXPECT_EQ("", ReadFile(log_));
}

}  // namespace
}  // namespace heapgraph
