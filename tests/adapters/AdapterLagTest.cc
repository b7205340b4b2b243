// The lag monitor's event-loop adapters (adapters/) on real programs built against the Debian
// packages, run with libheapgraph.so preloaded, and built a second time linked with it (the
// adapters reference the API weakly, so both bind): a libuv timer callback, a GLib timeout and a
// Boost.Asio timer handler that sleep 3 s are each one lag, ended, lasting the whole 3 s (not the
// short units after it), whose most time-consuming stack, as `heapgraph lag --json` reports it,
// names the handler. A libuv or GLib program killed during its lag is a hang named by the handler
// (`heapgraph foom`, crash-lag). Without the recorder the adapters do nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "reader/LagRecords.h"
#include "tests/ChildProcess.h"
#include "tests/CliJson.h"

namespace heapgraph::proctest {
namespace {

const char* kFastOptions = "lag_interval_ms=100,lag_threshold_ms=500,lag_sample_ms=20";

// Runs tests/programs/<program> to its end, with libheapgraph.so preloaded or (`preload` false)
// linked into the program; the one lag it had names `handler`.
void ExpectOneLagNaming(const std::string& program, const std::string& handler,
                        bool preload = true) {
  TempRoot root;
  ChildProcess child(ProgramPath(program), {}, RecordingEnv(root.path(), kFastOptions, preload));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  ASSERT_TRUE(child.ReadToEof()) << child.Describe();
  ASSERT_TRUE(child.Finish()) << child.Describe();
  std::string dir = root.DirectoryOf(child.pid());
  ASSERT_FALSE(dir.empty());
  nlohmann::json report = CliJson({"lag", dir, "--json"});
  ASSERT_EQ(report["present"], true) << "the adapter called heapgraph_work_begin";
  EXPECT_EQ(report["torn"], false);
  ASSERT_EQ(report["lags"].size(), 1u) << report.dump(1);
  const nlohmann::json& lag = report["lags"][0];
  EXPECT_EQ(lag["kind"], "long");
  EXPECT_EQ(lag["tid"], child.pid());
  EXPECT_EQ(lag["ended"], true);
  EXPECT_GE(lag["duration_ns"].get<uint64_t>(), 2900000000u) << "the whole 3 s unit";
  EXPECT_GT(lag["repeats"].get<uint32_t>(), 0u);
  EXPECT_TRUE(FramesName(lag["frames"], handler)) << lag.dump(1);
}

TEST(AdapterLagTest, LibuvCallbackSleeping3sIsOneLagNamingIt) {
  ExpectOneLagNaming("hg_uv_lag", "UvSlowHandler");
}

TEST(AdapterLagTest, GlibTimeoutSleeping3sIsOneLagNamingIt) {
  ExpectOneLagNaming("hg_glib_lag", "GlibSlowHandler");
}

TEST(AdapterLagTest, AsioHandlerSleeping3sIsOneLagNamingIt) {
  ExpectOneLagNaming("hg_asio_lag", "AsioSlowHandler");
}

// The same programs linked with libheapgraph (before libc) and run without LD_PRELOAD: the
// adapters' weak references bind to the linked recorder, and the lag is the same.
TEST(AdapterLagTest, LinkedLibuvCallbackSleeping3sIsOneLagNamingIt) {
  ExpectOneLagNaming("hg_uv_lag_linked", "UvSlowHandler", false);
}

TEST(AdapterLagTest, LinkedGlibTimeoutSleeping3sIsOneLagNamingIt) {
  ExpectOneLagNaming("hg_glib_lag_linked", "GlibSlowHandler", false);
}

TEST(AdapterLagTest, LinkedAsioHandlerSleeping3sIsOneLagNamingIt) {
  ExpectOneLagNaming("hg_asio_lag_linked", "AsioSlowHandler", false);
}

// Runs tests/programs/<program> "hang" preloaded and kills it with SIGKILL during its lag:
// `heapgraph foom` calls the run a hang named by `handler` (crash-lag), `heapgraph lag` shows the
// lag open.
void ExpectKilledLagIsAHangNaming(const std::string& program, const std::string& handler) {
  TempRoot root;
  ChildProcess child(ProgramPath(program), {"hang"}, RecordingEnv(root.path(), kFastOptions));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  std::string dir = root.DirectoryOf(child.pid());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (LagRecords(dir).InProgress() == nullptr && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(LagRecords(dir).InProgress(), nullptr);
  child.Kill(SIGKILL);
  child.Wait();
  nlohmann::json foom = CliJson({"foom", dir, "--json"});
  EXPECT_EQ(foom["exit"]["kind"], "hang");
  EXPECT_TRUE(FramesName(foom["crash_lag"]["frames"], handler)) << foom["crash_lag"].dump(1);
  nlohmann::json lag = CliJson({"lag", dir, "--json"});
  ASSERT_EQ(lag["lags"].size(), 1u);
  EXPECT_EQ(lag["lags"][0]["open"], true);
}

TEST(AdapterLagTest, LibuvProgramKilledDuringItsLagIsAHangNamedByIt) {
  ExpectKilledLagIsAHangNaming("hg_uv_lag", "UvSlowHandler");
}

TEST(AdapterLagTest, GlibProgramKilledDuringItsLagIsAHangNamedByIt) {
  ExpectKilledLagIsAHangNaming("hg_glib_lag", "GlibSlowHandler");
}

// Without libheapgraph.so in the process the weak references are null: the adapters do nothing
// and the programs run as usual.
TEST(AdapterLagTest, WithoutTheRecorderTheAdaptersDoNothing) {
  for (const char* program : {"hg_uv_lag", "hg_glib_lag", "hg_asio_lag"}) {
    ChildProcess child(ProgramPath(program), {}, {});
    ASSERT_TRUE(child.WaitReady()) << child.Describe();
    ASSERT_TRUE(child.ReadToEof()) << child.Describe();
    EXPECT_TRUE(child.Finish()) << child.Describe();
  }
}

}  // namespace
}  // namespace heapgraph::proctest
