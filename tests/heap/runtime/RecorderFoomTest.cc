// FOOM dumps on real child processes (tests/programs/hg_foom.cc): how each run ended is classified
// from what it left behind (clean exit with its status, a crash whose application handler still
// ran, a hang, a kill in the background, an OOM kill by a memory limit, SIGKILL at random moments),
// the report's top category and Caller1 are the structure the child grew, and the next start of
// the program classifies earlier runs and keeps only the last `keep`; polymorphic objects grown
// under the memory-pressure watcher are reported by their class (the `types` file written at the
// watermarks) with the watermark time line; a sampled recording's estimates are within their stated
// error of the truth. HEAPGRAPH_FOOM_RUNS sets the number of random kills (default 10; the
// foom_stress target runs 100).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "heap/store/RecordingDirectory.h"
#include "reader/PressureTimeline.h"
#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

using Json = nlohmann::json;

// `heapgraph foom DIR --json`: the parsed document; fails the test on a non-zero exit.
Json Foom(const std::string& dir, bool symbols = false) {
  std::vector<std::string> args = {"foom", dir, "--json"};
  if (!symbols) args.push_back("--no-symbols");
  RunResult run = RunToExit(HEAPGRAPH_CLI, args, {});
  EXPECT_TRUE(run.status && WIFEXITED(*run.status) && WEXITSTATUS(*run.status) == 0)
      << run.stderr_text;
  std::string text;
  for (const std::string& line : run.lines) text += line + "\n";
  try {
    return Json::parse(text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "foom output is not JSON: " << e.what() << "\n" << text << run.stderr_text;
    return Json::object();
  }
}

// Polls `done` every 20 ms for up to 30 s.
template <typename Predicate>
bool WaitFor(Predicate done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return done();
}

// The report's top category is the ledger's entries and its Caller1 the function that grew it,
// above the thin wrapper it allocates through.
void ExpectLedgerOnTop(const Json& report) {
  ASSERT_FALSE(report["categories"].empty());
  EXPECT_EQ(report["categories"][0]["name"], "Malloc 1000 B");
  EXPECT_NE(report["feature"]["caller1"].get<std::string>().find("GrowLedger"), std::string::npos)
      << report["feature"].dump();
  EXPECT_EQ(report["feature"]["category"], "Malloc 1000 B");
  // Caller1 skipped a real frame: the thin wrapper LedgerAlloc is on the stack (Capstone).
  bool wrapper_on_stack = false;
  for (const Json& frame : report["categories"][0]["stacks"][0]["frames"]) {
    wrapper_on_stack |=
        frame["function"].get<std::string>().find("LedgerAlloc") != std::string::npos;
  }
  EXPECT_TRUE(wrapper_on_stack) << report["categories"][0]["stacks"][0].dump();
}

TEST(RecorderFoomTest, CleanExitIsClassifiedWithItsStatus) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_foom"), {"clean"}, RecordingEnv(root.path(), ""));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  child.CloseStdin();
  std::optional<int> status = child.Wait();
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 3) << child.Describe();
  Json report = Foom(root.DirectoryOf(child.pid()));
  EXPECT_EQ(report["exit"]["kind"], "clean_exit") << report["exit"].dump();
  EXPECT_EQ(report["exit"]["exit_status"], 3);
}

TEST(RecorderFoomTest, CrashIsRecordedAndTheApplicationsHandlerStillRuns) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_foom"), {"crash"}, RecordingEnv(root.path(), ""));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  child.CloseStdin();
  child.ReadToEof();
  std::optional<int> status = child.Wait();
  ASSERT_TRUE(status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGSEGV) << child.Describe();
  EXPECT_FALSE(child.Field("app-handler").empty())
      << "the application's SIGSEGV handler did not run";
  Json report = Foom(root.DirectoryOf(child.pid()));
  EXPECT_EQ(report["exit"]["kind"], "crash") << report["exit"].dump();
  EXPECT_EQ(report["exit"]["signal"], SIGSEGV);
  EXPECT_EQ(report["exit"]["signal_name"], "SIGSEGV");
}

TEST(RecorderFoomTest, DefaultSigtermIsATerminationAndAHandledOneIsForgotten) {
  TempRoot root;
  ChildProcess killed(ProgramPath("hg_foom"), {"term"}, RecordingEnv(root.path(), "hang_ms=0"));
  ASSERT_TRUE(killed.WaitReady()) << killed.Describe();
  killed.Kill(SIGTERM);
  std::optional<int> status = killed.Wait();
  ASSERT_TRUE(status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM) << killed.Describe();
  Json report = Foom(root.DirectoryOf(killed.pid()));
  EXPECT_EQ(report["exit"]["kind"], "terminated") << report["exit"].dump();
  EXPECT_EQ(report["exit"]["signal"], SIGTERM);

  ChildProcess survivor(ProgramPath("hg_foom"), {"term", "handle"},
                        RecordingEnv(root.path(), "hang_ms=0"));
  ASSERT_TRUE(survivor.WaitReady()) << survivor.Describe();
  survivor.Kill(SIGTERM);
  ASSERT_TRUE(WaitFor([&] {
    survivor.ReadToEof(milliseconds(20));
    return !survivor.Field("survived").empty();
  })) << survivor.Describe();
  survivor.Kill(SIGKILL);
  survivor.Wait();
  report = Foom(root.DirectoryOf(survivor.pid()));
  EXPECT_EQ(report["exit"]["kind"], "likely_oom_kill") << report["exit"].dump();
}

TEST(RecorderFoomTest, SigtermHandlerThatExitsIsACleanExitWithItsStatus) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_foom"), {"term-exit"}, RecordingEnv(root.path(), "hang_ms=0"));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  child.Kill(SIGTERM);
  std::optional<int> status = child.Wait();
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 5) << child.Describe();
  Json report = Foom(root.DirectoryOf(child.pid()));
  EXPECT_EQ(report["exit"]["kind"], "clean_exit") << report["exit"].dump();
  EXPECT_EQ(report["exit"]["exit_status"], 5);
}

TEST(RecorderFoomTest, QuickExitIsAnExitWithItsStatus) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_foom"), {"quick-exit"}, RecordingEnv(root.path(), ""));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  child.CloseStdin();
  std::optional<int> status = child.Wait();
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 4) << child.Describe();
  Json report = Foom(root.DirectoryOf(child.pid()));
  EXPECT_EQ(report["exit"]["kind"], "clean_exit") << report["exit"].dump();
  EXPECT_EQ(report["exit"]["exit_status"], 4);
}

TEST(RecorderFoomTest, SigIgnWithSiginfoStaysIgnored) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_foom"), {"ignore-siginfo"}, RecordingEnv(root.path(), ""));
  ASSERT_TRUE(child.Finish()) << child.Describe();
  child.ReadToEof();
  EXPECT_EQ(child.Field("survived"), std::vector<std::string>{"15"}) << child.Describe();
}

TEST(RecorderFoomTest, SigactionWithOneObjectForNewAndOldInstallsTheNewAction) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_foom"), {"same-action"}, RecordingEnv(root.path(), ""));
  ASSERT_TRUE(child.Finish()) << child.Describe();
  child.ReadToEof();
  EXPECT_EQ(child.Field("handler"), std::vector<std::string>{"2"}) << child.Describe();
}

TEST(RecorderFoomTest, HeapgraphThreadsNeverTakeASignalTheProgramReadsFromASignalfd) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_foom"), {"signalfd"},
                     RecordingEnv(root.path(), "heartbeat_ms=10,memory_limit=64G"));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  child.Kill(SIGTERM);
  std::optional<int> status = child.Wait();
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << child.Describe();
  child.ReadToEof();
  EXPECT_EQ(child.Field("signalfd"), std::vector<std::string>{"15"}) << child.Describe();
}

TEST(RecorderFoomTest, HangIsClassifiedFromTheStalledHeartbeat) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_foom"), {"hang"},
                     RecordingEnv(root.path(), "heartbeat_ms=20,hang_ms=200"));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  child.CloseStdin();  // the child deadlocks
  std::string dir = root.DirectoryOf(child.pid());
  // Kill it once the heartbeat has seen no progress for the hang threshold (the watchdog's view).
  bool stalled = WaitFor([&] {
    RecordingReader reader(dir);
    const format::SessionRecord& r = reader.session()->record;
    return r.heartbeat_count >= 2 &&
           r.heartbeat_boottime_ns - r.progress_boottime_ns >= 200ull * 1000 * 1000;
  });
  ASSERT_TRUE(stalled);
  child.Kill(SIGKILL);
  child.Wait();
  Json report = Foom(dir);
  EXPECT_EQ(report["exit"]["kind"], "hang") << report["exit"].dump();
  EXPECT_GE(report["exit"]["stall_ms"].get<uint64_t>(), 200u);
}

// Once the program calls heapgraph_heartbeat(), its heartbeats are the progress: a main loop that
// stops beating is hung even while other code keeps allocating.
TEST(RecorderFoomTest, AppHeartbeatsReplaceAllocationsAsProgress) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_foom"), {"beat"},
                     RecordingEnv(root.path(), "heartbeat_ms=20,hang_ms=200"));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  std::string dir = root.DirectoryOf(child.pid());
  uint64_t sequence_at_ready = RecordingReader(dir).session()->sequence;
  bool stalled = WaitFor([&] {
    RecordingReader reader(dir);
    const format::SessionRecord& r = reader.session()->record;
    return r.app_heartbeats == 3 && r.heartbeat_count >= 2 &&
           r.heartbeat_boottime_ns - r.progress_boottime_ns >= 200ull * 1000 * 1000 &&
           reader.session()->sequence > sequence_at_ready;  // the heap kept moving meanwhile
  });
  ASSERT_TRUE(stalled);
  child.Kill(SIGKILL);
  child.Wait();
  Json report = Foom(dir);
  EXPECT_EQ(report["exit"]["kind"], "hang") << report["exit"].dump();
}

TEST(RecorderFoomTest, KillInTheBackgroundIsNotCalledAnOomKill) {
  TempRoot root;
  std::vector<std::string> env = RecordingEnv(root.path(), "hang_ms=0");
  env.push_back("HG_FOOM_BACKGROUND=1");
  ChildProcess child(ProgramPath("hg_foom"), {"idle"}, env);
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  child.Kill(SIGKILL);
  child.Wait();
  Json report = Foom(root.DirectoryOf(child.pid()));
  EXPECT_EQ(report["exit"]["kind"], "unknown") << report["exit"].dump();
  EXPECT_FALSE(report["exit"]["foreground"].get<bool>());
}

// A memory cgroup (v1 memory.limit_in_bytes or v2 memory.max) below our own, or "" if this
// machine does not let us create one.
class MemoryCgroup {
 public:
  explicit MemoryCgroup(uint64_t limit) {
    std::ifstream in("/proc/self/cgroup");
    std::string line, v1, v2;
    while (std::getline(in, line)) {
      if (line.rfind("0::", 0) == 0) v2 = line.substr(3);
      size_t colon = line.find(':');
      if (colon != std::string::npos && line.find(":memory:") == colon) {
        v1 = line.substr(colon + 8);
      }
    }
    std::string name = "/heapgraph-foom-" + std::to_string(getpid());
    if (!v1.empty() && Make("/sys/fs/cgroup/memory" + v1 + name, "memory.limit_in_bytes", limit)) {
      WriteValue(path_ + "/memory.memsw.limit_in_bytes", limit);  // no swap either, if present
      return;
    }
    if (!v2.empty()) Make("/sys/fs/cgroup" + v2 + name, "memory.max", limit);
  }
  ~MemoryCgroup() {
    if (!path_.empty()) rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  static bool WriteValue(const std::string& file, uint64_t value) {
    std::ofstream out(file);
    out << value;
    out.flush();
    return static_cast<bool>(out);
  }
  bool Make(const std::string& path, const char* limit_file, uint64_t limit) {
    if (mkdir(path.c_str(), 0755) != 0) return false;
    if (!WriteValue(path + "/" + limit_file, limit)) {
      rmdir(path.c_str());
      return false;
    }
    path_ = path;
    return true;
  }
  std::string path_;
};

uint64_t RssBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/statm");
  uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

TEST(RecorderFoomTest, OomKillByAMemoryLimitIsClassifiedAndReportsTheGrownStructure) {
  constexpr uint64_t kLimit = 64 << 20;
  TempRoot root;
  MemoryCgroup cgroup(kLimit);
  std::unique_ptr<ChildProcess> child;
  if (!cgroup.path().empty()) {
    // The shell joins the cgroup, then becomes the child with the recorder preloaded.
    std::vector<std::string> env = RecordingEnv(root.path(), "", /*preload=*/false);
    env.push_back("HG_CGROUP=" + cgroup.path());
    env.push_back("HG_PRELOAD=" HEAPGRAPH_PRELOAD);
    env.push_back("HG_PROGRAM=" + ProgramPath("hg_foom"));
    child = std::make_unique<ChildProcess>(
        "/bin/sh",
        std::vector<std::string>{"-c",
                                 "echo $$ > \"$HG_CGROUP/cgroup.procs\" && "
                                 "LD_PRELOAD=\"$HG_PRELOAD\" exec \"$HG_PROGRAM\" grow 0"},
        env);
  } else {
    child = std::make_unique<ChildProcess>(ProgramPath("hg_foom"),
                                           std::vector<std::string>{"grow", "0"},
                                           RecordingEnv(root.path(), ""));
  }
  ASSERT_TRUE(child->WaitReady()) << child->Describe();
  if (cgroup.path().empty()) {
    // No cgroup here: an RSS watchdog plays the OOM killer.
    ASSERT_TRUE(WaitFor([&] { return RssBytes(child->pid()) >= kLimit; }));
    child->Kill(SIGKILL);
  }
  std::optional<int> status = child->Wait(milliseconds(120000));
  ASSERT_TRUE(status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) << child->Describe();
  Json report = Foom(root.DirectoryOf(child->pid()), /*symbols=*/true);
  std::string kind = report["exit"]["kind"];
  SCOPED_TRACE(report["exit"].dump());
  EXPECT_EQ(kind, cgroup.path().empty() ? "likely_oom_kill" : "oom_kill");
  ExpectLedgerOnTop(report);
  EXPECT_FALSE(report["categories"][0]["suspect_reasons"].empty());
}

TEST(RecorderFoomTest, SigkillAtRandomMomentsLeavesADumpThatReportsTheGrownStructure) {
  const char* runs_env = getenv("HEAPGRAPH_FOOM_RUNS");
  int runs = runs_env != nullptr ? atoi(runs_env) : 10;
  unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(0, 200);
  for (int run = 0; run < runs; ++run) {
    TempRoot root;
    // Odd runs also run the memory-pressure watcher with watermarks every 10 % of 40 MiB while
    // the ledger grows to ≈ 20 MiB, so that kills land in its appends to `pressure` and its
    // rewrites of `types` too: neither may ever read as corrupt.
    bool watched = run % 2 == 1;
    ChildProcess child(ProgramPath("hg_foom"), {"grow", "20000"},
                       RecordingEnv(root.path(), watched ? "memory_limit=40M,watch_interval_ms=10,"
                                                           "watermarks=10/20/30/40/50/60/70/80"
                                                         : ""));
    ASSERT_TRUE(child.WaitReady()) << child.Describe();
    int delay = delay_ms(random);
    SCOPED_TRACE("run " + std::to_string(run) + ", killed after " + std::to_string(delay) + " ms");
    std::this_thread::sleep_for(milliseconds(delay));
    child.Kill(SIGKILL);
    child.Wait();
    Json report = Foom(root.DirectoryOf(child.pid()), /*symbols=*/run == 0);
    for (const Json& warning : report["warnings"]) {
      std::string text = warning;
      EXPECT_EQ(text.find("(no time line)"), std::string::npos) << text;
      EXPECT_EQ(text.find("(size categories used instead)"), std::string::npos) << text;
    }
    if (watched) {
      EXPECT_TRUE(report["pressure"].is_object()) << "the watcher writes its header at start";
    }
    EXPECT_EQ(report["exit"]["kind"], "likely_oom_kill") << report["exit"].dump();
    EXPECT_LE(report["summary"]["torn_entries"].get<uint64_t>(), 64u);
    ASSERT_FALSE(report["categories"].empty());
    EXPECT_EQ(report["categories"][0]["name"], "Malloc 1000 B");
    if (run == 0) ExpectLedgerOnTop(report);
  }
}

// Each entry of a recording root with its files, and the first lines of its `exit` file (what a
// failed retention test needs to say why no run was pruned).
std::string DescribeRoot(const std::string& root) {
  std::string text;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    text += "  " + entry.path().filename().string() + ":";
    for (const auto& file : std::filesystem::directory_iterator(entry.path(), error)) {
      text += " " + file.path().filename().string();
    }
    std::ifstream exit_file(entry.path() / "exit");
    std::string line;
    for (int i = 0; i < 3 && std::getline(exit_file, line); ++i) text += " | " + line;
    text += "\n";
  }
  return text;
}

// Pruned runs become spares (hidden) that later starts take over: the first run's files end up
// as a later run's, same inodes.
TEST(RecorderFoomTest, NextStartClassifiesEarlierRunsAndKeepsTheLastK) {
  TempRoot root;
  ino_t first_heap = 0;
  for (int i = 0; i < 4; ++i) {
    ChildProcess child(ProgramPath("hg_foom"), {"clean"}, RecordingEnv(root.path(), "keep=2"));
    ASSERT_TRUE(child.WaitReady()) << child.Describe();
    if (i == 3) {  // its start pruned the first run: wait for the spare while it lives
      std::string spare = root.path() + "/" + RecordingDirectory::kSparePrefix + "0";
      ASSERT_TRUE(WaitFor([&] { return access(spare.c_str(), F_OK) == 0; }))
          << "no spare; the root holds:\n"
          << DescribeRoot(root.path());
    }
    child.CloseStdin();
    child.Wait();
    struct stat st;
    if (i == 0 &&
        stat((root.DirectoryOf(child.pid()) + "/" + format::kHeapTreeFile).c_str(), &st) == 0) {
      first_heap = st.st_ino;
    }
  }
  ChildProcess next(ProgramPath("hg_foom"), {"clean"}, RecordingEnv(root.path(), "keep=2"));
  ASSERT_TRUE(next.WaitReady()) << next.Describe();
  std::string own = root.DirectoryOf(next.pid());
  auto others = [&] {
    std::vector<std::string> dirs;
    for (const std::string& e : root.Entries()) {
      if (root.path() + "/" + e != own && !e.starts_with('.')) {
        dirs.push_back(root.path() + "/" + e);
      }
    }
    return dirs;
  };
  ASSERT_NE(first_heap, 0u);
  bool reused = false;
  for (const std::string& e : root.Entries()) {
    struct stat st;
    std::string heap = root.path() + "/" + e + "/" + format::kHeapTreeFile;
    if (!e.starts_with('.') && stat(heap.c_str(), &st) == 0 && st.st_ino == first_heap) {
      reused = true;
      EXPECT_EQ(root.path() + "/" + e, own) << "the pruned first run's heap.tree is in " << e;
    }
  }
  EXPECT_TRUE(reused) << "no recording took over the first run's files";
  ASSERT_TRUE(WaitFor([&] {
    std::vector<std::string> dirs = others();
    if (dirs.size() != 2) return false;
    for (const std::string& d : dirs) {
      if (access((d + "/exit").c_str(), R_OK) != 0) return false;
    }
    return true;
  })) << "left: "
      << others().size();
  for (const std::string& d : others()) {
    struct stat st;
    ASSERT_EQ(stat((d + "/exit").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    Json report = Foom(d);
    EXPECT_EQ(report["exit"]["kind"], "clean_exit");
    EXPECT_EQ(report["exit"]["source"], "exit file");
  }
  next.CloseStdin();
  next.Wait();
}

// The highest watermark in the directory's pressure time line whose entry refreshed the types
// (0: none yet; the file may be mid-write).
uint32_t TypedWatermark(const std::string& dir) {
  try {
    PressureTimeline timeline(dir);
    uint32_t highest = 0;
    for (const PressureEntry& e : timeline.entries()) {
      if (e.record.types_written != 0) highest = std::max(highest, e.record.watermark);
    }
    return highest;
  } catch (const RecordingError&) {
    return 0;
  }
}

// The child grows polymorphic objects; the watcher (memory_limit 64 MiB) names them at each
// watermark; the test kills it once the 90 % entry is written (an RSS watchdog playing the OOM
// killer, which would strike at 100 %). The report's top category is the class, not "Malloc 1000
// B": the objects allocated after the last refresh are too few to outweigh the named ones.
TEST(RecorderFoomTest, OomKillOfPolymorphicObjectsIsReportedByTheirClassWithTheTimeLine) {
  TempRoot root;
  ChildProcess child(ProgramPath("hg_foom"), {"accounts"},
                     RecordingEnv(root.path(), "memory_limit=64M,watch_interval_ms=10"));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  std::string dir = root.DirectoryOf(child.pid());
  ASSERT_TRUE(WaitFor([&] { return TypedWatermark(dir) >= 90; })) << child.Describe();
  child.Kill(SIGKILL);
  child.Wait();
  Json report = Foom(dir, /*symbols=*/true);
  SCOPED_TRACE(report["exit"].dump());
  EXPECT_EQ(report["exit"]["kind"], "likely_oom_kill");
  ASSERT_GE(report["categories"].size(), 2u);
  const Json& top = report["categories"][0];
  EXPECT_EQ(top["name"], "ledger::Account") << report["categories"][1].dump();
  EXPECT_EQ(top["kind"], "type");
  EXPECT_EQ(report["feature"]["category"], "ledger::Account");
  EXPECT_NE(report["feature"]["caller1"].get<std::string>().find("GrowAccounts"), std::string::npos)
      << report["feature"].dump();
  // The time line: 50, 75 and 90 % of the limit, in that order, each with the types refreshed.
  const Json& pressure = report["pressure"];
  ASSERT_TRUE(pressure.is_object()) << report["warnings"].dump();
  EXPECT_EQ(pressure["configured_limit"], 64u << 20);
  std::vector<uint32_t> marks;
  for (const Json& e : pressure["entries"]) {
    marks.push_back(e["watermark"]);
    EXPECT_TRUE(e["types_written"].get<bool>()) << e.dump();
    EXPECT_GE(e["percent"].get<uint32_t>(), e["watermark"].get<uint32_t>());
    EXPECT_GT(e["heap_blocks"].get<uint64_t>(), 1000u);
  }
  EXPECT_EQ(marks, (std::vector<uint32_t>{50, 75, 90}));
}

// A sampled recording (sample=64K) killed at the limit: the top category and Caller1 are still the
// grown structure, and the estimated count and bytes of its entries are within four standard
// errors (as the report states them) of the truth the child kept in a shared file.
TEST(RecorderFoomTest, SampledRecordingKilledAtALimitEstimatesTheGrownStructure) {
  constexpr uint64_t kLimit = 64 << 20;
  TempRoot root;
  char count_path[] = "/tmp/hg-foom-count-XXXXXX";
  int count_fd = mkstemp(count_path);
  ASSERT_GE(count_fd, 0);
  close(count_fd);
  std::vector<std::string> env = RecordingEnv(root.path(), "sample=64K");
  env.push_back(std::string("HG_FOOM_COUNT=") + count_path);
  ChildProcess child(ProgramPath("hg_foom"), {"grow", "0"}, env);
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  ASSERT_TRUE(WaitFor([&] { return RssBytes(child.pid()) >= kLimit; }));
  child.Kill(SIGKILL);
  child.Wait();
  uint64_t truth = 0;
  {
    std::ifstream in(count_path, std::ios::binary);
    in.read(reinterpret_cast<char*>(&truth), sizeof(truth));
  }
  unlink(count_path);
  ASSERT_GT(truth, 10000u);
  Json report = Foom(root.DirectoryOf(child.pid()), /*symbols=*/true);
  SCOPED_TRACE(report["summary"].dump());
  EXPECT_EQ(report["exit"]["kind"], "likely_oom_kill") << report["exit"].dump();
  EXPECT_EQ(report["summary"]["sample_mean"], 64u << 10);
  const Json& top = report["categories"][0];
  EXPECT_EQ(top["name"], "Malloc 1000 B");
  EXPECT_NE(report["feature"]["caller1"].get<std::string>().find("GrowLedger"), std::string::npos)
      << report["feature"].dump();
  double count = top["count"], count_error = top["count_error"];
  double bytes = top["bytes"], bytes_error = top["bytes_error"];
  EXPECT_GT(count_error, 0);
  EXPECT_LT(top["sampled_blocks"].get<double>(), 0.1 * static_cast<double>(truth));
  // The count file lags the tree by at most the one entry being added at the kill.
  EXPECT_NEAR(count, static_cast<double>(truth), 4 * count_error + 1) << "truth " << truth;
  EXPECT_NEAR(bytes, 1000.0 * static_cast<double>(truth), 4 * bytes_error + 1000)
      << "truth " << truth;
}

}  // namespace
}  // namespace heapgraph::proctest
