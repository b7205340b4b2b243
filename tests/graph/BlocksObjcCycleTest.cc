// tests/scanner: end-to-end retain cycles through clang Blocks and Objective-C objects. Each case
// runs `heapgraph run --json FILE -- tests/programs/PROGRAM CASE` (the real leak check at exit, in
// a real child) and checks the JSON report's typed cycles: kind, leaked or reachable, and the
// members' types and owning fields; the controls (weak_ptr, plain and __block captures, assign
// delegates, invalidated timers) must give no typed cycle, leaked or reachable.
//   cycle_blocks       C++ with Blocks (clang -fblocks, libBlocksRuntime)
//   cycle_objc         GNUstep Base objects (gobjc, manual retain/release)
//   cycle_objc_blocks  GNUstep Base objects captured by Blocks (clang -fobjc-runtime=gcc)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "CycleCase.h"

namespace heapgraph {
namespace {

using nlohmann::json;

using cycletest::CaseRun;
using cycletest::RunCase;
using cycletest::TypedCycles;

struct Member {
  std::string type;
  std::string field;
};

// The members on the cycle's path, canonical order.
std::vector<Member> CycleMemberKinds(const json& cycle) {
  std::vector<Member> out;
  for (const json& i : cycle["path"]) {
    const json& m = cycle["members"][i.get<size_t>()];
    out.push_back({m["type"].get<std::string>(), m.value("field", std::string("?"))});
  }
  return out;
}

std::string Describe(const json& cycle) {
  return cycle.dump(1);
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

class BlocksObjcCycles : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    // GNUstep Base wants a writable home for its defaults database.
    static char home[] = "/tmp/hg_gnustep_home_XXXXXX";
    if (mkdtemp(home) != nullptr) {
      setenv("HOME", home, 1);
      setenv("GNUSTEP_USER_ROOT", home, 1);
    }
  }
  static CaseRun Run(const std::string& program, const std::string& name,
                     const std::vector<std::string>& options = {}) {
    CaseRun run = RunCase(program, name, options);
    EXPECT_FALSE(run.report.is_discarded()) << program << " " << name << ": no JSON report";
    return run;
  }
  static void ExpectNoTypedCycle(const std::string& program, const std::string& name) {
    CaseRun run = Run(program, name);
    std::vector<json> cycles = TypedCycles(run);
    EXPECT_TRUE(cycles.empty()) << program << " " << name << ": " << Describe(cycles[0]);
  }
};

TEST_F(BlocksObjcCycles, BlockCapturingASharedPtrCopyOfItsOwner) {
  CaseRun run = Run("cycle_blocks", "shared_capture");
  EXPECT_EQ(run.status, 23);
  std::vector<json> cycles = TypedCycles(run);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0]["kind"], "block-self");
  EXPECT_TRUE(cycles[0]["leaked"].get<bool>());
  std::vector<Member> m = CycleMemberKinds(cycles[0]);
  ASSERT_EQ(m.size(), 2u) << Describe(cycles[0]);
  // The invoke function's C++ name, demangled (report/BlockInvokeName).
  EXPECT_EQ(m[0].type, "Block (block in (anonymous namespace)::SharedCapture())");
  EXPECT_EQ(m[0].field, "captured slot 0");
  EXPECT_EQ(m[1].type, "blocks::ChatSession");
  EXPECT_EQ(m[1].field, "onMessage");
}

TEST_F(BlocksObjcCycles, BlockCapturingItsOwnerThroughABlockVariable) {
  CaseRun run = Run("cycle_blocks", "byref_capture");
  EXPECT_EQ(run.status, 23);
  std::vector<json> cycles = TypedCycles(run);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0]["kind"], "block-self");
  std::vector<Member> m = CycleMemberKinds(cycles[0]);
  ASSERT_EQ(m.size(), 3u) << Describe(cycles[0]);
  EXPECT_EQ(m[0].type, "Block (block in (anonymous namespace)::ByrefCapture())");
  EXPECT_EQ(m[0].field, "captured slot 0");
  EXPECT_EQ(m[1].type, "__block variable");
  EXPECT_TRUE(StartsWith(m[1].field, "__block slot 0")) << m[1].field;
  EXPECT_EQ(m[2].type, "blocks::ChatSession");
  EXPECT_EQ(m[2].field, "onMessage");
}

TEST_F(BlocksObjcCycles, BlockCapturingAWeakPtrOrAPlainPointerIsNoCycle) {
  ExpectNoTypedCycle("cycle_blocks", "weak_capture");
  ExpectNoTypedCycle("cycle_blocks", "plain_capture");
}

// The session's raw pointer to the Block the registry owns is a second holder of a Block whose
// reference count is 1 (graph/StrongReferences rule 3): neither holder is taken as owning.
TEST_F(BlocksObjcCycles, ARawPointerToABlockOwnedElsewhereIsNoCycle) {
  ExpectNoTypedCycle("cycle_blocks", "raw_holder");
}

// A leaked cycle proves that every reference on it held: through a Block's captured slot it is
// block-self, although the owner is an untyped C struct (no retain cycle: nothing typed owns it).
TEST_F(BlocksObjcCycles, LeakedCycleThroughABlockAndAnUntypedCStructIsBlockSelf) {
  CaseRun run = Run("cycle_blocks", "c_struct_owner");
  EXPECT_EQ(run.status, 23);
  const json& cycles = run.report["cycles"];
  ASSERT_EQ(cycles.size(), 1u) << run.text;
  EXPECT_EQ(cycles[0]["kind"], "block-self") << Describe(cycles[0]);
  EXPECT_TRUE(cycles[0]["leaked"].get<bool>());
  EXPECT_FALSE(cycles[0]["typed"].get<bool>());
  ASSERT_EQ(cycles[0]["members"].size(), 2u) << Describe(cycles[0]);
}

TEST_F(BlocksObjcCycles, TimerRetainingItsTargetWhileTheRunLoopHoldsIt) {
  CaseRun run = Run("cycle_objc", "timer_target");
  std::vector<json> cycles = TypedCycles(run);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0]["kind"], "timer-target");
  EXPECT_FALSE(cycles[0]["leaked"].get<bool>());  // the run loop still holds the timer
  std::vector<Member> m = CycleMemberKinds(cycles[0]);
  ASSERT_EQ(m.size(), 2u) << Describe(cycles[0]);
  EXPECT_EQ(m[0].type + "." + m[0].field, "HGPoller._timer");
  EXPECT_EQ(m[1].type + "." + m[1].field, "NSTimer._target");
  ASSERT_TRUE(cycles[0]["root"].is_object()) << Describe(cycles[0]);
  // GNUstep keeps the current NSThread (which holds the run loop) in thread-local storage.
  EXPECT_EQ(cycles[0]["root"]["kind"], "tls") << Describe(cycles[0]);
  EXPECT_FALSE(cycles[0]["root"]["path"].empty()) << Describe(cycles[0]);
}

TEST_F(BlocksObjcCycles, StrongDelegatePointingBack) {
  CaseRun run = Run("cycle_objc", "strong_delegate");
  std::vector<json> cycles = TypedCycles(run);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0]["kind"], "delegate");
  EXPECT_TRUE(cycles[0]["leaked"].get<bool>());
  std::vector<Member> m = CycleMemberKinds(cycles[0]);
  ASSERT_EQ(m.size(), 2u) << Describe(cycles[0]);
  EXPECT_EQ(m[0].type + "." + m[0].field, "CAAnimation.delegate");
  EXPECT_EQ(m[1].type + "." + m[1].field, "HGLayerOwner._animation");
}

TEST_F(BlocksObjcCycles, InvalidatedTimerAndAssignDelegateAreNoCycle) {
  ExpectNoTypedCycle("cycle_objc", "timer_invalidated");
  ExpectNoTypedCycle("cycle_objc", "assign_delegate");
}

// The same weak-named _delegate, leaked with its controller: the leaked cycle is kind delegate
// (HGView is outside the exceptions table; the convention only decides reachable cycles).
TEST_F(BlocksObjcCycles, LeakedCycleThroughAWeakNamedDelegateIsDelegate) {
  CaseRun run = Run("cycle_objc", "leaked_delegate");
  EXPECT_EQ(run.status, 23);
  EXPECT_TRUE(TypedCycles(run).empty()) << run.text;  // no retain cycle: _delegate does not own
  const json& cycles = run.report["cycles"];
  ASSERT_EQ(cycles.size(), 1u) << run.text;
  EXPECT_EQ(cycles[0]["kind"], "delegate") << Describe(cycles[0]);
  EXPECT_TRUE(cycles[0]["leaked"].get<bool>());
  std::vector<std::string> types;
  for (const json& m : cycles[0]["members"]) types.push_back(m["type"]);
  std::sort(types.begin(), types.end());
  EXPECT_EQ(types, (std::vector<std::string>{"HGController", "HGView"})) << Describe(cycles[0]);
}

TEST_F(BlocksObjcCycles, UserRuleMakesAnAssignDelegateStrong) {
  char path[] = "/tmp/hg_objc_ivars_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "# HGView retains its delegate in this app\nHGView _delegate strong\n";
  CaseRun run = Run("cycle_objc", "assign_delegate", {"--objc-ivars", path});
  std::remove(path);
  std::vector<json> cycles = TypedCycles(run);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0]["kind"], "delegate");
  EXPECT_FALSE(cycles[0]["leaked"].get<bool>());  // g_controller holds it
  std::vector<Member> m = CycleMemberKinds(cycles[0]);
  ASSERT_EQ(m.size(), 2u) << Describe(cycles[0]);
  EXPECT_EQ(m[0].type + "." + m[0].field, "HGController._view");
  EXPECT_EQ(m[1].type + "." + m[1].field, "HGView._delegate");
}

TEST_F(BlocksObjcCycles, BlockCapturingItsObjectiveCOwner) {
  CaseRun run = Run("cycle_objc_blocks", "block_self");
  std::vector<json> cycles = TypedCycles(run);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0]["kind"], "block-self");
  EXPECT_TRUE(cycles[0]["leaked"].get<bool>());
  std::vector<Member> m = CycleMemberKinds(cycles[0]);
  ASSERT_EQ(m.size(), 2u) << Describe(cycles[0]);
  // The GNU runtime's method name, as the runtime spells it.
  EXPECT_EQ(m[0].type, "Block (block in _i_ChatSession__start)");
  EXPECT_EQ(m[0].field, "captured slot 0");
  EXPECT_EQ(m[1].type + "." + m[1].field, "ChatSession._onMessage");
}

TEST_F(BlocksObjcCycles, BlockVariableAndPlainPointerCapturesOfTheOwnerAreNoCycle) {
  ExpectNoTypedCycle("cycle_objc_blocks", "byref_self");
  ExpectNoTypedCycle("cycle_objc_blocks", "unretained_self");
}

// With libBlocksRuntime and libobjc loaded, every reader's Prepare runs in full before the stop;
// none may leave the dead frames of an exited thread's cached stack looking like a root.
TEST_F(BlocksObjcCycles, PreparingTheReadersKeepsAnExitedThreadsDeadFramesDead) {
  CaseRun run = Run("cycle_objc_blocks", "thread_stale");
  uint64_t leaked = 0;
  for (const json& leak : run.report.value("leaks", json::array())) {
    for (const json& frame : leak["stack"]) {
      if (frame.value("function", json()).is_string() &&
          frame["function"].get<std::string>() == "leak_in_thread_stale") {
        leaked += leak["count"].get<uint64_t>();
        EXPECT_EQ(leak["size"].get<uint64_t>(), 224u * leak["count"].get<uint64_t>());
        break;
      }
    }
  }
  EXPECT_EQ(leaked, 4u) << run.report.dump(1).substr(0, 4000);
}

}  // namespace
}  // namespace heapgraph
