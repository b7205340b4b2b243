// report/: the typed part of a leak report. From the scan's typed result (scanner/TypedScan) and
// the readers' descriptions: the type name of every typed object (a name left to the symbol table,
// such as a Block's invoke function, is symbolized here), the leaked blocks' types for the leak
// records, the categories table (live and leaked counts and bytes per type or size category), and
// the retain cycles (graph/StrongReferences, graph/RetainCycles): a leaked retain cycle becomes the
// kind and path of the leaked cycle record that holds it; a reachable one is a record of its own
// with the root kind that holds it and one retention path. A leaked cycle with no retain cycle in
// it takes its kind from its path's shape (graph/CycleKind): the closures on it and the labels of
// the typed references it takes, whether or not they own — it leaked, so each of them held.
// May include every layer below report/.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/CycleKind.h"
#include "graph/RetainCycles.h"
#include "graph/StrongReferences.h"
#include "report/LeakReport.h"
#include "report/Symbolizer.h"
#include "scanner/ScanResult.h"

namespace heapgraph::report {

class TypedAnalysis {
 public:
  // Reads descriptions from scan.typed.readers; a scan without typing gives an empty analysis.
  TypedAnalysis(const scanner::ScanResult& scan, Symbolizer& symbolizer);

  // Per leaked block (index into scan.leaked): its type name, "" when untyped. Empty when no
  // leaked block is typed (millions of empty names would cost more than the report's grouping).
  const std::vector<std::string>& leaked_types() const { return leaked_types_; }
  const std::vector<std::string>& names() const { return names_; }  // per typed object
  const std::vector<graph::StrongEdge>& strong_edges() const { return strong_; }
  const std::vector<graph::RetainCycle>& retain_cycles() const { return cycles_; }
  // Leaked blocks (indices into scan.leaked) that own themselves: the leaked retain cycles of one
  // object, for BuildLeakReport.
  const std::vector<uint32_t>& leaked_self_owners() const { return self_owners_; }

  // Adds the categories table and the retain cycles to `report` (built from the same scan with
  // leaked_types()), and updates its cycle count.
  void AddTo(LeakReport& report) const;

 private:
  std::string Name(const scanner::types::TypeDescription& d, Symbolizer& symbolizer) const;
  const scanner::types::FieldDescription* Field(uint32_t object, uint32_t offset) const;
  std::string FieldName(uint32_t object, uint32_t offset) const;
  // The typed object at `address`, or UINT32_MAX.
  uint32_t ObjectAt(uint64_t address) const;
  // The kind of a leaked conservative cycle record from its path (graph/CycleKind).
  std::string ShapeKind(const LeakCycle& record) const;
  void AddSteps(uint32_t from, uint32_t to, std::vector<graph::CycleStep>& steps) const;
  std::vector<CategoryRow> Categories() const;
  // Where each leaked member of an untyped (conservative) cycle record sits: its address ->
  // (record, member). Built once per AddTo, so that each cycle's lookup costs its own members.
  using MemberIndex = std::unordered_map<uint64_t, std::pair<size_t, size_t>>;
  void AddLeakedCycle(const graph::RetainCycle& cycle, const MemberIndex& index,
                      LeakReport& report) const;
  LeakCycle ReachableCycle(const graph::RetainCycle& cycle) const;
  std::optional<CycleRoot> RootOf(const graph::RetainCycle& cycle) const;
  CycleMember Member(uint32_t object) const;

  const scanner::ScanResult& scan_;
  std::vector<const scanner::types::TypeDescription*> descriptions_;  // per typed object
  std::vector<std::string> names_;
  std::vector<std::string> leaked_types_;
  std::vector<graph::StrongEdge> strong_;
  std::vector<graph::RetainCycleVertex> vertices_;
  std::vector<graph::RetainCycle> cycles_;
  std::vector<uint32_t> self_owners_;
  std::vector<uint32_t> first_edge_;  // per typed object: its first typed reference (CSR offsets)
  std::vector<uint32_t> component_;   // per typed object: component of all typed references
  std::vector<std::vector<uint32_t>> out_;  // per typed object: indices of its typed references
  // Component (of component_) -> the scan's retention path ending in it (the last one listed).
  std::unordered_map<uint32_t, const scanner::RetentionPath*> component_path_;
};

}  // namespace heapgraph::report
