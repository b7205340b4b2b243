// tests/heap: SessionFile: the header it writes, sequence blocks (also across threads), the exit
// mark, and the file as RecordingReader reads it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "heap/platform/ProcessStartTicks.h"
#include "heap/session/SessionFile.h"
#include "heap/store/LiveAllocationTree.h"
#include "heap/store/ModuleMap.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/StackStore.h"
#include "reader/RecordingReader.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

uint64_t RealtimeNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
}

// The persisted header, read through a descriptor of our own.
std::unique_ptr<format::SessionHeader> ReadSession(const TempDir& dir) {
  auto h = std::make_unique<format::SessionHeader>();
  int fd = openat(dir.fd(), format::kSessionFile, O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(ssize_t(sizeof(*h)), pread(fd, h.get(), sizeof(*h), 0));
  close(fd);
  return h;
}

TEST(SessionFileTest, CreateDescribesThisProcess) {
  TempDir dir;
  SessionFile session;
  uint64_t before = RealtimeNs();
  ASSERT_TRUE(session.Create(dir.fd(), 24));
  uint64_t after = RealtimeNs();

  auto h = ReadSession(dir);
  EXPECT_EQ(0, memcmp(h->file.magic, format::kSessionMagic, 8));
  EXPECT_EQ(format::kSessionVersion, h->file.version);
  EXPECT_EQ(sizeof(format::SessionHeader), h->file.header_size);
  EXPECT_EQ(getpid(), h->pid);
  EXPECT_EQ(24u, h->max_depth);
  EXPECT_GE(h->start_time_ns, before);
  EXPECT_LE(h->start_time_ns, after);
  EXPECT_EQ(ProcessStartTicks::OfSelf(), h->boot_time_ticks);
  EXPECT_EQ(0u, h->sequence.load());
  EXPECT_EQ(uint32_t{format::kSessionRecording}, h->state.load());
  EXPECT_EQ(std::filesystem::read_symlink("/proc/self/exe").string(), h->executable);
  EXPECT_EQ(session.header()->pid, h->pid);
  EXPECT_EQ(0u, h->run_tag);
  session.SetRunTag(0xfeedbeefu);  // the field `heapgraph run`'s summary reads
  EXPECT_EQ(0xfeedbeefu, ReadSession(dir)->run_tag);
}

TEST(SessionFileTest, FileIsOnePagePrivateToTheUser) {
  TempDir dir;
  SessionFile session;
  ASSERT_TRUE(session.Create(dir.fd(), 32));
  struct stat st;
  ASSERT_EQ(0, fstatat(dir.fd(), format::kSessionFile, &st, 0));
  EXPECT_EQ(off_t(format::kPageSize), st.st_size);
  EXPECT_EQ(0600u, st.st_mode & 07777);
  EXPECT_LE(sizeof(format::SessionHeader), format::kPageSize);
}

TEST(SessionFileTest, CreateRefusesAnExistingSessionFile) {
  TempDir dir;
  SessionFile first, second;
  ASSERT_TRUE(first.Create(dir.fd(), 32));
  first.TakeSequenceBlock();
  EXPECT_FALSE(second.Create(dir.fd(), 16));
  EXPECT_EQ(32u, ReadSession(dir)->max_depth);
  EXPECT_EQ(SessionFile::kSequenceBlock, ReadSession(dir)->sequence.load());
}

TEST(SessionFileTest, SequenceBlocksAreConsecutiveAndPersisted) {
  TempDir dir;
  SessionFile session;
  ASSERT_TRUE(session.Create(dir.fd(), 32));
  EXPECT_EQ(0u, session.TakeSequenceBlock());
  EXPECT_EQ(SessionFile::kSequenceBlock, session.TakeSequenceBlock());
  EXPECT_EQ(2 * SessionFile::kSequenceBlock, session.TakeSequenceBlock());
  EXPECT_EQ(3 * SessionFile::kSequenceBlock, ReadSession(dir)->sequence.load());
}

TEST(SessionFileTest, FirstSequenceContinuesWhereAParentLeftOff) {
  TempDir dir;
  SessionFile session;
  const uint64_t parent = 5 * SessionFile::kSequenceBlock + 17;
  ASSERT_TRUE(session.Create(dir.fd(), 32, parent));
  EXPECT_EQ(parent, ReadSession(dir)->sequence.load());
  EXPECT_EQ(parent, session.TakeSequenceBlock());
  EXPECT_EQ(parent + SessionFile::kSequenceBlock, session.TakeSequenceBlock());
}

TEST(SessionFileTest, ConcurrentSequenceBlocksNeverOverlap) {
  TempDir dir;
  SessionFile session;
  ASSERT_TRUE(session.Create(dir.fd(), 32));
  constexpr int kThreads = 4, kBlocks = 5000;
  std::vector<std::vector<uint64_t>> taken(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kBlocks; ++i) taken[t].push_back(session.TakeSequenceBlock());
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<uint64_t> all;
  for (const auto& blocks : taken) {
    EXPECT_TRUE(std::is_sorted(blocks.begin(), blocks.end()));
    all.insert(blocks.begin(), blocks.end());
  }
  ASSERT_EQ(size_t{kThreads * kBlocks}, all.size());
  EXPECT_EQ(0u, *all.begin());
  EXPECT_EQ(uint64_t{kThreads * kBlocks - 1} * SessionFile::kSequenceBlock, *all.rbegin());
  for (uint64_t first : all) ASSERT_EQ(0u, first % SessionFile::kSequenceBlock);
  EXPECT_EQ(uint64_t{kThreads * kBlocks} * SessionFile::kSequenceBlock,
            ReadSession(dir)->sequence.load());
}

TEST(SessionFileTest, MarkExitedIsPersisted) {
  TempDir dir;
  SessionFile session;
  ASSERT_TRUE(session.Create(dir.fd(), 32));
  session.MarkExited();
  EXPECT_EQ(uint32_t{format::kSessionExited}, ReadSession(dir)->state.load());
}

TEST(SessionFileTest, MarkExitedWithoutAFileIsHarmless) {
  SessionFile session;
  session.MarkExited();
  EXPECT_EQ(nullptr, session.header());
}

TEST(SessionFileTest, RecordingReaderReadsTheSession) {
  TempDir dir;
  SessionFile session;
  ASSERT_TRUE(session.Create(dir.fd(), 20, 3000));
  session.TakeSequenceBlock();
  session.MarkExited();
  auto tree = std::make_unique<LiveAllocationTree>();
  ASSERT_TRUE(tree->Create(dir.fd(), format::kHeapTreeFile, 1, 10));
  StackStore stacks;
  ASSERT_TRUE(stacks.Create(dir.fd(), format::kStackFile, 10, 20));
  ModuleMap modules;
  ASSERT_TRUE(modules.Create(dir.fd(), format::kModuleFile, 4));

  RecordingReader reader(dir.path());
  ASSERT_TRUE(reader.session().has_value());
  const SessionInfo& info = *reader.session();
  EXPECT_EQ(getpid(), info.pid);
  EXPECT_EQ(20u, info.max_depth);
  EXPECT_EQ(session.header()->start_time_ns, info.start_time_ns);
  EXPECT_EQ(ProcessStartTicks::OfSelf(), info.boot_time_ticks);
  EXPECT_EQ(3000 + SessionFile::kSequenceBlock, info.sequence);
  EXPECT_EQ(uint32_t{format::kSessionExited}, info.state);
  EXPECT_EQ(std::filesystem::read_symlink("/proc/self/exe").string(), info.executable);
  for (const std::string& warning : reader.warnings()) {
    EXPECT_EQ(std::string::npos, warning.find("session")) << warning;
  }
  EXPECT_TRUE(info.has_record);
  EXPECT_EQ(uint32_t{format::kExitDestructor}, info.record.exit_kind);
  EXPECT_EQ(0, memcmp(info.record.boot_id, session.header()->record.boot_id, 36));

  // A version 1 session (no record) still reads, with the record zeroed.
  format::FileHeader v1 = session.header()->file;
  v1.version = format::kVersion;
  v1.header_size = format::kSessionV1Size;
  int fd = openat(dir.fd(), format::kSessionFile, O_WRONLY | O_CLOEXEC);
  ASSERT_EQ(ssize_t(sizeof(v1)), pwrite(fd, &v1, sizeof(v1), 0));
  close(fd);
  RecordingReader old(dir.path());
  ASSERT_TRUE(old.session().has_value());
  EXPECT_FALSE(old.session()->has_record);
  EXPECT_EQ(0u, old.session()->record.exit_kind);
  EXPECT_EQ(3000 + SessionFile::kSequenceBlock, old.session()->sequence);
  stacks.Unmap();
}

// Version 2: what the next start needs to classify how the run ended.
TEST(SessionFileTest, RecordHoldsBootIdHeartbeatSettingsAndTheCgroupCounter) {
  TempDir dir;
  SessionFile session;
  ASSERT_TRUE(session.Create(dir.fd(), 24, 0, 250, 4000));
  auto h = ReadSession(dir);
  const format::SessionRecord& r = h->record;
  EXPECT_EQ(36u, strlen(r.boot_id));  // 8-4-4-4-12 hex digits
  EXPECT_EQ(250u, r.heartbeat_interval_ms);
  EXPECT_EQ(4000u, r.hang_threshold_ms);
  EXPECT_GT(r.start_boottime_ns, 0u);
  EXPECT_EQ(r.oom_counter_path[0] == '\0', r.oom_kills_at_start == format::kUnknownCounter);
  EXPECT_EQ(0u, r.exit_kind);
  EXPECT_EQ(0u, r.fatal_signal);
}

TEST(SessionFileTest, ExitAndSignalsAreRecorded) {
  TempDir dir;
  SessionFile session;
  ASSERT_TRUE(session.Create(dir.fd(), 24));
  session.RecordSignal(15, 0, 0);
  session.RecordSignal(11, 1, 0x10);  // only the first is kept
  EXPECT_EQ(15u, ReadSession(dir)->record.fatal_signal);
  session.ClearSignal(15);  // survived
  EXPECT_EQ(0u, ReadSession(dir)->record.fatal_signal);
  session.RecordSignal(11, 1, 0x10);
  session.RecordExit(format::kExitImmediate, 9);
  session.MarkExited();  // keeps the more precise kind
  auto h = ReadSession(dir);
  EXPECT_EQ(11u, h->record.fatal_signal);
  EXPECT_EQ(1, h->record.fatal_code);
  EXPECT_EQ(0x10u, h->record.fatal_address);
  EXPECT_EQ(uint32_t{format::kExitImmediate}, h->record.exit_kind);
  EXPECT_EQ(9, h->record.exit_status);
  EXPECT_EQ(uint32_t{format::kSessionExited}, h->state.load());
}

// A second signal neither overwrites the first one's details nor, handled on another thread,
// erases it.
TEST(SessionFileTest, SecondSignalOnAnotherThreadKeepsTheFirst) {
  TempDir dir;
  SessionFile session;
  ASSERT_TRUE(session.Create(dir.fd(), 24));
  std::thread([&] { session.RecordSignal(11, 2, 0x20); }).join();  // thread A: the fault
  std::thread([&] {
    session.RecordSignal(15, 0, 0x99);  // thread B: loses the claim
    session.ClearSignal(15);            // B's handler returned
    session.ClearSignal(11);            // not B's signal either
  }).join();
  session.ClearSignal(11);  // nor this thread's
  auto h = ReadSession(dir);
  EXPECT_EQ(11u, h->record.fatal_signal);
  EXPECT_EQ(2, h->record.fatal_code);
  EXPECT_EQ(0x20u, h->record.fatal_address);
}

TEST(SessionFileTest, BeatTracksProgressByAllocationsThenByAppHeartbeats) {
  TempDir dir;
  SessionFile session;
  ASSERT_TRUE(session.Create(dir.fd(), 24, 0, 100, 1000));
  session.Beat();
  uint64_t first = ReadSession(dir)->record.progress_boottime_ns;
  EXPECT_GT(first, 0u);
  session.Beat();  // no allocation since: progress stays
  auto h = ReadSession(dir);
  EXPECT_EQ(first, h->record.progress_boottime_ns);
  EXPECT_EQ(2u, h->record.heartbeat_count);
  EXPECT_GE(h->record.heartbeat_boottime_ns, first);
  session.TakeSequenceBlock();
  session.Beat();
  EXPECT_GT(ReadSession(dir)->record.progress_boottime_ns, first);
  session.SetAppState(format::kAppBackground);
  session.CountAppHeartbeat();
  session.Beat();
  uint64_t with_app = ReadSession(dir)->record.progress_boottime_ns;
  session.TakeSequenceBlock();  // allocations no longer count once the app beats
  session.Beat();
  h = ReadSession(dir);
  EXPECT_EQ(with_app, h->record.progress_boottime_ns);
  EXPECT_EQ(uint32_t{format::kAppBackground}, h->record.app_state);
}

// The beat right after Create takes the OOM-kill counter Create found and read as it is; the
// next ones look for the process's cgroup again (it may have moved).
TEST(SessionFileTest, TheFirstBeatTakesTheCounterCreateRead) {
  TempDir dir;
  SessionFile session;
  ASSERT_TRUE(session.Create(dir.fd(), 24, 0, 100, 1000));
  format::SessionRecord& r = session.header()->record;
  const std::string found = r.oom_counter_path;
  snprintf(r.oom_counter_path, sizeof(r.oom_counter_path), "%s", "/nonexistent/memory.events");
  session.Beat(UINT64_MAX, /*read_cgroup=*/false);
  auto h = ReadSession(dir);
  EXPECT_STREQ("/nonexistent/memory.events", h->record.oom_counter_path);
  EXPECT_EQ(h->record.oom_kills_at_start, h->record.oom_kills_at_heartbeat);
  EXPECT_EQ(1u, h->record.heartbeat_count);
  session.Beat();
  if (!found.empty()) {
    EXPECT_EQ(found, ReadSession(dir)->record.oom_counter_path);
  }
}

}  // namespace
}  // namespace heapgraph
