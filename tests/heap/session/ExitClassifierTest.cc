// ExitClassifier: the elimination order on hand-made session records and evidence.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <memory>

#include "heap/session/ExitClassifier.h"

namespace heapgraph {
namespace {

class ExitClassifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    session_ = std::make_unique<format::SessionHeader>();
    memset(static_cast<void*>(session_.get()), 0, sizeof(format::SessionHeader));
    session_->state.store(format::kSessionRecording);
    format::SessionRecord& r = session_->record;
    strcpy(r.boot_id, "boot-a");
    r.exe_build_id_len = 2;
    r.exe_build_id[0] = 0xab;
    r.heartbeat_interval_ms = 100;
    r.hang_threshold_ms = 1000;
    r.heartbeat_count = 10;
    r.progress_boottime_ns = 5'000'000'000;
    r.heartbeat_boottime_ns = 5'100'000'000;
    r.oom_kills_at_heartbeat = 4;
    strcpy(now_.boot_id, "boot-a");
    now_.exe_build_id_known = true;
    now_.exe_build_id_len = 2;
    now_.exe_build_id[0] = 0xab;
    now_.oom_kills_now = 4;
  }
  ExitClass Classify() { return ExitClassifier::Classify(*session_, true, now_).kind; }
  format::SessionRecord& record() { return session_->record; }

  std::unique_ptr<format::SessionHeader> session_;
  ExitEvidence now_;
};

TEST_F(ExitClassifierTest, KilledWithoutATraceInTheForegroundIsALikelyOomKill) {
  EXPECT_EQ(Classify(), ExitClass::kLikelyOomKill);
}

TEST_F(ExitClassifierTest, RunningProcessComesFirst) {
  now_.alive = true;
  record().fatal_signal = SIGSEGV;
  EXPECT_EQ(Classify(), ExitClass::kRunning);
}

TEST_F(ExitClassifierTest, FaultSignalIsACrashEvenAfterExit) {
  record().fatal_signal = SIGSEGV;
  record().exit_kind = format::kExitCalled;
  ExitClassification c = ExitClassifier::Classify(*session_, true, now_);
  EXPECT_EQ(c.kind, ExitClass::kCrash);
  EXPECT_EQ(c.signal, static_cast<uint32_t>(SIGSEGV));
  record().exit_kind = format::kExitNone;
  record().fatal_signal = SIGTERM;
  EXPECT_EQ(Classify(), ExitClass::kTerminated);  // not survived: no exit record
}

// A SIGTERM/SIGINT/SIGHUP/SIGQUIT handler that calls exit(): a clean exit with its status.
TEST_F(ExitClassifierTest, TerminatingSignalThenExitIsACleanExit) {
  for (int signal : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
    record().fatal_signal = static_cast<uint32_t>(signal);
    record().exit_kind = format::kExitCalled;
    record().exit_status = 3;
    ExitClassification c = ExitClassifier::Classify(*session_, true, now_);
    EXPECT_EQ(c.kind, ExitClass::kCleanExit) << signal;
    EXPECT_TRUE(c.exit_status_known);
    EXPECT_EQ(c.exit_status, 3);
    EXPECT_EQ(c.signal, static_cast<uint32_t>(signal));
  }
  record().exit_kind = format::kExitNone;  // returned from main after the handler set a flag
  session_->state.store(format::kSessionExited);
  EXPECT_EQ(Classify(), ExitClass::kCleanExit);
}

TEST_F(ExitClassifierTest, ExitRecordsTheStatus) {
  record().exit_kind = format::kExitImmediate;
  record().exit_status = 7;
  ExitClassification c = ExitClassifier::Classify(*session_, true, now_);
  EXPECT_EQ(c.kind, ExitClass::kCleanExit);
  EXPECT_TRUE(c.exit_status_known);
  EXPECT_EQ(c.exit_status, 7);
}

TEST_F(ExitClassifierTest, RebootMakesItUnknownBeforeAnythingThatNeedsThisBoot) {
  strcpy(now_.boot_id, "boot-b");
  now_.oom_kills_now = 5;
  EXPECT_EQ(Classify(), ExitClass::kUnknown);
}

TEST_F(ExitClassifierTest, MovedOomCounterIsProofAndBeatsAHang) {
  now_.oom_kills_now = 5;
  record().progress_boottime_ns = 1;
  EXPECT_EQ(Classify(), ExitClass::kOomKill);
  now_.oom_kills_now = format::kUnknownCounter;  // cgroup gone: no proof either way
  EXPECT_EQ(Classify(), ExitClass::kHang);
}

TEST_F(ExitClassifierTest, HangNeedsTheThresholdAndTwoHeartbeats) {
  record().progress_boottime_ns = record().heartbeat_boottime_ns - 999'000'000;
  EXPECT_EQ(Classify(), ExitClass::kLikelyOomKill);
  record().progress_boottime_ns = record().heartbeat_boottime_ns - 1'000'000'000;
  EXPECT_EQ(Classify(), ExitClass::kHang);
  record().heartbeat_count = 1;
  EXPECT_EQ(Classify(), ExitClass::kLikelyOomKill);
}

TEST_F(ExitClassifierTest, UpgradeAndBackgroundAreUnknown) {
  now_.exe_build_id[0] = 0xcd;
  EXPECT_EQ(Classify(), ExitClass::kUnknown);
  now_.exe_build_id[0] = 0xab;
  record().app_state = format::kAppBackground;
  EXPECT_EQ(Classify(), ExitClass::kUnknown);
  record().app_state = format::kAppForeground;
  EXPECT_EQ(Classify(), ExitClass::kLikelyOomKill);
}

TEST_F(ExitClassifierTest, VersionOneSessionsAreCleanOrUnknown) {
  EXPECT_EQ(ExitClassifier::Classify(*session_, false, now_).kind, ExitClass::kUnknown);
  session_->state.store(format::kSessionExited);
  EXPECT_EQ(ExitClassifier::Classify(*session_, false, now_).kind, ExitClass::kCleanExit);
}

TEST_F(ExitClassifierTest, NamesRoundTrip) {
  for (uint32_t k = 0; k <= static_cast<uint32_t>(ExitClass::kUnknown); ++k) {
    ExitClass parsed;
    ASSERT_TRUE(ExitClassifier::FromName(ExitClassifier::Name(static_cast<ExitClass>(k)), &parsed));
    EXPECT_EQ(static_cast<uint32_t>(parsed), k);
  }
  ExitClass ignored;
  EXPECT_FALSE(ExitClassifier::FromName("oom", &ignored));
}

}  // namespace
}  // namespace heapgraph
