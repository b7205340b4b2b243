// Tests of BuildLeakReport, StackResolver, FormatLeakReportText and LeakReportToJson on one
// synthetic scan: a recording directory whose stacks are real return addresses inside this test
// binary (so the symbolizer names this file's functions), and a ScanResult holding a 3-block
// chain, a 2-cycle, a self-pointer, a tail into a cycle with a tail out of it, and two direct
// leaks from one stack. Addresses are above 2^53, where JSON numbers would lose bits.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <link.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "graph/LeakGraph.h"
#include "reader/RecordingReader.h"
#include "report/LeakReport.h"
#include "report/LeakReportJson.h"
#include "report/LeakReportText.h"
#include "report/StackResolver.h"
#include "report/Symbolizer.h"
#include "scanner/ScanResult.h"
#include "tests/reader/SyntheticRecording.h"

// Allocation sites: each returns a return address inside itself, at a known line, as a stack
// walker would have recorded it for an allocation made there (noipa: never inlined, cloned or
// folded together by identical code folding). Outside the anonymous namespace so that the
// symbolized names are exact.
namespace heapgraph_leak_report_test {

__attribute__((noipa)) uint64_t ReturnAddress() {
  return reinterpret_cast<uint64_t>(__builtin_return_address(0));
}

const int kSiteALine = __LINE__ + 2;
__attribute__((noipa)) uint64_t LeakSiteA() {
  uint64_t address = ReturnAddress();
  asm volatile("" ::: "memory");  // keeps the call a call, not a tail jump
  return address;
}

const int kSiteBLine = __LINE__ + 2;
__attribute__((noipa)) uint64_t LeakSiteB() {
  uint64_t address = ReturnAddress();
  asm volatile("" ::: "memory");
  return address;
}

}  // namespace heapgraph_leak_report_test

namespace heapgraph::report {
namespace {

using format::AllocFunction;
using nlohmann::json;
namespace site = heapgraph_leak_report_test;

constexpr uint64_t kBase = 0x7ffd123456789a00;  // > 2^53
constexpr uint64_t kUnknownFrame = 0xdeadbeef0000;
const std::vector<uint8_t> kBuildId = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01};

// The loaded object holding `target`: load bias and the span of its PT_LOAD segments.
struct LoadedObject {
  uint64_t target = 0;
  uint64_t bias = 0;
  uint64_t start = UINT64_MAX;
  uint64_t end = 0;
  bool found = false;
};

int FindObject(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* object = static_cast<LoadedObject*>(data);
  LoadedObject span{.target = object->target, .bias = info->dlpi_addr};
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    uint64_t start = info->dlpi_addr + segment.p_vaddr;
    span.start = std::min(span.start, start);
    span.end = std::max(span.end, start + segment.p_memsz);
    if (object->target >= start && object->target < start + segment.p_memsz) span.found = true;
  }
  if (!span.found) return 0;
  *object = span;
  return 1;
}

struct Block {
  uint64_t offset;  // from kBase
  uint64_t size;
  uint32_t stack;
  uint32_t seq;
};

// The scan every test reads, with names for its blocks and stacks.
class Scenario {
 public:
  Scenario() {
    site_a_ = site::LeakSiteA();
    site_b_ = site::LeakSiteB();
    object_.target = site_a_;
    dl_iterate_phdr(FindObject, &object_);
    exe_path_ = std::filesystem::read_symlink("/proc/self/exe").string();
    DefineStacks();
    DefineBlocks();
  }

  synthetic::SyntheticRecording recording;
  scanner::ScanResult result;
  uint32_t head = 0, body = 0, cycle = 0, self = 0, tail = 0, ring = 0, dup = 0;
  uint64_t site_a() const { return site_a_; }
  uint64_t site_b() const { return site_b_; }
  const LoadedObject& object() const { return object_; }
  const std::string& exe_path() const { return exe_path_; }
  // Index in result.leaked of the block at kBase + offset.
  uint32_t Vertex(uint64_t offset) const { return vertex_.at(kBase + offset); }

  // Reads result.leaked in place, as the leak check does.
  graph::LeakGraph Graph() const { return graph::LeakGraph(result.leaked, result.edges); }

 private:
  void DefineStacks() {
    recording.AddModule(exe_path_, object_.bias, object_.start, object_.end, kBuildId);
    head = recording.AddStack({site_a_, site_b_});
    body = recording.AddStack({site_b_});
    cycle = recording.AddStack({site_a_});
    self = recording.AddStack({site_b_, site_a_});
    tail = recording.AddStack({site_a_, kUnknownFrame});
    ring = recording.AddStack({site_b_, kUnknownFrame});
    dup = recording.AddStack({kUnknownFrame, site_a_});
  }

  void DefineBlocks() {
    std::vector<Block> blocks =
        {
            {0x000, 100, head, 10},  // X0 -> X1 -> X2
            {0x100, 40, body, 11},  {0x200, 40, body, 12},
            {0x400, 48, cycle, 20},  // C0 <-> C1: C0 has the higher address but came first
            {0x300, 48, cycle, 21}, {0x500, 24, self, 30},  // P -> P
            {0x600, 8, tail, 40},  // T -> D0 <-> D1 -> D2 (D2 without a stack)
            {0x700, 16, ring, 41},  {0x800, 24, ring, 42},
            {0x900, 56, 0, 43},     {0xa00, 64, dup, 50},
            {0xb00, 64, dup, 51},  // L0, L1: same stack, both direct
        };
    std::sort(blocks.begin(), blocks.end(),
              [](const Block& a, const Block& b) { return a.offset < b.offset; });
    for (const Block& b : blocks) {
      vertex_[kBase + b.offset] = static_cast<uint32_t>(result.leaked.size());
      result.leaked.push_back({kBase + b.offset, b.size, b.stack, b.seq, AllocFunction::kMalloc});
    }
    for (auto [from, to] : std::vector<std::pair<uint64_t, uint64_t>>{{0x000, 0x100},
                                                                      {0x100, 0x200},
                                                                      {0x400, 0x300},
                                                                      {0x300, 0x400},
                                                                      {0x500, 0x500},
                                                                      {0x600, 0x700},
                                                                      {0x700, 0x800},
                                                                      {0x800, 0x700},
                                                                      {0x800, 0x900}}) {
      result.edges.push_back({Vertex(from), Vertex(to)});
    }
    result.ok = true;
    result.timings = {.world_stopped_ms = 1.25,
                      .allocation_pause_ms = 2.5,
                      .longest_allocation_wait_ms = 3.75,
                      .total_ms = 4.5};
    result.stats.threads = 3;
    result.stats.live_blocks = 1000;
    result.stats.live_bytes = 65536;
    result.stats.stop_method = "ptrace";
  }

  uint64_t site_a_ = 0, site_b_ = 0;
  LoadedObject object_;
  std::string exe_path_;
  std::map<uint64_t, uint32_t> vertex_;
};

class LeakReportTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(scenario_.object().found);
    std::string pattern = testing::TempDir() + "/leak-report-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    synthetic::WriteFiles(dir_, scenario_.recording.Build());
    scenario_.result.recording_dir = dir_;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  LeakReport Build() {
    RecordingReader reader(dir_);
    return BuildLeakReport(scenario_.result, scenario_.Graph(), reader, symbolizer_);
  }
  // P -> P as a typed object owning itself (TypedAnalysis::leaked_self_owners).
  LeakReport BuildWithSelfOwner() {
    RecordingReader reader(dir_);
    std::vector<uint32_t> owners = {scenario_.Vertex(0x500)};
    return BuildLeakReport(scenario_.result, scenario_.Graph(), reader, symbolizer_, nullptr,
                           &owners);
  }
  // The record holding (kind, stack); fails the test when there is not exactly one.
  static const LeakRecord& RecordOf(const LeakReport& report, LeakKind kind, uint32_t stack) {
    auto matches = [&](const LeakRecord& r) { return r.kind == kind && r.stack_id == stack; };
    EXPECT_EQ(std::count_if(report.leaks.begin(), report.leaks.end(), matches), 1);
    return *std::find_if(report.leaks.begin(), report.leaks.end(), matches);
  }
  std::string Hex(uint64_t offset) const { return fmt::format("{:#x}", kBase + offset); }
  uint64_t ExeOffset(uint64_t address) const { return address - scenario_.object().bias; }
  std::string ExeName() const {
    return std::filesystem::path(scenario_.exe_path()).filename().string();
  }

  Scenario scenario_;
  Symbolizer symbolizer_;
  std::string dir_;
};

// ----------------------------------------------------------------------------------------------
// Builder

TEST_F(LeakReportTest, GroupsByKindAndStackLargestFirst) {
  LeakReport report = Build();
  ASSERT_TRUE(report.ok);
  struct Expected {
    LeakKind kind;
    uint32_t stack;
    uint64_t size, count, block_size, retained;
  };
  const Scenario& s = scenario_;
  std::vector<Expected> expected = {
      {LeakKind::kDirect, s.dup, 128, 2, 64, 128}, {LeakKind::kDirect, s.head, 100, 1, 100, 180},
      {LeakKind::kIndirect, s.body, 80, 2, 40, 0}, {LeakKind::kIndirect, 0, 56, 1, 56, 0},
      {LeakKind::kDirect, s.cycle, 48, 1, 48, 96}, {LeakKind::kIndirect, s.cycle, 48, 1, 48, 0},
      {LeakKind::kIndirect, s.ring, 40, 2, 0, 0},  {LeakKind::kDirect, s.self, 24, 1, 24, 24},
      {LeakKind::kDirect, s.tail, 8, 1, 8, 104},
  };
  ASSERT_EQ(report.leaks.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i);
    const LeakRecord& r = report.leaks[i];
    EXPECT_EQ(r.kind, expected[i].kind);
    EXPECT_EQ(r.stack_id, expected[i].stack);
    EXPECT_EQ(r.size, expected[i].size);
    EXPECT_EQ(r.count, expected[i].count);
    EXPECT_EQ(r.block_size, expected[i].block_size);
    EXPECT_EQ(r.retained_bytes, expected[i].retained);
  }
}

// Thousands of (kind, stack) groups, stack ids spread far apart: every block lands in its own
// group, and each cycle member names its record.
TEST_F(LeakReportTest, ManyGroupsWithSpreadStackIds) {
  constexpr uint32_t kStacks = 3000;
  scanner::ScanResult result;
  result.ok = true;
  result.recording_dir = dir_;
  for (uint32_t i = 0; i < 2 * kStacks; ++i) {  // two blocks per stack, sizes 16 (i even) or 32
    uint32_t stack = 1 + (i / 2) * 104729;      // ids far beyond the recording's stack table
    uint64_t size = 16 + 16 * (i % 2);
    result.leaked.push_back(
        {0x100000 + 0x100 * uint64_t{i}, size, stack, i, AllocFunction::kMalloc});
  }
  result.edges = {{0, 2}, {2, 0}};  // a cycle over the first two stacks' first blocks
  graph::LeakGraph graph(result.leaked, result.edges);
  RecordingReader reader(dir_);
  LeakReport report = BuildLeakReport(result, graph, reader, symbolizer_);
  ASSERT_TRUE(report.ok);
  ASSERT_EQ(report.leaks.size(), kStacks + 1);  // block 2 is indirect: a group of its own
  uint64_t blocks_seen = 0;
  for (const LeakRecord& r : report.leaks) blocks_seen += r.count;
  EXPECT_EQ(blocks_seen, 2 * kStacks);
  EXPECT_EQ(RecordOf(report, LeakKind::kDirect, 1 + 2 * 104729).count, 2u);
  EXPECT_EQ(RecordOf(report, LeakKind::kIndirect, 1 + 104729).count, 1u);
  ASSERT_EQ(report.cycles.size(), 1u);
  for (const CycleMember& m : report.cycles[0].members) {
    const LeakRecord& r = report.leaks.at(m.record);
    EXPECT_EQ(r.stack_id, m.stack_id);
    EXPECT_EQ(r.kind, m.address == 0x100000 ? LeakKind::kDirect : LeakKind::kIndirect);
  }
}

TEST_F(LeakReportTest, TypesAndExamples) {
  LeakReport report = Build();
  const LeakRecord& dup = RecordOf(report, LeakKind::kDirect, scenario_.dup);
  EXPECT_EQ(dup.type, "Malloc 64 B");
  EXPECT_EQ(dup.examples, (std::vector<uint64_t>{kBase + 0xa00, kBase + 0xb00}));
  const LeakRecord& ring = RecordOf(report, LeakKind::kIndirect, scenario_.ring);
  EXPECT_EQ(ring.type, "Malloc 16 B, Malloc 24 B");
}

// A record's examples are its lowest addresses, however its blocks come; sizes that differ make
// the record's block_size 0 and list each size category once.
TEST_F(LeakReportTest, ExamplesAreTheLowestAddressesInAnyOrder) {
  scanner::ScanResult result;
  result.ok = true;
  result.recording_dir = dir_;
  uint32_t seq = 0;
  for (uint64_t offset : {0x500, 0x100, 0x400, 0x600, 0x200, 0x300, 0x050}) {
    uint64_t size = offset == 0x600 ? 32 : 16;
    result.leaked.push_back({offset, size, scenario_.dup, seq++, AllocFunction::kMalloc});
  }
  graph::LeakGraph graph(result.leaked, result.edges);
  RecordingReader reader(dir_);
  LeakReport report = BuildLeakReport(result, graph, reader, symbolizer_);
  ASSERT_EQ(report.leaks.size(), 1u);
  const LeakRecord& r = report.leaks[0];
  EXPECT_EQ(r.examples, (std::vector<uint64_t>{0x050, 0x100, 0x200}));
  EXPECT_EQ(r.count, 7u);
  EXPECT_EQ(r.size, 6 * 16u + 32);
  EXPECT_EQ(r.retained_bytes, 6 * 16u + 32);
  EXPECT_EQ(r.block_size, 0u);
  EXPECT_EQ(r.type, "Malloc 16 B, Malloc 32 B");
}

TEST_F(LeakReportTest, Summary) {
  LeakReport report = Build();
  const LeakSummary& s = report.summary;
  EXPECT_EQ(s.direct_blocks, 6u);
  EXPECT_EQ(s.indirect_blocks, 6u);
  EXPECT_EQ(s.direct_bytes, 308u);
  EXPECT_EQ(s.indirect_bytes, 224u);
  EXPECT_EQ(s.leaked_bytes, 532u);
  EXPECT_EQ(s.cycles, 2u);  // P -> P is none
  EXPECT_EQ(s.live_blocks, 1000u);
  EXPECT_EQ(s.live_bytes, 65536u);
  EXPECT_EQ(report.recording_dir, dir_);
  EXPECT_TRUE(report.warnings.empty());
}

TEST_F(LeakReportTest, StacksAreSymbolizedIntoThisBinary) {
  LeakReport report = Build();
  const FrameList& stack = RecordOf(report, LeakKind::kDirect, scenario_.head).stack;
  ASSERT_EQ(stack.size(), 2u);
  const ReportFrame& a = stack[0];
  EXPECT_EQ(a.address, scenario_.site_a());
  EXPECT_EQ(a.function, "heapgraph_leak_report_test::LeakSiteA()");
  EXPECT_EQ(std::filesystem::path(a.file).filename().string(), "LeakReportTest.cc") << a.file;
  EXPECT_EQ(a.line, site::kSiteALine);
  EXPECT_FALSE(a.inlined);
  EXPECT_EQ(a.module, ExeName());
  EXPECT_EQ(a.module_path, scenario_.exe_path());
  EXPECT_EQ(a.build_id, "deadbeef0001");
  EXPECT_EQ(a.offset, ExeOffset(scenario_.site_a()));
  EXPECT_EQ(stack[1].function, "heapgraph_leak_report_test::LeakSiteB()");
  EXPECT_EQ(stack[1].line, site::kSiteBLine);
}

TEST_F(LeakReportTest, AddressOutsideEveryModuleKeepsOnlyTheAddress) {
  LeakReport report = Build();
  const FrameList& stack = RecordOf(report, LeakKind::kDirect, scenario_.dup).stack;
  ASSERT_EQ(stack.size(), 2u);
  EXPECT_EQ(stack[0].address, kUnknownFrame);
  EXPECT_TRUE(stack[0].module.empty());
  EXPECT_TRUE(stack[0].function.empty());
  EXPECT_EQ(stack[0].line, 0);
  EXPECT_EQ(stack[1].function, "heapgraph_leak_report_test::LeakSiteA()");
  EXPECT_TRUE(RecordOf(report, LeakKind::kIndirect, 0).stack.empty());
}

TEST_F(LeakReportTest, EveryCycleOnceWithOneDirectRecord) {
  LeakReport report = Build();
  ASSERT_EQ(report.cycles.size(), 2u);  // P -> P, a block pointing into itself, is none
  // Largest retained first: C0 <-> C1 (96 bytes), D0 <-> D1 (40).
  const LeakCycle& pair = report.cycles[0];
  ASSERT_EQ(pair.members.size(), 2u);
  EXPECT_EQ(pair.members[0].address, kBase + 0x300);  // address order
  ASSERT_TRUE(pair.representative.has_value());
  EXPECT_EQ(pair.members[*pair.representative].address, kBase + 0x400);  // earliest allocated
  EXPECT_EQ(pair.representative_reason, "earliest allocated");
  EXPECT_EQ(pair.path, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(pair.kind, "generic");
  EXPECT_TRUE(pair.leaked);
  EXPECT_EQ(pair.retained_bytes, 96u);
  EXPECT_EQ(report.cycles[1].retained_bytes, 40u);  // no representative: its members' bytes
  EXPECT_EQ(RecordOf(report, LeakKind::kDirect, scenario_.self).retained_bytes, 24u);
  for (const LeakCycle& c : report.cycles) {
    size_t direct = 0;
    for (const CycleMember& m : c.members) {
      ASSERT_LT(m.record, report.leaks.size());
      const LeakRecord& r = report.leaks[m.record];
      EXPECT_EQ(r.stack_id, m.stack_id);
      EXPECT_NE(std::find(r.examples.begin(), r.examples.end(), m.address), r.examples.end());
      direct += r.kind == LeakKind::kDirect ? 1 : 0;
    }
    EXPECT_EQ(direct, c.representative ? 1u : 0u);
  }
}

TEST_F(LeakReportTest, CycleReferencedByAnotherLeakHasNoRepresentative) {
  LeakReport report = Build();
  const LeakCycle& ring = report.cycles[1];
  ASSERT_EQ(ring.members.size(), 2u);
  EXPECT_EQ(ring.members[0].address, kBase + 0x700);
  EXPECT_FALSE(ring.representative.has_value());
  EXPECT_EQ(ring.retained_by, std::optional<uint64_t>(kBase + 0x600));  // T
  EXPECT_EQ(ring.representative_reason,
            "referenced by other leaked blocks; retained by the direct leak " + Hex(0x600));
  EXPECT_EQ(ring.path, (std::vector<size_t>{0, 1}));  // from the earliest allocated, D0
}

// A typed object owning itself is a cycle of one, which the leak graph alone does not give.
TEST_F(LeakReportTest, TypedSelfOwnerIsACycleOfOne) {
  LeakReport report = BuildWithSelfOwner();
  ASSERT_EQ(report.cycles.size(), 3u);
  const LeakCycle& self = report.cycles[2];  // retains 24 bytes, the least
  ASSERT_EQ(self.members.size(), 1u);
  EXPECT_EQ(self.members[0].address, kBase + 0x500);
  EXPECT_EQ(self.representative, std::optional<size_t>(0));
  EXPECT_EQ(self.path, (std::vector<size_t>{0}));
  EXPECT_EQ(self.retained_bytes, 24u);
  EXPECT_EQ(report.leaks[self.members[0].record].stack_id, scenario_.self);
  EXPECT_EQ(report.summary.cycles, 3u);
}

// Cycles are listed by what they retain, not by their own size.
TEST_F(LeakReportTest, CyclesListedLargestRetainedFirst) {
  // Without T -> D0 the ring D0 <-> D1 (40 bytes) is a leak root; with D1 -> X0 it retains the
  // X chain (180 bytes) and D2 (56) too: 276 bytes, more than C0 <-> C1's 96.
  std::vector<std::pair<uint32_t, uint32_t>>& edges = scenario_.result.edges;
  edges.erase(
      std::find(edges.begin(), edges.end(),
                std::pair<uint32_t, uint32_t>{scenario_.Vertex(0x600), scenario_.Vertex(0x700)}));
  edges.push_back({scenario_.Vertex(0x800), scenario_.Vertex(0x000)});
  LeakReport report = Build();
  ASSERT_EQ(report.cycles.size(), 2u);
  EXPECT_EQ(report.cycles[0].members[0].address, kBase + 0x700);
  EXPECT_EQ(report.cycles[0].retained_bytes, 40u + 180 + 56);
  EXPECT_EQ(report.cycles[1].members[0].address, kBase + 0x300);
  EXPECT_EQ(report.cycles[1].retained_bytes, 96u);
}

TEST_F(LeakReportTest, CycleReachedFromTwoLeaksIsRetainedByNeither) {
  scenario_.result.edges.push_back({scenario_.Vertex(0x000), scenario_.Vertex(0x700)});  // X0 -> D0
  LeakReport report = Build();
  const LeakCycle& ring = report.cycles[1];
  ASSERT_EQ(ring.members[0].address, kBase + 0x700);
  EXPECT_FALSE(ring.representative.has_value());
  EXPECT_FALSE(ring.retained_by.has_value());
  EXPECT_EQ(ring.representative_reason,
            "referenced by other leaks, none of which alone retains it");
  EXPECT_EQ(RecordOf(report, LeakKind::kDirect, scenario_.tail).retained_bytes, 8u);
  EXPECT_EQ(RecordOf(report, LeakKind::kDirect, scenario_.head).retained_bytes, 180u);
}

TEST_F(LeakReportTest, UnreadableStackIsEmptyWithAWarning) {
  scenario_.result.leaked[scenario_.Vertex(0x500)].stack = 999;  // an empty slot
  LeakReport report = Build();
  EXPECT_TRUE(RecordOf(report, LeakKind::kDirect, 999).stack.empty());
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0].rfind("stack 999: ", 0), 0u) << report.warnings[0];
}

TEST_F(LeakReportTest, FailedScan) {
  scenario_.result.ok = false;
  scenario_.result.error = "cannot stop threads";
  LeakReport report = Build();
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(report.leaks.empty());
  EXPECT_EQ(FormatLeakReportText(report), "heapgraph: scan failed: cannot stop threads\n");
  json j = LeakReportToJson(report);
  EXPECT_FALSE(j["scan"]["ok"].get<bool>());
  EXPECT_EQ(j["scan"]["error"], "cannot stop threads");
}

TEST_F(LeakReportTest, ResolverReadsEachStackOnce) {
  RecordingReader reader(dir_);
  StackResolver resolver(reader, symbolizer_);
  const FrameList& first = resolver.Resolve(scenario_.head);
  EXPECT_EQ(&resolver.Resolve(scenario_.head), &first);
  EXPECT_EQ(first.size(), 2u);
  EXPECT_TRUE(resolver.Resolve(0).empty());
}

TEST_F(LeakReportTest, ResolverSharesEachAddresssFramesBetweenStacks) {
  RecordingReader reader(dir_);
  StackResolver resolver(reader, symbolizer_);
  const FrameList& head = resolver.Resolve(scenario_.head);  // site A, site B
  const FrameList& dup = resolver.Resolve(scenario_.dup);    // unknown, site A
  ASSERT_EQ(head.size(), 2u);
  ASSERT_EQ(dup.size(), 2u);
  EXPECT_EQ(head[0].address, scenario_.site_a());
  EXPECT_EQ(&head[0], &dup[1]);  // one frame object for site A
  FrameList taken = resolver.Take(scenario_.head);
  EXPECT_EQ(&taken[0], &dup[1]);
}

TEST_F(LeakReportTest, ResolverTakeMovesTheFramesOutOrBuildsThem) {
  RecordingReader reader(dir_);
  StackResolver resolver(reader, symbolizer_);
  FrameList resolved = resolver.Resolve(scenario_.head);  // a copy (frames shared)
  FrameList taken = resolver.Take(scenario_.head);
  EXPECT_EQ(taken, resolved);
  ASSERT_EQ(taken.size(), resolved.size());
  for (size_t i = 0; i < taken.size(); ++i) {
    EXPECT_EQ(taken[i].address, resolved[i].address);
    EXPECT_EQ(taken[i].function, resolved[i].function);
    EXPECT_EQ(taken[i].file, resolved[i].file);
  }
  // Taken out of the cache: resolved again, equal.
  EXPECT_EQ(resolver.Resolve(scenario_.head).size(), resolved.size());
  EXPECT_EQ(resolver.Take(scenario_.head).front().function, resolved.front().function);
  // Never resolved before: built without caching.
  StackResolver fresh(reader, symbolizer_);
  EXPECT_EQ(fresh.Take(scenario_.head).size(), resolved.size());
  EXPECT_TRUE(fresh.Take(0).empty());
  EXPECT_TRUE(fresh.warnings().empty());
}

// ----------------------------------------------------------------------------------------------
// Text

// A frame the recording could not name (a stripped build) prints its module's build-id after
// module+offset: the debug file that would name it (`heapgraph report --debug-dir`).
TEST(LeakReportTextTest, AnUnnamedFramePrintsModuleOffsetAndBuildId) {
  LeakReport report;
  LeakRecord record;
  record.size = record.count = record.block_size = 16;
  ReportFrame unnamed;
  unnamed.address = 0x555500001337;
  unnamed.module = "app";
  unnamed.module_path = "/opt/app";
  unnamed.build_id = "efe3b431";
  unnamed.offset = 0x1337;
  ReportFrame named = unnamed;
  named.function = "main";
  record.stack = {unnamed, named};
  report.leaks.push_back(record);
  report.summary.direct_blocks = 1;
  std::string text = FormatLeakReportText(report);
  EXPECT_NE(text.find("    #0 0x555500001337 (app+0x1337) (build-id efe3b431)\n"
                      "    #1 0x555500001337 in main (app+0x1337)\n"),
            std::string::npos)
      << text;
}

TEST_F(LeakReportTest, TextRecordsInLeakSanitizerWording) {
  std::string text = FormatLeakReportText(Build());
  EXPECT_EQ(text.rfind("heapgraph: detected memory leaks\n\n", 0), 0u);
  EXPECT_NE(text.find("Direct leak of 128 byte(s) in 2 object(s) (retains 128 bytes) allocated "
                      "from:\n    #0 0xdeadbeef0000 (<unknown module>)\n    #1 " +
                      fmt::format("{:#x}", scenario_.site_a()) +
                      " in heapgraph_leak_report_test::LeakSiteA() "),
            std::string::npos)
      << text;
  std::string frame_end = fmt::format("LeakReportTest.cc:{} ({}+{:#x})\n", site::kSiteALine,
                                      ExeName(), ExeOffset(scenario_.site_a()));
  EXPECT_NE(text.find(frame_end), std::string::npos) << text;
  // Indirect records on two lines by default; their stacks in full when asked.
  EXPECT_NE(text.find("Indirect leak of 80 byte(s) in 2 object(s) allocated at "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    type: Malloc 64 B; blocks: " + Hex(0xa00) + ", " + Hex(0xb00) + "\n"),
            std::string::npos);
  std::string full = FormatLeakReportText(Build(), {.full_indirect_stacks = true});
  EXPECT_NE(full.find("Indirect leak of 80 byte(s) in 2 object(s) allocated from:\n"),
            std::string::npos)
      << full;
  EXPECT_EQ(full.find("allocated at "), std::string::npos) << full;
}

// The opening screen: top direct leaks by retained bytes with their first application frame, where
// the full report is; the categories table only when asked.
TEST_F(LeakReportTest, TextOpensWithTheTopLeaksAndPrintsCategoriesWhenAsked) {
  LeakReport report = Build();
  report.categories.push_back({"Malloc 64 B", 3, 192, 2, 128});
  std::string text = FormatLeakReportText(report, {.full_report = "/tmp/r.json"});
  size_t top = text.find("Top leaks by retained bytes (");
  ASSERT_NE(top, std::string::npos) << text;
  EXPECT_LT(top, text.find("Direct leak of ")) << text;
  EXPECT_NE(text.find("  128 bytes retained by 2 direct leak(s) of 128 bytes ("), std::string::npos)
      << text;
  EXPECT_NE(text.find("      at heapgraph_leak_report_test::LeakSiteA() LeakReportTest.cc:"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Full report (every stack and block): /tmp/r.json\n"), std::string::npos);
  EXPECT_EQ(text.find("Categories:"), std::string::npos);
  std::string asked = FormatLeakReportText(report, {.categories = true});
  EXPECT_NE(asked.find("Categories:"), std::string::npos) << asked;
  EXPECT_EQ(asked.find("Full report"), std::string::npos);
}

TEST_F(LeakReportTest, TextCyclePaths) {
  LeakReport report = Build();
  std::string site_a =
      fmt::format("heapgraph_leak_report_test::LeakSiteA() LeakReportTest.cc:{}", site::kSiteALine);
  std::string site_b =
      fmt::format("heapgraph_leak_report_test::LeakSiteB() LeakReportTest.cc:{}", site::kSiteBLine);
  EXPECT_EQ(FormatCyclePath(report, report.cycles[0]),
            Hex(0x400) + " (48 B, Malloc 48 B, alloc at " + site_a + ") -> " + Hex(0x300) +
                " (48 B, Malloc 48 B, alloc at " + site_a + ") -> " + Hex(0x400));
  LeakReport with_self = BuildWithSelfOwner();
  EXPECT_EQ(FormatCyclePath(with_self, with_self.cycles[2]),
            Hex(0x500) + " (24 B, Malloc 24 B, alloc at " + site_b + ") -> " + Hex(0x500));
  std::string text = FormatLeakReportText(report);
  EXPECT_NE(text.find("Leaked cycles:\n  Cycle #1 (generic, 2 block(s), 96 byte(s); direct leak " +
                      Hex(0x400) + " (earliest allocated)):\n    " + Hex(0x400) + " (48 B"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  Cycle #2 (generic, 2 block(s), 40 byte(s); no direct leak of its own: "
                      "referenced by other leaked blocks; retained by the direct leak " +
                      Hex(0x600) + "):\n"),
            std::string::npos);
}

TEST_F(LeakReportTest, TextSummaryAndScanLines) {
  std::string text = FormatLeakReportText(Build());
  EXPECT_NE(
      text.find(
          "\nSUMMARY: heapgraph: 532 byte(s) leaked in 12 allocation(s) (6 direct, 6 "
          "indirect; 2 cycles).\nScan: 3 thread(s), 1000 live block(s) (65536 bytes), "
          "world stopped 1.25 ms, allocations paused 2.50 ms, longest allocation wait 3.75 ms, "
          "total 4.50 ms, stopped by ptrace.\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.back(), '\n');
}

// Pages that faulted when the snapshot read them: said on the Scan line and in the JSON; pages
// skipped because they do not exist: in the JSON.
TEST_F(LeakReportTest, UnreadableAndAbsentPagesAreReported) {
  LeakReport report = Build();
  report.stats.unreadable_pages = 4;
  report.stats.absent_pages = 1048576;
  std::string text = FormatLeakReportText(report);
  EXPECT_NE(text.find("total 4.50 ms, stopped by ptrace, 4 unreadable page(s).\n"),
            std::string::npos)
      << text;
  nlohmann::json j = LeakReportToJson(report);
  EXPECT_EQ(j["scan"]["unreadable_pages"], 4);
  EXPECT_EQ(j["scan"]["absent_pages"], 1048576);
}

TEST_F(LeakReportTest, TextLimitSaysWhatItOmits) {
  LeakReport report = BuildWithSelfOwner();
  std::string text = FormatLeakReportText(report, {.max_records = 2, .max_cycles = 1});
  EXPECT_NE(text.find("... 7 more records (304 bytes) omitted; see JSON\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("... 2 more cycles omitted; see JSON\n"), std::string::npos);
  EXPECT_EQ(text.find("Indirect leak"), std::string::npos);
  EXPECT_EQ(LeakReportToJson(report)["leaks"].size(), 9u);
}

TEST_F(LeakReportTest, LongCyclePathIsElidedInTheMiddle) {
  LeakReport report;
  LeakCycle ring;
  for (size_t i = 0; i < 20; ++i) {
    ring.members.push_back({kBase + i * 16, 16, "Malloc 16 B", 0, 0, ""});
    ring.path.push_back(i);
  }
  std::string path = FormatCyclePath(report, ring, 4);
  EXPECT_EQ(path, Hex(0) + " (16 B, Malloc 16 B, alloc at unknown stack) -> " + Hex(16) +
                      " (16 B, Malloc 16 B, alloc at unknown stack) -> ... (16 more) -> " +
                      Hex(18 * 16) + " (16 B, Malloc 16 B, alloc at unknown stack) -> " +
                      Hex(19 * 16) + " (16 B, Malloc 16 B, alloc at unknown stack) -> " + Hex(0));
}

TEST_F(LeakReportTest, TextWithoutLeaks) {
  scenario_.result.leaked.clear();
  scenario_.result.edges.clear();
  std::string text = FormatLeakReportText(Build());
  EXPECT_EQ(text.rfind("heapgraph: no leaks found\n\nSUMMARY: heapgraph: 0 byte(s) leaked in 0 "
                       "allocation(s) (0 direct, 0 indirect; 0 cycles).\n",
                       0),
            0u)
      << text;
}

// What lets a check stay silent on stderr (LeakSanitizer prints nothing when nothing leaked): only
// a report with nothing but "no leaks" to say.
TEST_F(LeakReportTest, SaysOnlyNoLeaksOnlyWithoutLeaksNoticesWarningsOrAskedTables) {
  EXPECT_FALSE(SaysOnlyNoLeaks(Build()));  // the scenario leaks
  scenario_.result.leaked.clear();
  scenario_.result.edges.clear();
  LeakReport clean = Build();
  EXPECT_TRUE(SaysOnlyNoLeaks(clean));
  TextReportOptions categories;
  categories.categories = true;
  EXPECT_FALSE(SaysOnlyNoLeaks(clean, categories));
  LeakReport with = clean;
  with.notice = "ptrace refused; threads were stopped with signals";
  EXPECT_FALSE(SaysOnlyNoLeaks(with));
  with = clean;
  with.warnings.push_back("stack 7 could not be read");
  EXPECT_FALSE(SaysOnlyNoLeaks(with));
  with = clean;
  with.suppressions_used.push_back({});
  EXPECT_FALSE(SaysOnlyNoLeaks(with));
  with = clean;
  with.cycles.push_back({});
  EXPECT_FALSE(SaysOnlyNoLeaks(with));
  with = clean;
  with.ok = false;
  EXPECT_FALSE(SaysOnlyNoLeaks(with));
}

TEST_F(LeakReportTest, TextNotice) {
  scenario_.result.notice = "ptrace refused; threads were stopped with signals";
  std::string text = FormatLeakReportText(Build());
  EXPECT_NE(text.find("\nnote: ptrace refused; threads were stopped with signals\nSUMMARY: "),
            std::string::npos)
      << text;
}

// ----------------------------------------------------------------------------------------------
// JSON

TEST_F(LeakReportTest, JsonRoundTripsAndKeepsEveryField) {
  LeakReport report = Build();
  json j = json::parse(LeakReportToJson(report).dump(2));
  EXPECT_EQ(j["format"], "heapgraph-leak-report");
  EXPECT_EQ(j["version"], 2);
  EXPECT_EQ(j["summary"], json({{"direct_blocks", 6},
                                {"indirect_blocks", 6},
                                {"leaked_bytes", 532},
                                {"direct_bytes", 308},
                                {"indirect_bytes", 224},
                                {"cycles", 2},
                                {"live_blocks", 1000},
                                {"live_bytes", 65536},
                                {"suppressed_blocks", 0},
                                {"suppressed_bytes", 0}}));
  EXPECT_EQ(j["suppressions_used"], json::array());
  EXPECT_EQ(j["recording_dir"], dir_);
  EXPECT_EQ(j["scan"]["threads"], 3);
  EXPECT_EQ(j["scan"]["world_stopped_ms"], 1.25);
  EXPECT_EQ(j["scan"]["longest_allocation_wait_ms"], 3.75);
  EXPECT_EQ(j["scan"]["stop_method"], "ptrace");
  EXPECT_EQ(j["scan"]["notice"], "");
  EXPECT_EQ(LeakReportToJson(report).begin().key(), "format");  // documented key order
  EXPECT_TRUE(j["scan"]["ok"].get<bool>());
  ASSERT_EQ(j["leaks"].size(), 9u);
  const json& dup = j["leaks"][0];
  EXPECT_EQ(dup["kind"], "direct");
  EXPECT_EQ(dup["size"], 128);
  EXPECT_EQ(dup["count"], 2);
  EXPECT_EQ(dup["block_size"], 64);
  EXPECT_EQ(dup["retained_bytes"], 128);
  EXPECT_EQ(dup["type"], "Malloc 64 B");
  EXPECT_EQ(dup["examples"], json::array({Hex(0xa00), Hex(0xb00)}));
  const json& ring = j["leaks"][6];
  EXPECT_EQ(ring["kind"], "indirect");
  EXPECT_FALSE(ring.contains("block_size"));
  EXPECT_FALSE(ring.contains("retained_bytes"));
}

// LeakSanitizer suppressions: the records whose stack a rule matches stay in the report (and the
// JSON, marked with the rule) but leave the totals, the text's records and its "no leaks" test;
// the text lists the rules used before the SUMMARY line.
TEST_F(LeakReportTest, SuppressedRecordsAreMarkedAndLeaveTheTotals) {
  LeakReport report = Build();
  const LeakSummary before = report.summary;
  Suppressions rules;
  rules.Parse("leak:^heapgraph_leak_report_test::LeakSiteA*$\n", "t");
  ApplySuppressions(rules, report);
  uint64_t blocks = 0, bytes = 0;
  for (const LeakRecord& r : report.leaks) {
    bool site_a = std::any_of(r.stack.begin(), r.stack.end(), [](const ReportFrame& f) {
      return f.function == "heapgraph_leak_report_test::LeakSiteA()";
    });
    EXPECT_EQ(r.suppressed, site_a ? "^heapgraph_leak_report_test::LeakSiteA*$" : "");
    blocks += site_a ? r.count : 0;
    bytes += site_a ? r.size : 0;
  }
  ASSERT_GT(blocks, 0u);
  const LeakSummary& s = report.summary;
  EXPECT_EQ(s.suppressed_blocks, blocks);
  EXPECT_EQ(s.suppressed_bytes, bytes);
  EXPECT_EQ(s.direct_blocks + s.indirect_blocks + blocks,
            before.direct_blocks + before.indirect_blocks);
  EXPECT_EQ(s.leaked_bytes + bytes, before.leaked_bytes);
  ASSERT_EQ(report.suppressions_used.size(), 1u);
  EXPECT_EQ(report.suppressions_used[0].count, blocks);
  EXPECT_EQ(report.suppressions_used[0].bytes, bytes);

  std::string text = FormatLeakReportText(report);
  EXPECT_EQ(text.find("Direct leak of 100 byte(s)"), std::string::npos) << text;  // head: site A
  EXPECT_NE(text.find(fmt::format("Suppressions used:\n  count      bytes template\n{:>7} {:>10} "
                                  "^heapgraph_leak_report_test::LeakSiteA*$\n",
                                  blocks, bytes)),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("Suppressions used:"), text.find("SUMMARY: "));
  json j = json::parse(LeakReportToJson(report).dump());
  EXPECT_EQ(j["summary"]["suppressed_blocks"], blocks);
  EXPECT_EQ(j["suppressions_used"][0]["rule"], "^heapgraph_leak_report_test::LeakSiteA*$");
  ASSERT_EQ(j["leaks"].size(), report.leaks.size());
  for (size_t i = 0; i < report.leaks.size(); ++i) {
    if (report.leaks[i].suppressed.empty()) {
      EXPECT_TRUE(j["leaks"][i]["suppressed"].is_null());
    } else {
      EXPECT_EQ(j["leaks"][i]["suppressed"], report.leaks[i].suppressed);
    }
  }
  EXPECT_EQ(LeakReportJsonText(report), LeakReportToJson(report).dump(2));

  // A record without a known function, file or module matches no rule, not even "*".
  Suppressions all;
  all.Parse("leak:*\n", "t");
  ApplySuppressions(all, report);
  for (const LeakRecord& r : report.leaks) {
    bool named = std::any_of(r.stack.begin(), r.stack.end(), [](const ReportFrame& f) {
      return !f.function.empty() || !f.file.empty() || !f.module_path.empty();
    });
    EXPECT_EQ(r.suppressed.empty(), !named);
  }
}

TEST_F(LeakReportTest, JsonFrames) {
  json j = json::parse(LeakReportToJson(Build()).dump());
  const json& stack = j["leaks"][0]["stack"];
  ASSERT_EQ(stack.size(), 2u);
  EXPECT_EQ(stack[0], json({{"address", "0xdeadbeef0000"},
                            {"module", nullptr},
                            {"module_path", nullptr},
                            {"build_id", nullptr},
                            {"offset", nullptr},
                            {"function", nullptr},
                            {"file", nullptr},
                            {"line", nullptr},
                            {"inlined", false}}));
  const json& a = stack[1];
  EXPECT_EQ(a["address"], fmt::format("{:#x}", scenario_.site_a()));
  EXPECT_EQ(a["module"], ExeName());
  EXPECT_EQ(a["module_path"], scenario_.exe_path());
  EXPECT_EQ(a["build_id"], "deadbeef0001");
  EXPECT_EQ(a["offset"], fmt::format("{:#x}", ExeOffset(scenario_.site_a())));
  EXPECT_EQ(a["function"], "heapgraph_leak_report_test::LeakSiteA()");
  EXPECT_EQ(a["line"], site::kSiteALine);
  EXPECT_FALSE(a["inlined"].get<bool>());
}

TEST_F(LeakReportTest, JsonCyclesAndExact64BitAddresses) {
  LeakReport report = Build();
  json j = json::parse(LeakReportToJson(report).dump());
  ASSERT_EQ(j["cycles"].size(), 2u);
  const json& pair = j["cycles"][0];
  EXPECT_EQ(pair["kind"], "generic");
  EXPECT_EQ(pair["retained_bytes"], 96);
  EXPECT_TRUE(pair["leaked"].get<bool>());
  EXPECT_EQ(pair["representative"], json({{"member", 1},
                                          {"address", Hex(0x400)},
                                          {"reason", "earliest allocated"},
                                          {"retained_by", nullptr}}));
  EXPECT_EQ(pair["path"], json::array({1, 0}));
  EXPECT_EQ(pair["members"][0], json({{"address", Hex(0x300)},
                                      {"size", 48},
                                      {"type", "Malloc 48 B"},
                                      {"stack_id", scenario_.cycle},
                                      {"leak", report.cycles[0].members[0].record},
                                      {"field", nullptr}}));
  EXPECT_FALSE(pair["typed"].get<bool>());
  EXPECT_TRUE(pair["root"].is_null());
  EXPECT_TRUE(j["cycles"][1]["representative"]["member"].is_null());
  EXPECT_EQ(j["cycles"][1]["representative"]["retained_by"], Hex(0x600));
  for (const json& cycle : j["cycles"]) {
    for (const json& member : cycle["members"]) {
      uint64_t address = std::stoull(member["address"].get<std::string>(), nullptr, 16);
      EXPECT_GT(address, uint64_t{1} << 53);
      EXPECT_EQ(address - kBase, (address - kBase) / 0x100 * 0x100) << "bits lost";
      EXPECT_EQ(j["leaks"][member["leak"].get<size_t>()]["stack_id"], member["stack_id"]);
    }
  }
}

TEST_F(LeakReportTest, JsonTextIsTheTreeDumpedByteForByte) {
  LeakReport report = Build();
  EXPECT_EQ(LeakReportJsonText(report), LeakReportToJson(report).dump(2));
  LeakReport none = report;
  none.leaks.clear();
  EXPECT_EQ(LeakReportJsonText(none), LeakReportToJson(none).dump(2));
  // The categories are streamed too: with and without leaks, strings escaped like the tree's.
  report.categories = {{"Malloc 2.00KiB", 1, 2048, 0, 0},
                       {"Type<\"quoted\"> \xff", 3, 4, 5, 6},
                       {"std::function<void ()>", 18446744073709551615ull, 0, 1, 1}};
  none.categories = report.categories;
  const auto dumped = [](const LeakReport& r) {
    return LeakReportToJson(r).dump(2, ' ', false, json::error_handler_t::replace);
  };
  EXPECT_EQ(LeakReportJsonText(report), dumped(report));
  EXPECT_EQ(LeakReportJsonText(none), dumped(none));
  EXPECT_EQ(json::parse(LeakReportJsonText(report))["categories"].size(), 3u);
}

TEST_F(LeakReportTest, JsonTextEscapesStringsLikeTheTree) {
  LeakReport report = Build();
  ASSERT_GE(report.leaks[0].stack.size(), 2u);
  ReportFrame f = report.leaks[0].stack[1];
  f.function = "op\"er\\ator\n\t\b\f\r\x01\x1f caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80";
  f.file = "bad \xff byte \x80 and \xc3 cut";
  report.leaks[0].stack.replace(1, f);
  report.leaks[0].type = "Type<\"quoted\">";
  EXPECT_EQ(LeakReportJsonText(report),
            LeakReportToJson(report).dump(2, ' ', false, json::error_handler_t::replace));
  // The tree is the text parsed, so the content is checked against the strings themselves.
  std::string text = LeakReportJsonText(report);
  EXPECT_NE(text.find(R"(op\"er\\ator\n\t\b\f\r\u0001\u001f caf)"), std::string::npos);
  json j = json::parse(text);
  const json& frame = j["leaks"][0]["stack"][1];
  EXPECT_EQ(frame["function"], f.function);
  EXPECT_EQ(frame["file"], "bad \xef\xbf\xbd byte \xef\xbf\xbd and \xef\xbf\xbd cut");
  EXPECT_EQ(j["leaks"][0]["type"], "Type<\"quoted\">");
}

}  // namespace
}  // namespace heapgraph::report
