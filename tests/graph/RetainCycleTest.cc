// tests/scanner: end-to-end retain cycles of C++ objects. Each case runs
//   heapgraph run --json FILE --text FILE -- tests/programs/cycle_cxx[_stripped] CASE
// (the real leak check at exit, in a real child) and checks the JSON report's typed cycles: kind,
// leaked or reachable, the members' types and owning fields in canonical order, the root kind and
// retention path of reachable cycles, the leak records' types, and that the weak_ptr controls
// give no retain cycle. cycle_cxx is built with -g (DWARF field names, shared_ptr told from
// weak_ptr exactly); cycle_cxx_stripped is the same source without DWARF and stripped of .symtab
// (offsets for field names, the control blocks' counts tell shared_ptr from weak_ptr).
#include <gtest/gtest.h>

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

// "Type.field" for each member on the cycle's path, canonical order.
std::vector<std::string> PathMembers(const json& cycle) {
  std::vector<std::string> out;
  const json& members = cycle["members"];
  for (const json& i : cycle["path"]) {
    const json& m = members[i.get<size_t>()];
    out.push_back(m["type"].get<std::string>() + "." + m.value("field", std::string("?")));
  }
  return out;
}

std::vector<std::string> LeakTypes(const CaseRun& run) {
  std::vector<std::string> types;
  for (const json& leak : run.report.value("leaks", json::array())) {
    types.push_back(leak.value("type", ""));
  }
  std::sort(types.begin(), types.end());
  return types;
}

class RetainCycles : public testing::TestWithParam<const char*> {
 protected:
  std::string program() const { return GetParam(); }
  bool debug_info() const { return program() == "cycle_cxx"; }
  CaseRun RunChecked(const std::string& name) {
    CaseRun run = RunCase(program(), name);
    EXPECT_FALSE(run.report.is_discarded()) << name << ": no JSON report";
    return run;
  }
  // Runs a case that leaks one typed cycle of `kind`; returns the run and, in *cycle, the cycle.
  CaseRun RunLeakedCycle(const std::string& name, const std::string& kind, json* cycle) {
    CaseRun run = RunChecked(name);
    EXPECT_EQ(run.status, 23);
    std::vector<json> cycles = TypedCycles(run);
    EXPECT_EQ(cycles.size(), 1u) << run.text;
    if (cycles.size() != 1) return run;
    EXPECT_EQ(cycles[0]["kind"], kind);
    EXPECT_TRUE(cycles[0]["leaked"].get<bool>());
    *cycle = cycles[0];
    return run;
  }
};

TEST_P(RetainCycles, SharedPtrPairLeaked) {
  json cycle;
  CaseRun run = RunLeakedCycle("shared_leaked", "shared_ptr", &cycle);
  ASSERT_TRUE(cycle.is_object());
  // Canonical rotation: "cyc::Alpha" sorts first. The owning word is the control-block word of
  // each shared_ptr member (the member's offset + 8; members start at +16 in a make_shared block).
  std::vector<std::string> expected = {"cyc::Alpha.beta", "cyc::Beta.alpha"};
  if (!debug_info()) expected = {"cyc::Alpha.+24", "cyc::Beta.+24"};
  EXPECT_EQ(PathMembers(cycle), expected) << run.text;
  EXPECT_EQ(LeakTypes(run), (std::vector<std::string>{"cyc::Alpha", "cyc::Beta"}));
  EXPECT_NE(run.text.find(debug_info() ? "cyc::Alpha.beta -> cyc::Beta.alpha -> cyc::Alpha"
                                       : "cyc::Alpha+24 -> cyc::Beta+24 -> cyc::Alpha"),
            std::string::npos)
      << run.text;
}

TEST_P(RetainCycles, SharedPtrPairReachableFromGlobal) {
  CaseRun run = RunChecked("shared_global");
  EXPECT_EQ(run.status, 0) << run.text;  // nothing leaked
  std::vector<json> cycles = TypedCycles(run);
  ASSERT_EQ(cycles.size(), 1u) << run.text;
  const json& c = cycles[0];
  EXPECT_EQ(c["kind"], "shared_ptr");
  EXPECT_FALSE(c["leaked"].get<bool>());
  std::vector<std::string> expected = {"cyc::Delta.gamma", "cyc::Gamma.delta"};
  if (!debug_info()) expected = {"cyc::Delta.+24", "cyc::Gamma.+24"};
  EXPECT_EQ(PathMembers(c), expected);
  ASSERT_TRUE(c["root"].is_object()) << run.text;
  EXPECT_EQ(c["root"]["kind"], "global");
  EXPECT_NE(c["root"].value("module", "").find(program()), std::string::npos);
  // The global holds the shared_ptr<Gamma>: its word points at Gamma's control block.
  const json& path = c["root"]["path"];
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(path.back()["type"], "cyc::Gamma");
  EXPECT_TRUE(run.report["leaks"].empty());
}

TEST_P(RetainCycles, SharedPtrPairReachableFromTheMainThreadsTls) {
  CaseRun run = RunChecked("shared_tls");
  EXPECT_EQ(run.status, 0) << run.text;  // nothing leaked
  std::vector<json> cycles = TypedCycles(run);
  ASSERT_EQ(cycles.size(), 1u) << run.text;
  const json& c = cycles[0];
  EXPECT_EQ(c["kind"], "shared_ptr");
  EXPECT_FALSE(c["leaked"].get<bool>());
  ASSERT_TRUE(c["root"].is_object()) << run.text;
  EXPECT_EQ(c["root"]["kind"], "tls") << c.dump(1);
  EXPECT_GT(c["root"]["thread"].get<int>(), 0);
  ASSERT_FALSE(c["root"]["path"].empty());
  EXPECT_EQ(c["root"]["path"].back()["type"], "cyc::Gamma");
  EXPECT_NE(run.text.find("held by TLS of thread "), std::string::npos) << run.text;
}

TEST_P(RetainCycles, LambdaCapturingItsOwnerIsFunctionSelf) {
  CaseRun run = RunChecked("function_self");
  EXPECT_EQ(run.status, 23);
  std::vector<json> cycles = TypedCycles(run);
  if (!debug_info()) {
    // The lambda's manager has internal linkage: stripping .symtab removes the only symbol that
    // names it, so the functor stays untyped and the cycle is only the conservative one.
    EXPECT_TRUE(cycles.empty()) << run.text;
    ASSERT_EQ(run.report["cycles"].size(), 1u) << run.text;
    EXPECT_EQ(run.report["cycles"][0]["kind"], "generic");
    EXPECT_EQ(LeakTypes(run), (std::vector<std::string>{"Malloc 16 B", "cyc::Session"}));
    return;
  }
  ASSERT_EQ(cycles.size(), 1u) << run.text;
  EXPECT_EQ(cycles[0]["kind"], "function-self");
  EXPECT_TRUE(cycles[0]["leaked"].get<bool>());
  const std::string functor = "std::function<lambda in (anonymous namespace)::FunctionSelf()>";
  EXPECT_EQ(PathMembers(cycles[0]),
            (std::vector<std::string>{"cyc::Session.on_message", functor + ".session"}))
      << run.text;
  EXPECT_EQ(LeakTypes(run), (std::vector<std::string>{"cyc::Session", functor}));
}

// Empty std::map / std::set / std::list members point into their own object: no cycle, leaked
// or reachable, and the leaked object is an ordinary direct leak.
TEST_P(RetainCycles, EmptyContainersInsideAnObjectAreNoCycle) {
  CaseRun run = RunChecked("containers");
  EXPECT_EQ(run.status, 23);
  EXPECT_TRUE(run.report["cycles"].empty()) << run.report["cycles"].dump(1);
  ASSERT_EQ(run.report["leaks"].size(), 1u) << run.text;
  EXPECT_EQ(run.report["leaks"][0]["kind"], "direct");
  EXPECT_EQ(run.report["leaks"][0]["type"], "cyc::Registry");
}

// A typed object owning itself (a make_shared object holding a shared_ptr to itself) is a real
// cycle of one.
TEST_P(RetainCycles, ObjectHoldingASharedPtrToItselfIsACycleOfOne) {
  json cycle;
  CaseRun run = RunLeakedCycle("shared_self", "shared_ptr", &cycle);
  ASSERT_TRUE(cycle.is_object());
  EXPECT_EQ(PathMembers(cycle),
            (std::vector<std::string>{debug_info() ? "cyc::Loop.self" : "cyc::Loop.+24"}))
      << run.text;
  EXPECT_EQ(run.report["cycles"].size(), 1u) << run.text;
}

// The yaml-cpp report: objects with empty containers (self references, the largest blocks)
// besides two real cycles. Only the real ones are listed, the one retaining most first.
TEST_P(RetainCycles, OnlyRealCyclesAreListedLargestRetainedFirst) {
  CaseRun run = RunChecked("mixed");
  EXPECT_EQ(run.status, 23);
  const json& cycles = run.report["cycles"];
  ASSERT_EQ(cycles.size(), 2u) << cycles.dump(1);
  EXPECT_GE(cycles[0]["retained_bytes"].get<uint64_t>(),
            cycles[1]["retained_bytes"].get<uint64_t>());
  std::vector<std::string> kinds = {cycles[0]["kind"], cycles[1]["kind"]};
  std::sort(kinds.begin(), kinds.end());
  // Without .symtab the lambda's functor is untyped: its cycle keeps the generic kind.
  EXPECT_EQ(kinds,
            (std::vector<std::string>{debug_info() ? "function-self" : "generic", "shared_ptr"}));
  for (const json& c : cycles) {
    for (const json& m : c["members"]) EXPECT_NE(m["type"], "cyc::Registry") << c.dump(1);
  }
}

TEST_P(RetainCycles, SeparateControlBlocksCycleThroughTheirManagedPointers) {
  CaseRun run = RunChecked("counted_ptr");
  std::vector<json> cycles = TypedCycles(run);
  ASSERT_EQ(cycles.size(), 1u) << run.text;
  EXPECT_EQ(cycles[0]["kind"], "shared_ptr");
  std::vector<std::string> expected = {
      "cyc::Left.right", "shared_ptr control block<cyc::Right>._M_ptr", "cyc::Right.left",
      "shared_ptr control block<cyc::Left>._M_ptr"};
  if (!debug_info()) {
    expected = {"cyc::Left.+16", "shared_ptr control block<cyc::Right>._M_ptr", "cyc::Right.+16",
                "shared_ptr control block<cyc::Left>._M_ptr"};
  }
  EXPECT_EQ(PathMembers(cycles[0]), expected) << run.text;
}

TEST_P(RetainCycles, WeakPtrBackReferenceIsNoCycle) {
  CaseRun run = RunChecked("weak_control");
  EXPECT_EQ(run.status, 23);  // the holder leaks, and with it Parent and Child
  EXPECT_TRUE(TypedCycles(run).empty()) << run.text;
  // The conservative leak graph still has Parent <-> Child, a leaked cycle (typed: false) whose
  // kind follows its shape: through Parent's shared_ptr<Child>.
  ASSERT_EQ(run.report["cycles"].size(), 1u) << run.text;
  EXPECT_EQ(run.report["cycles"][0]["kind"], "shared_ptr");
  EXPECT_FALSE(run.report["cycles"][0]["typed"].get<bool>());
}

TEST_P(RetainCycles, LambdaCapturingAWeakPtrIsNoCycle) {
  CaseRun run = RunChecked("weak_function");
  EXPECT_EQ(run.status, 0);
  EXPECT_TRUE(TypedCycles(run).empty()) << run.text;
  EXPECT_TRUE(run.report["cycles"].empty()) << run.text;
}

TEST_P(RetainCycles, PolymorphicLeakHasItsClassName) {
  CaseRun run = RunChecked("polymorphic");
  EXPECT_EQ(LeakTypes(run), (std::vector<std::string>{"cyc::Derived"}));
}

TEST_P(RetainCycles, CategoriesCountEveryLiveBlock) {
  CaseRun run = RunChecked("all");
  uint64_t live = 0, bytes = 0, leaked = 0;
  bool derived = false;
  for (const json& row : run.report["categories"]) {
    live += row["live_count"].get<uint64_t>();
    bytes += row["live_bytes"].get<uint64_t>();
    leaked += row["leaked_count"].get<uint64_t>();
    derived |= row["type"] == "cyc::Derived" && row["leaked_count"] == 1;
  }
  EXPECT_TRUE(derived);
  EXPECT_EQ(live, run.report["summary"]["live_blocks"].get<uint64_t>());
  EXPECT_EQ(bytes, run.report["summary"]["live_bytes"].get<uint64_t>());
  const json& s = run.report["summary"];
  EXPECT_EQ(leaked, s["direct_blocks"].get<uint64_t>() + s["indirect_blocks"].get<uint64_t>());
  // The text prints the table only when asked (TextReportOptions::categories); the JSON has it.
  EXPECT_EQ(run.text.find("Categories:"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Programs, RetainCycles, testing::Values("cycle_cxx", "cycle_cxx_stripped"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace heapgraph
