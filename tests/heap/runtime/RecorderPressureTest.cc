// The memory-pressure watcher on real children (tests/programs/hg_pressure.cc): a child with a
// configured memory_limit grows past 50/75/90 % of it; the `pressure` time line has the three
// entries in order with plausible numbers, the category totals name the size it grew by, and the
// `types` file names its polymorphic objects.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "heap/pressure/MemoryLimit.h"
#include "reader/PressureTimeline.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

constexpr uint64_t kLimitMib = 256;
constexpr uint64_t kLimit = kLimitMib << 20;

// Waits (bounded) until the watcher has written `count` entries.
PressureTimeline WaitForEntries(const std::string& dir, size_t count) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    PressureTimeline timeline(dir);
    if (timeline.entries().size() >= count || std::chrono::steady_clock::now() > deadline) {
      return timeline;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Type name -> records in the `types` file (format::TypesHeader, docs/recording-format.md).
std::map<std::string, uint64_t> TypeCounts(const std::string& dir) {
  std::ifstream in(dir + "/" + format::kTypesFile, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  std::string bytes = s.str();
  std::map<std::string, uint64_t> counts;
  format::TypesHeader h;
  if (bytes.size() < sizeof(h)) return counts;
  memcpy(&h, bytes.data(), sizeof(h));
  EXPECT_EQ(memcmp(h.file.magic, format::kTypesMagic, 8), 0);
  EXPECT_LE(h.records_offset + h.record_count * sizeof(format::TypeRecord), bytes.size());
  EXPECT_LE(h.strings_offset + h.strings_size, bytes.size());
  std::vector<std::string> names;
  for (uint32_t i = 0; i < h.name_count; ++i) {
    format::TypeName n;
    memcpy(&n, bytes.data() + h.names_offset + i * sizeof(n), sizeof(n));
    names.push_back(bytes.substr(h.strings_offset + n.offset, n.length));
  }
  uint64_t previous = 0;
  for (uint64_t i = 0; i < h.record_count; ++i) {
    format::TypeRecord r;
    memcpy(&r, bytes.data() + h.records_offset + i * sizeof(r), sizeof(r));
    EXPECT_GT(r.address, previous) << "records sorted by address";
    previous = r.address;
    if (r.type < names.size()) ++counts[names[r.type]];
  }
  return counts;
}

// How many of `pid`'s descriptors are PSI triggers (/proc/pressure/memory, memory.pressure).
int PsiDescriptors(pid_t pid) {
  std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int count = 0;
  while (dirent* e = readdir(d)) {
    char target[512];
    ssize_t n = readlink((dir + "/" + e->d_name).c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    std::string link(target, static_cast<size_t>(n));
    if (link.ends_with("pressure/memory") || link.ends_with("memory.pressure")) ++count;
  }
  closedir(d);
  return count;
}

class RecorderPressureTest : public testing::Test {
 protected:
  void Grow(const std::string& options) {
    child_.emplace(ProgramPath("hg_pressure"), std::vector<std::string>{"256", "95"},
                   RecordingEnv(root_.path(), options));
    ASSERT_TRUE(child_->WaitReady()) << child_->Describe();
    dir_ = root_.DirectoryOf(child_->pid());
  }
  TempRoot root_;
  std::optional<ChildProcess> child_;
  std::string dir_;
};

TEST_F(RecorderPressureTest, TimeLineHasEachWatermarkInOrderWithCategories) {
  Grow("memory_limit=" + std::to_string(kLimitMib) + "M,watch_interval_ms=20");
  PressureTimeline timeline = WaitForEntries(dir_, 3);
  ASSERT_TRUE(timeline.present());
  EXPECT_EQ(timeline.header().configured_limit, kLimit);
  EXPECT_NE(timeline.header().sources & format::kSourceRss, 0u);
  ASSERT_EQ(timeline.entries().size(), 3u) << child_->Describe();
  const uint32_t marks[] = {50, 75, 90};
  uint64_t previous_elapsed = 0, previous_bytes = 0;
  for (size_t i = 0; i < 3; ++i) {
    const format::PressureRecord& r = timeline.entries()[i].record;
    SCOPED_TRACE("entry " + std::to_string(i));
    EXPECT_EQ(r.watermark, marks[i]);
    EXPECT_GE(r.percent, marks[i]);
    EXPECT_EQ(r.limit, kLimit);
    EXPECT_GE(r.rss, kLimit / 100 * marks[i]);
    EXPECT_LT(r.rss, kLimit * 2) << "RSS implausible";
    EXPECT_GE(r.elapsed_ns, previous_elapsed);
    EXPECT_GE(r.heap_bytes, previous_bytes);
    EXPECT_GT(r.sequence, 0u);
    previous_elapsed = r.elapsed_ns;
    previous_bytes = r.heap_bytes;
  }
  // At 90 % the biggest category is the one the child grew by: 4 MiB heap blocks.
  const PressureEntry& last = timeline.entries()[2];
  const format::CategoryTotal* top = nullptr;
  for (const format::CategoryTotal& c : last.categories) {
    if (top == nullptr || c.bytes > top->bytes) top = &c;
  }
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->kind, format::kCategoryHeap);
  EXPECT_EQ(top->size, uint64_t{4} << 20);
  EXPECT_GE(top->bytes, kLimit / 2);
  EXPECT_EQ(top->bytes, top->count * top->size);
  ASSERT_TRUE(child_->Finish());
}

// A host that closes every descriptor and reuses the high numbers for its own file: the watcher
// (its descriptor moved up there) notices that the number is no longer its file, says so once and
// stops; the host's file never gets a pressure entry.
TEST_F(RecorderPressureTest, HostThatReusesTheDescriptorNeverGetsPressureEntries) {
  std::string host = root_.path() + "/host-file";
  std::vector<std::string> env = RecordingEnv(
      root_.path(), "memory_limit=" + std::to_string(kLimitMib) + "M,watch_interval_ms=20");
  env.push_back("HG_PRESSURE_HOST_FILE=" + host);
  child_.emplace(ProgramPath("hg_pressure"), std::vector<std::string>{"256", "95"}, env);
  ASSERT_TRUE(child_->WaitReady()) << child_->Describe();
  bool said = false;
  for (int i = 0; i < 3000 && !said; ++i) {  // the watcher polls every 20 ms; bounded wait
    said = child_->Stderr().find("descriptor was closed or reused") != std::string::npos;
    if (!said) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(said) << child_->Describe();
  ASSERT_TRUE(child_->Finish());
  std::ifstream in(host, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  EXPECT_EQ(bytes.str().size(), 0u) << "heapgraph wrote into the host's file";
}

TEST_F(RecorderPressureTest, TypesFileNamesThePolymorphicObjects) {
  Grow("memory_limit=" + std::to_string(kLimitMib) + "M,watch_interval_ms=20");
  PressureTimeline timeline = WaitForEntries(dir_, 3);
  ASSERT_EQ(timeline.entries().size(), 3u);
  EXPECT_EQ(timeline.entries()[2].record.types_written, 1u) << child_->Describe();
  std::map<std::string, uint64_t> types = TypeCounts(dir_);
  EXPECT_EQ(types["Widget"], 1000u);
  EXPECT_EQ(types["shapes::Gadget"], 500u);
  ASSERT_TRUE(child_->Finish());
}

TEST_F(RecorderPressureTest, WatchOnWithoutALimitIsOneLine) {
  RunResult run =
      RunToExit(ProgramPath("hg_simple"), {}, RecordingEnv(root_.path(), "watch=1,memory_limit=0"));
  MemoryLimit probe;
  probe.Discover(0);
  if (probe.HasLimit()) GTEST_SKIP() << "this process's cgroup has a memory.max: a limit exists";
  ASSERT_TRUE(run.status.has_value());
  ASSERT_EQ(run.stderr_lines.size(), 1u) << run.stderr_text;
  EXPECT_EQ(run.stderr_lines[0].rfind("heapgraph: memory-pressure watcher: no limit to watch", 0),
            0u);
}

// A PSI trigger's descriptor costs its process a kernel RCU grace period when closed (at exit
// too): the watcher arms one only after its first second, so a short-lived process never pays.
TEST_F(RecorderPressureTest, ArmsThePsiTriggerOnlyAfterItsFirstSecond) {
  auto start = std::chrono::steady_clock::now();
  child_.emplace(ProgramPath("hg_pressure"), std::vector<std::string>{"256", "1"},
                 RecordingEnv(root_.path(), "memory_limit=256M,watch=1,watch_interval_ms=20"));
  ASSERT_TRUE(child_->WaitReady()) << child_->Describe();
  int early = PsiDescriptors(child_->pid());
  if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(800)) {
    EXPECT_EQ(early, 0) << "a trigger within the watcher's first second";
  }
  MemoryLimit probe;
  probe.Discover(0);
  if (!probe.PressureTriggerPossible()) {
    ASSERT_TRUE(child_->Finish());
    GTEST_SKIP() << "no PSI trigger can be written here";
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int late = 0;
  while ((late = PsiDescriptors(child_->pid())) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(late, 1) << "the trigger, armed after the first second";
  ASSERT_TRUE(child_->Finish());
}

TEST_F(RecorderPressureTest, WatchOffWritesNoTimeLine) {
  Grow("memory_limit=" + std::to_string(kLimitMib) + "M,watch=0");
  ASSERT_TRUE(child_->Finish());
  EXPECT_FALSE(PressureTimeline(dir_).present());
}

}  // namespace
}  // namespace heapgraph::proctest
