// The lag monitor on real children (tests/programs/hg_lag.cc, linked with libheapgraph): a unit
// of work that sleeps 3 s is one lag whose stack names its handler; of two alternating slow
// functions the more frequent one is chosen; two threads lagging at once each name their own
// handler; a deadlock writes a bounded number of records (annealing); a CPU-bound loop of short
// units is recorded by the CPU rule; a process killed during a lag leaves the lag in progress (no
// end record). Reads the `lag` file with reader/LagRecords and the stacks with RecordingReader.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "reader/LagRecords.h"
#include "reader/RecordingReader.h"
#include "tests/ChildProcess.h"
#include "tests/CliJson.h"

namespace heapgraph::proctest {
namespace {

using std::chrono::milliseconds;

// Short periods so that the tests take seconds: checks every 100 ms, lags from 500 ms.
const char* kFastOptions = "lag_interval_ms=100,lag_threshold_ms=500,lag_sample_ms=20";

bool StackHas(const RecordingReader& reader, uint32_t stack, const AddressRange& range) {
  for (uint64_t frame : reader.Frames(stack)) {
    if (range.Contains(frame) || range.Contains(frame - 1)) return true;
  }
  return false;
}

std::vector<format::LagRecord> OfKind(const LagRecords& lag, uint32_t kind) {
  std::vector<format::LagRecord> out;
  for (const auto& r : lag.records()) {
    if (r.kind == kind) out.push_back(r);
  }
  return out;
}

struct LagRun {
  TempRoot root;
  std::unique_ptr<ChildProcess> child;
  std::string dir;

  LagRun(const std::string& mode, const std::string& options = kFastOptions) {
    child = std::make_unique<ChildProcess>(ProgramPath("hg_lag"), std::vector<std::string>{mode},
                                           RecordingEnv(root.path(), options, false));
    EXPECT_TRUE(child->WaitReady()) << child->Describe();
    dir = child->Field("dir").at(0);
  }
  // Reads the child's output to its end and waits for it: true when it exited with status 0.
  bool Completed(std::chrono::milliseconds timeout = kDefaultTimeout) {
    return child->ReadToEof(timeout) && child->Finish();
  }
  // Waits (bounded) until the lag file has a record of `kind`.
  LagRecords WaitFor(uint32_t kind) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      LagRecords lag(dir);
      if (!OfKind(lag, kind).empty() || std::chrono::steady_clock::now() > deadline) return lag;
      std::this_thread::sleep_for(milliseconds(20));
    }
  }
};

TEST(RecorderLagTest, SleepingHandlerIsOneLagNamingIt) {
  LagRun run("sleep");
  ASSERT_TRUE(run.Completed()) << run.child->Describe();
  LagRecords lag(run.dir);
  ASSERT_TRUE(lag.present());
  EXPECT_FALSE(lag.torn());
  auto lags = OfKind(lag, format::kLagLong);
  ASSERT_GE(lags.size(), 1u) << run.child->Describe();
  std::set<uint64_t> units;
  for (const auto& r : lags) units.insert(r.unit);
  EXPECT_EQ(units.size(), 1u) << "one unit of work lagged";
  const format::LagRecord& first = lags.front();
  EXPECT_GE(first.duration_ns, 500000000u);
  EXPECT_GT(first.sample_count, 0u);
  EXPECT_GT(first.stack_repeats, 0u);
  RecordingReader reader(run.dir, RecordingReader::Content::kStacksAndModules);
  EXPECT_TRUE(StackHas(reader, first.stack, RangeOf(*run.child, "SleepingHandler")));
  auto ended = OfKind(lag, format::kLagEnded);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_GE(ended[0].duration_ns, 2900000000u);
  EXPECT_EQ(lag.InProgress(), nullptr);
}

// `heapgraph lag DIR` on the same run: one ended lag of the main thread, its most
// time-consuming stack symbolized and naming the handler, in text and JSON.
TEST(RecorderLagTest, LagCommandReportsTheLagNamingItsHandler) {
  LagRun run("sleep");
  ASSERT_TRUE(run.Completed()) << run.child->Describe();
  nlohmann::json report = CliJson({"lag", run.dir, "--json"});
  EXPECT_EQ(report["format"], "heapgraph-lag-report");
  EXPECT_EQ(report["torn"], false);
  std::vector<nlohmann::json> long_lags;
  for (const auto& lag : report["lags"]) {
    if (lag["kind"] == "long") long_lags.push_back(lag);
  }
  ASSERT_EQ(long_lags.size(), 1u) << report.dump(1);
  const nlohmann::json& lag = long_lags[0];
  EXPECT_EQ(lag["tid"], run.child->pid()) << "the main thread";
  EXPECT_EQ(lag["ended"], true);
  EXPECT_GE(lag["duration_ns"].get<uint64_t>(), 2900000000u);
  EXPECT_GT(lag["samples"].get<uint32_t>(), 0u);
  EXPECT_GT(lag["repeats"].get<uint32_t>(), 0u);
  EXPECT_TRUE(FramesName(lag["frames"], "SleepingHandler")) << lag.dump();
  RunResult plain = RunToExit(HEAPGRAPH_CLI, {"lag", run.dir}, {});
  ASSERT_TRUE(plain.status && WIFEXITED(*plain.status) && WEXITSTATUS(*plain.status) == 0);
  std::string lines;
  for (const std::string& line : plain.lines) lines += line + "\n";
  EXPECT_NE(lines.find("(long unit): thread " + std::to_string(run.child->pid())),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("SleepingHandler"), std::string::npos) << lines;
}

TEST(RecorderLagTest, TheMoreFrequentOfTwoSlowFunctionsIsChosen) {
  // Sampled every 10 ms: the first record holds 20 samples or more even on a loaded machine.
  LagRun run("alternate", "lag_interval_ms=100,lag_threshold_ms=500,lag_sample_ms=10,lag_ring=64");
  ASSERT_TRUE(run.Completed(milliseconds(120000))) << run.child->Describe();
  LagRecords lag(run.dir);
  RecordingReader reader(run.dir, RecordingReader::Content::kStacksAndModules);
  AddressRange frequent = RangeOf(*run.child, "FrequentSpin");
  AddressRange rare = RangeOf(*run.child, "RareSpin");
  int frequent_chosen = 0, rare_chosen = 0;
  for (const auto& r : OfKind(lag, format::kLagLong)) {
    if (r.sample_count < 20) continue;  // a full ring holds several rounds of both
    if (StackHas(reader, r.stack, frequent)) ++frequent_chosen;
    if (StackHas(reader, r.stack, rare)) ++rare_chosen;
  }
  std::string chosen;
  for (const auto& r : OfKind(lag, format::kLagLong)) {
    chosen += "\nstack " + std::to_string(r.stack) + " x" + std::to_string(r.stack_repeats) + ":";
    for (uint64_t f : reader.Frames(r.stack)) chosen += " " + std::to_string(f);
  }
  // Sampling is statistical: on a loaded machine a ring can cover a stretch where the rare
  // function ran longer, so the verdict is the majority of the records, not every record. The
  // frequent function takes 4x the rare one's time (it was 2x: one CI run in three on this
  // 2-core VM chose the rare one more often; a stack's top frame is the interrupted instruction,
  // so each function's samples spread over its loop's few instructions).
  EXPECT_GT(frequent_chosen, 0) << run.child->Describe() << chosen;
  EXPECT_GT(frequent_chosen, 2 * rare_chosen) << run.child->Describe() << chosen;
}

// The issue asks for a bounded number of records over 30 s: at the default 1 s interval that is
// 30 checks. Annealing counts checks, not seconds (heap/lag/Annealing.h), so 10 s at 100 ms, 100
// checks, covers more of the Fibonacci back-off than 30 s at the default would, without making
// the suite 20 s longer.
TEST(RecorderLagTest, DeadlockWritesABoundedNumberOfRecords) {
  LagRun run("deadlock");
  std::this_thread::sleep_for(std::chrono::seconds(10));  // 100 checks
  run.child->Kill(SIGKILL);
  run.child->Wait();
  LagRecords lag(run.dir);
  auto lags = OfKind(lag, format::kLagLong);
  ASSERT_GE(lags.size(), 1u);
  EXPECT_LE(lags.size(), 3u) << "annealing: the same stack is not written again";
  RecordingReader reader(run.dir, RecordingReader::Content::kStacksAndModules);
  EXPECT_TRUE(StackHas(reader, lags.back().stack, RangeOf(*run.child, "DeadlockedHandler")));
  ASSERT_NE(lag.InProgress(), nullptr);
}

TEST(RecorderLagTest, CpuBoundLoopOfShortUnitsIsRecorded) {
  // 20 %: the machine may be loaded (the rule measures a share of a core, not a time).
  LagRun run("cpu", "lag_interval_ms=200,lag_cpu_percent=20");
  ASSERT_TRUE(run.Completed()) << run.child->Describe();
  LagRecords lag(run.dir);
  auto cpu = OfKind(lag, format::kLagCpu);
  ASSERT_GE(cpu.size(), 1u) << run.child->Describe();
  EXPECT_GT(cpu[0].cpu_permille, 200u);
  EXPECT_TRUE(OfKind(lag, format::kLagLong).empty());
}

TEST(RecorderLagTest, KilledDuringALagIsAHangNamedByItsStack) {
  LagRun run("hang");
  LagRecords lag = run.WaitFor(format::kLagLong);
  ASSERT_FALSE(OfKind(lag, format::kLagLong).empty());
  run.child->Kill(SIGKILL);
  run.child->Wait();
  LagRecords after(run.dir);
  EXPECT_FALSE(after.torn());
  const format::LagRecord* open = after.InProgress();
  ASSERT_NE(open, nullptr);
  RecordingReader reader(run.dir, RecordingReader::Content::kStacksAndModules);
  EXPECT_TRUE(StackHas(reader, open->stack, RangeOf(*run.child, "SleepingHandler")));
  // heapgraph foom: a hang, named by the lag's stack (crash-lag), not "likely OOM kill".
  nlohmann::json report = CliJson({"foom", run.dir, "--json"});
  EXPECT_EQ(report["exit"]["kind"], "hang");
  EXPECT_NE(report["exit"]["reason"].get<std::string>().find("crash-lag"), std::string::npos);
  ASSERT_TRUE(report["crash_lag"].is_object());
  EXPECT_EQ(report["crash_lag"]["stack_id"], open->stack);
  EXPECT_TRUE(FramesName(report["crash_lag"]["frames"], "SleepingHandler"))
      << report["crash_lag"].dump();
}

// Several monitored threads at once: two threads lag at the same time, each in its own handler.
// Each thread's lag is its own (its tid), names its own handler and not the other's, ends with
// the whole 3 s unit, and the two lags overlap in time; `heapgraph lag` reports both likewise.
TEST(RecorderLagTest, TwoThreadsLaggingAtOnceEachNameTheirOwnHandler) {
  LagRun run("twothreads");
  ASSERT_TRUE(run.Completed()) << run.child->Describe();
  std::vector<std::vector<std::string>> workers = run.child->Records("worker");
  ASSERT_EQ(workers.size(), 2u) << run.child->Describe();
  LagRecords lag(run.dir);
  EXPECT_FALSE(lag.torn());
  RecordingReader reader(run.dir, RecordingReader::Content::kStacksAndModules);
  nlohmann::json report = CliJson({"lag", run.dir, "--json"});
  uint64_t start[2] = {0, 0}, end[2] = {0, 0};
  for (size_t w = 0; w < 2; ++w) {
    const std::string& handler = workers[w][0];
    const std::string& other = workers[1 - w][0];
    int32_t tid = static_cast<int32_t>(ParseNumber(workers[w][1]));
    std::vector<format::LagRecord> lags, ended;
    for (const auto& r : lag.records()) {
      if (r.tid == tid && r.kind == format::kLagLong) lags.push_back(r);
      if (r.tid == tid && r.kind == format::kLagEnded) ended.push_back(r);
    }
    ASSERT_GE(lags.size(), 1u) << handler << run.child->Describe();
    EXPECT_TRUE(StackHas(reader, lags.back().stack, RangeOf(*run.child, handler))) << handler;
    EXPECT_FALSE(StackHas(reader, lags.back().stack, RangeOf(*run.child, other))) << handler;
    ASSERT_EQ(ended.size(), 1u) << handler;
    EXPECT_GE(ended[0].duration_ns, 2900000000u) << handler;
    start[w] = lags.front().realtime_ns - lags.front().duration_ns;
    end[w] = ended[0].realtime_ns;
    int reported = 0;
    for (const auto& entry : report["lags"]) {
      if (entry["kind"] != "long" || entry["tid"] != tid) continue;
      ++reported;
      EXPECT_TRUE(FramesName(entry["frames"], handler)) << entry.dump(1);
      EXPECT_FALSE(FramesName(entry["frames"], other)) << entry.dump(1);
    }
    EXPECT_EQ(reported, 1) << report.dump(1);
  }
  EXPECT_TRUE(start[0] < end[1] && start[1] < end[0]) << "the two lags overlap";
  for (const auto& r : lag.records()) {
    EXPECT_NE(r.tid, run.child->pid()) << "the main thread waits outside any unit";
  }
  EXPECT_EQ(lag.InProgress(), nullptr);
}

// The leak check's stop-the-world while the watchdog samples the same thread every 20 ms: three
// signal-triggered checks all finish and the child keeps being sampled (never a deadlock).
TEST(RecorderLagTest, LeakChecksDuringSamplingFinish) {
  LagRun run("hang", std::string(kFastOptions) + ",scan_signal=39,leak_text=");
  run.WaitFor(format::kLagLong);
  for (int check = 1; check <= 3; ++check) {
    std::string report = run.dir + "/leaks-" + std::to_string(check) + ".json";
    kill(run.child->pid(), 39);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(report) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
    }
    ASSERT_TRUE(std::filesystem::exists(report)) << "check " << check << run.child->Describe();
  }
  LagRecords before(run.dir);
  uint32_t samples_before = before.InProgress()->sample_count;
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(kill(run.child->pid(), 0), 0) << "the child is alive";
  run.child->Kill(SIGKILL);
  run.child->Wait();
  EXPECT_GT(samples_before, 0u);
}

// The public C API while the monitor samples: a second thread's three heapgraph_check_leaks()
// calls during the main thread's 3 s lag all run (stopping the sampled thread) and the lag is
// still one, ended, naming its handler.
TEST(RecorderLagTest, CApiChecksDuringALagFinishAndTheLagStands) {
  LagRun run("apicheck");
  ASSERT_TRUE(run.Completed()) << run.child->Describe();
  int checks = 0;
  for (const std::string& line : run.child->lines()) {
    if (line.rfind("check ", 0) != 0) continue;
    ++checks;
    EXPECT_EQ(line.find(" -1"), std::string::npos) << "the check ran: " << line;
  }
  EXPECT_EQ(checks, 3) << run.child->Describe();
  LagRecords lag(run.dir);
  auto lags = OfKind(lag, format::kLagLong);
  ASSERT_GE(lags.size(), 1u) << run.child->Describe();
  RecordingReader reader(run.dir, RecordingReader::Content::kStacksAndModules);
  EXPECT_TRUE(StackHas(reader, lags.front().stack, RangeOf(*run.child, "SleepingHandler")));
  EXPECT_EQ(OfKind(lag, format::kLagEnded).size(), 1u);
}

// ---- bad input and safety ---------------------------------------------------------------------

// A thread that blocks the sampling signal: the lag is still recorded, without a stack, the
// unanswered signals counted as missed (never queued twice), and the program finishes.
TEST(RecorderLagTest, BlockedSamplingSignalIsCountedMissed) {
  LagRun run("blocked");
  ASSERT_TRUE(run.Completed()) << run.child->Describe();
  LagRecords lag(run.dir);
  auto lags = OfKind(lag, format::kLagLong);
  ASSERT_GE(lags.size(), 1u) << run.child->Describe();
  EXPECT_EQ(lags.front().sample_count, 0u);
  EXPECT_EQ(lags.front().stack, 0u);
  EXPECT_GT(lags.front().samples_missed, 0u);
  EXPECT_EQ(lag.InProgress(), nullptr);
}

// A monitored thread that exits in the middle of a sampled lag: its lag is closed by an end
// record (not taken for a lag in progress at death), the process goes on and finishes.
TEST(RecorderLagTest, ThreadExitingDuringItsLagEndsIt) {
  LagRun run("threadexit");
  ASSERT_TRUE(run.Completed()) << run.child->Describe();
  int32_t tid = static_cast<int32_t>(run.child->Number("tid"));
  LagRecords lag(run.dir);
  bool lagged = false, ended = false;
  for (const auto& r : lag.records()) {
    if (r.tid != tid) continue;
    lagged |= r.kind == format::kLagLong && r.sample_count > 0;
    ended |= r.kind == format::kLagEnded;
  }
  EXPECT_TRUE(lagged) << run.child->Describe();
  EXPECT_TRUE(ended) << "the thread's exit ends its lag";
  EXPECT_EQ(lag.InProgress(), nullptr);
}

// A unit running inside a signal handler: sampled through the handler's signal frame, the stack
// names the handler.
TEST(RecorderLagTest, UnitInsideASignalHandlerIsSampledThroughIt) {
  LagRun run("inhandler");
  ASSERT_TRUE(run.Completed()) << run.child->Describe();
  LagRecords lag(run.dir);
  auto lags = OfKind(lag, format::kLagLong);
  ASSERT_GE(lags.size(), 1u) << run.child->Describe();
  RecordingReader reader(run.dir, RecordingReader::Content::kStacksAndModules);
  EXPECT_TRUE(StackHas(reader, lags.front().stack, RangeOf(*run.child, "InSignalHandler")));
}

// An event loop that never calls end before the program exits normally: the lag stays open in
// `heapgraph lag`, and `heapgraph foom` does not call a normal exit a hang.
TEST(RecorderLagTest, UnitNeverEndedBeforeANormalExitIsOpenNotAHang) {
  LagRun run("noend");
  ASSERT_TRUE(run.Completed()) << run.child->Describe();
  ASSERT_NE(LagRecords(run.dir).InProgress(), nullptr);
  nlohmann::json lag = CliJson({"lag", run.dir, "--json"});
  ASSERT_EQ(lag["lags"].size(), 1u) << lag.dump(1);
  EXPECT_EQ(lag["lags"][0]["open"], true);
  nlohmann::json foom = CliJson({"foom", run.dir, "--json"});
  EXPECT_NE(foom["exit"]["kind"], "hang") << foom["exit"].dump();
  EXPECT_TRUE(foom["crash_lag"].is_null());
}

// Thresholds of 0 and absurd values: one clear line each on stderr, the defaults kept (the lag
// file's header says what was in force).
TEST(RecorderLagTest, BadLagOptionsAreOneLineEachAndDefaultsKept) {
  LagRun run("sleep",
             "lag_threshold_ms=0,lag_interval_ms=99999999999,lag_sample_ms=5,lag_ring=0,"
             "lag_cpu_percent=500,lag_threshold_ms=-3");
  ASSERT_TRUE(run.Completed()) << run.child->Describe();
  int bad = 0;
  for (const std::string& line : run.child->StderrLines()) {
    if (line.rfind("heapgraph: bad value for option 'lag_", 0) == 0) ++bad;
  }
  EXPECT_EQ(bad, 6) << run.child->Stderr();
  LagRecords lag(run.dir);
  ASSERT_TRUE(lag.present());
  EXPECT_EQ(lag.header().threshold_ms, 2000u);
  EXPECT_EQ(lag.header().interval_ms, 1000u);
  EXPECT_EQ(lag.header().sample_ms, 50u);
  EXPECT_EQ(lag.header().ring, 20u);
  EXPECT_EQ(lag.header().cpu_percent, 80u);
}

// What a kill in the middle of a lag write leaves (a short last record; one write() per record
// makes it rare on a local file system, so the tail is cut here after the real SIGKILL): the
// record is detected as torn and reported by `heapgraph lag` and `heapgraph foom`, and the lag
// before it is still the crash-lag.
TEST(RecorderLagTest, RecordTornByAKillIsDetectedAndReported) {
  LagRun run("hang");
  run.WaitFor(format::kLagLong);
  run.child->Kill(SIGKILL);
  run.child->Wait();
  format::LagRecord partial = *LagRecords(run.dir).InProgress();
  partial.kind = format::kLagEnded;
  partial.check = format::LagCheck(partial);
  std::ofstream(run.dir + "/lag", std::ios::binary | std::ios::app)
      .write(reinterpret_cast<const char*>(&partial), sizeof(partial) / 2);
  LagRecords after(run.dir);
  EXPECT_TRUE(after.torn());
  nlohmann::json lag = CliJson({"lag", run.dir, "--json"});
  EXPECT_EQ(lag["torn"], true);
  ASSERT_FALSE(lag["lags"].empty());
  EXPECT_EQ(lag["lags"].back()["open"], true);
  nlohmann::json foom = CliJson({"foom", run.dir, "--json"});
  EXPECT_EQ(foom["exit"]["kind"], "hang");
  bool warned = false;
  for (const auto& w : foom["warnings"]) {
    warned |= w.get<std::string>().find("lag: the last record was torn") != std::string::npos;
  }
  EXPECT_TRUE(warned) << foom["warnings"].dump();
}

}  // namespace
}  // namespace heapgraph::proctest
