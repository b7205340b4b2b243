// tests/report: TypedAnalysis on a hand-built typed scan: type names for the leak records, the
// categories table (typed and untyped rows adding up), a leaked retain cycle taking over its leak
// cycle record, and a reachable one with its root and the retention path extended to the cycle.
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

// Names types "T<key>"; every object owns what its word at +8 points to (field "next").
class NamingReader : public scanner::types::ObjectModelReader {
 public:
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

struct Fixture {
  scanner::ScanResult scan;
  Symbolizer symbolizer;

  Fixture() {
    scan.ok = true;
    auto readers = std::make_shared<scanner::types::ReaderSet>();
    readers->Add(std::make_unique<NamingReader>());
    readers->Prepare(scanner::types::ModuleSegments());
    scanner::TypedScanResult& t = scan.typed;
    t.enabled = true;
    t.readers = readers;
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
