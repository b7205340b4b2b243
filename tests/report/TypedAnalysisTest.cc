// tests/report: TypedAnalysis on a hand-built typed scan: type names for the leak records, the
// categories table (typed and untyped rows adding up), a leaked retain cycle taking over its leak
// cycle record, a reachable one with its root and the retention path extended to the cycle, the
// kinds of leaked conservative cycles from their shape, and leaked self-owners.
#include <gtest/gtest.h>

#include <memory>

#include "report/LeakReportText.h"
#include "report/TypedAnalysis.h"
#include "scanner/types/ReaderSet.h"

namespace heapgraph::report {
namespace {

using scanner::types::EdgeLabel;
using scanner::types::FieldStrength;
using scanner::types::ObjectModel;
using scanner::types::TypeDescription;
using scanner::types::TypeIdentity;

// Names types "T<key>"; every object owns what its word at +8 points to (field "next"), except
// kDelegateKey (a weak `_delegate` at +8, labelled delegate) and kBlockKey (a Block: a closure).
class NamingReader : public scanner::types::ObjectModelReader {
 public:
  static constexpr uint64_t kDelegateKey = 7;
  static constexpr uint64_t kBlockKey = 8;

  const char* name() const override { return "naming"; }
  bool Prepare(const scanner::types::PrepareContext&) override { return true; }
  bool Identify(const scanner::types::SnapshotMemory&, uint32_t, TypeIdentity*) const override {
    return false;
  }
  TypeDescription Describe(const TypeIdentity& id,
                           const scanner::types::DescribeContext&) override {
    TypeDescription d;
    d.name = "T" + std::to_string(id.key);
    d.fields = {{8, FieldStrength::kStrong, EdgeLabel::kNone, "next"}};
    if (id.key == kDelegateKey) {
      d.fields = {{8, FieldStrength::kWeak, EdgeLabel::kDelegate, "_delegate"}};
    }
    if (id.key == kBlockKey) d.closure = scanner::types::ClosureKind::kBlock;
    return d;
  }
};

scanner::TypedObject Object(uint64_t address, uint64_t key, bool leaked, uint32_t leaked_index) {
  scanner::TypedObject o;
  o.address = address;
  o.size = 32;
  o.identity = {key, 0, ObjectModel::kCxxPolymorphic};
  o.leaked = leaked ? 1 : 0;
  o.leaked_index = leaked_index;
  return o;
}

// A typed scan whose reader is NamingReader.
void Enable(scanner::ScanResult& scan) {
  scan.ok = true;
  auto readers = std::make_shared<scanner::types::ReaderSet>();
  readers->Add(std::make_unique<NamingReader>());
  readers->Prepare(scanner::types::ModuleSegments());
  scan.typed.enabled = true;
  scan.typed.readers = readers;
}

// A leaked conservative cycle record of `blocks`, in that order, all leaked.
LeakCycle Conservative(const std::vector<uint64_t>& blocks) {
  LeakCycle record;
  for (size_t i = 0; i < blocks.size(); ++i) {
    record.members.push_back({blocks[i], 32, "", 0, i, ""});
    record.path.push_back(i);
  }
  return record;
}

struct Fixture {
  scanner::ScanResult scan;
  Symbolizer symbolizer;

  Fixture() {
    Enable(scan);
    scanner::TypedScanResult& t = scan.typed;
    // Leaked: 0x1000 (T1) <-> 0x2000 (T2). Reachable: 0x3000 (T3) -> 0x4000 (T4) <-> 0x5000 (T5),
    // and T5's word at +16 (no field: conservative) points back to T3, so T3 is in the component
    // of typed references that the scan's retention path reached, but not on the retain cycle.
    scan.leaked = {{0x1000, 32, 1, 1}, {0x2000, 32, 2, 2}, {0x9000, 48, 3, 3}};
    t.objects = {Object(0x1000, 1, true, 0), Object(0x2000, 2, true, 1),
                 Object(0x3000, 3, false, UINT32_MAX), Object(0x4000, 4, false, UINT32_MAX),
                 Object(0x5000, 5, false, UINT32_MAX)};
    t.edges = {{0, 1, 8, 0}, {1, 0, 8, 0}, {2, 3, 8, 0}, {3, 4, 8, 0}, {4, 3, 8, 0}, {4, 2, 16, 0}};
    t.untyped = {{48, format::AllocFunction::kMalloc, 10, 480, 1, 48}};
    scanner::RetentionPath path;
    path.root_kind = scanner::RootKind::kGlobal;
    path.root_address = 0x600000;
    path.steps = {{0x3000, 32, 0, 2, format::AllocFunction::kNone}};
    t.paths = {path};
  }
};

TEST(TypedAnalysisTest, TypesCategoriesAndCycles) {
  Fixture f;
  TypedAnalysis typed(f.scan, f.symbolizer);
  EXPECT_EQ(typed.leaked_types(), (std::vector<std::string>{"T1", "T2", ""}));
  ASSERT_EQ(typed.retain_cycles().size(), 2u);

  LeakReport report;
  LeakCycle conservative;  // the leak graph's cycle holding 0x1000 and 0x2000
  conservative.members = {{0x1000, 32, "T1", 1, 0, ""}, {0x2000, 32, "T2", 2, 1, ""}};
  conservative.path = {0, 1};
  report.cycles.push_back(conservative);
  typed.AddTo(report);

  ASSERT_EQ(report.cycles.size(), 2u);
  const LeakCycle& leaked = report.cycles[0];
  EXPECT_TRUE(leaked.typed);
  EXPECT_TRUE(leaked.leaked);
  EXPECT_EQ(FormatTypedPath(leaked), "T1.next -> T2.next -> T1");
  const LeakCycle& reachable = report.cycles[1];
  EXPECT_FALSE(reachable.leaked);
  EXPECT_EQ(FormatTypedPath(reachable), "T4.next -> T5.next -> T4");
  ASSERT_TRUE(reachable.root.has_value());
  EXPECT_EQ(reachable.root->kind, "global");
  EXPECT_EQ(reachable.root->address, 0x600000u);
  // The scan's path ends at T3, outside the cycle; it is extended to T4 through T3.next.
  ASSERT_EQ(reachable.root->path.size(), 2u);
  EXPECT_EQ(reachable.root->path[0].type, "T3");
  EXPECT_EQ(reachable.root->path[1].type, "T4");
  EXPECT_EQ(reachable.root->path[1].field, "next");
  EXPECT_EQ(report.summary.cycles, 2u);

  // Categories: 5 typed rows of one block each and the untyped 48-byte row.
  uint64_t live = 0, leaked_count = 0;
  for (const CategoryRow& r : report.categories) {
    live += r.live_count;
    leaked_count += r.leaked_count;
  }
  EXPECT_EQ(report.categories.size(), 6u);
  EXPECT_EQ(report.categories.front().type, "Malloc 48 B");  // most live bytes
  EXPECT_EQ(live, 15u);
  EXPECT_EQ(leaked_count, 3u);
}

// A leaked cycle through a weak-named delegate ivar is no retain cycle (the ivar does not own),
// but it leaked, so the ivar held: the conservative record takes the kind delegate.
TEST(TypedAnalysisTest, LeakedCycleThroughAWeakDelegateIsKindDelegate) {
  scanner::ScanResult scan;
  Enable(scan);
  scan.leaked = {{0x1000, 32, 1, 1}, {0x2000, 32, 2, 2}};
  scan.typed.objects = {Object(0x1000, NamingReader::kDelegateKey, true, 0),
                        Object(0x2000, 1, true, 1)};
  scan.typed.edges = {{0, 1, 8, 0}, {1, 0, 8, 0}};
  Symbolizer symbolizer;
  TypedAnalysis typed(scan, symbolizer);
  EXPECT_TRUE(typed.retain_cycles().empty());
  LeakReport report;
  report.cycles.push_back(Conservative({0x1000, 0x2000}));
  typed.AddTo(report);
  ASSERT_EQ(report.cycles.size(), 1u);
  EXPECT_EQ(report.cycles[0].kind, "delegate");
  EXPECT_FALSE(report.cycles[0].typed);
}

// A leaked cycle through a Block whose owner is untyped (no typed object, no typed reference):
// the Block's heap words are captured slots, so the cycle is block-self.
TEST(TypedAnalysisTest, LeakedCycleThroughABlockAndAnUntypedOwnerIsBlockSelf) {
  scanner::ScanResult scan;
  Enable(scan);
  scan.leaked = {{0x1000, 32, 1, 1}, {0x2000, 32, 2, 2}};
  scan.typed.objects = {Object(0x2000, NamingReader::kBlockKey, true, 1)};
  Symbolizer symbolizer;
  TypedAnalysis typed(scan, symbolizer);
  LeakReport report;
  report.cycles.push_back(Conservative({0x1000, 0x2000}));
  report.cycles.push_back(Conservative({0x3000, 0x4000}));  // untyped: generic
  typed.AddTo(report);
  ASSERT_EQ(report.cycles.size(), 2u);
  EXPECT_EQ(report.cycles[0].kind, "block-self");
  EXPECT_EQ(report.cycles[1].kind, "generic");
}

// A typed object owning itself is handed to BuildLeakReport, which lists it as a cycle of one;
// a typed object pointing into itself without owning it is not.
TEST(TypedAnalysisTest, LeakedSelfOwners) {
  scanner::ScanResult scan;
  Enable(scan);
  scan.leaked = {{0x1000, 32, 1, 1}, {0x2000, 32, 2, 2}};
  scan.typed.objects = {Object(0x1000, 1, true, 0),
                        Object(0x2000, NamingReader::kDelegateKey, true, 1)};
  scan.typed.edges = {{0, 0, 8, 0}, {1, 1, 8, 0}};
  Symbolizer symbolizer;
  TypedAnalysis typed(scan, symbolizer);
  EXPECT_EQ(typed.leaked_self_owners(), (std::vector<uint32_t>{0}));
}

TEST(TypedAnalysisTest, AScanWithoutTypesAddsNothing) {
  scanner::ScanResult scan;
  scan.ok = true;
  scan.leaked = {{0x1000, 16, 1, 1}};
  Symbolizer symbolizer;
  TypedAnalysis typed(scan, symbolizer);
  EXPECT_TRUE(typed.leaked_types().empty());  // no leaked block typed
  LeakReport report;
  typed.AddTo(report);
  EXPECT_TRUE(report.categories.empty());
  EXPECT_TRUE(report.cycles.empty());
}

}  // namespace
}  // namespace heapgraph::report
