#include "report/TypedAnalysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <deque>
#include <map>
#include <unordered_map>

#include "reader/RecordingReader.h"
#include "report/TypeNamer.h"
#include "scanner/types/ReaderSet.h"

namespace heapgraph::report {
namespace {

using scanner::TypedObject;
constexpr uint32_t kNone = UINT32_MAX;

const char* RootKindName(scanner::RootKind kind) {
  switch (kind) {
    case scanner::RootKind::kRegisters:
      return "registers";
    case scanner::RootKind::kStack:
      return "stack";
    case scanner::RootKind::kGlobal:
      return "global";
    case scanner::RootKind::kTls:
      return "tls";
    case scanner::RootKind::kOther:
      break;
  }
  return "other";
}

}  // namespace

TypedAnalysis::TypedAnalysis(const scanner::ScanResult& scan, Symbolizer& symbolizer)
    : scan_(scan) {
  const scanner::TypedScanResult& typed = scan.typed;
  if (!typed.enabled || typed.readers == nullptr) return;
  std::map<const scanner::types::TypeDescription*, std::string> named;
  for (const TypedObject& o : typed.objects) {
    const scanner::types::TypeDescription& d = typed.readers->Describe(o.identity);
    auto [it, inserted] = named.try_emplace(&d);
    if (inserted) it->second = Name(d, symbolizer);
    descriptions_.push_back(&d);
    names_.push_back(it->second);
    vertices_.push_back({it->second, d.closure, o.leaked != 0});
    if (o.leaked_index < scan.leaked.size()) {
      if (leaked_types_.empty()) leaked_types_.resize(scan.leaked.size());  // first typed leak
      leaked_types_[o.leaked_index] = it->second;
    }
  }
  first_edge_.assign(typed.objects.size() + 1, 0);
  for (const scanner::TypedEdge& e : typed.edges) ++first_edge_[e.from + 1];
  for (size_t i = 0; i < typed.objects.size(); ++i) first_edge_[i + 1] += first_edge_[i];
  strong_ = graph::StrongReferences(typed, descriptions_).edges();
  cycles_ = graph::RetainCycles(vertices_, strong_).cycles();
  for (const graph::RetainCycle& c : cycles_) {
    uint32_t leaked_index = typed.objects[c.members.front()].leaked_index;
    if (c.leaked && c.members.size() == 1 && leaked_index < scan.leaked.size()) {
      self_owners_.push_back(leaked_index);
    }
  }
  bool reachable = std::any_of(cycles_.begin(), cycles_.end(),
                               [](const graph::RetainCycle& c) { return !c.leaked; });
  if (!reachable) return;
  // Components of all typed references (only reachable cycles need them): a retention path ends
  // in the one of its cycle.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph g(typed.objects.size());
  out_.resize(typed.objects.size());
  for (uint32_t i = 0; i < typed.edges.size(); ++i) {
    boost::add_edge(typed.edges[i].from, typed.edges[i].to, g);
    out_[typed.edges[i].from].push_back(i);
  }
  component_.assign(typed.objects.size(), 0);
  if (!typed.objects.empty()) boost::strong_components(g, component_.data());
  for (const scanner::RetentionPath& p : typed.paths) {
    uint32_t end = p.steps.empty() ? kNone : p.steps.back().typed;
    if (end != kNone) component_path_[component_[end]] = &p;
  }
}

// The description's name, as the types file names it too (TypeNamer).
std::string TypedAnalysis::Name(const scanner::types::TypeDescription& d,
                                Symbolizer& symbolizer) const {
  return TypeNamer::Name(d, scan_.typed.readers->modules(), symbolizer);
}

const scanner::types::FieldDescription* TypedAnalysis::Field(uint32_t object,
                                                             uint32_t offset) const {
  for (const scanner::types::FieldDescription& f : descriptions_[object]->fields) {
    if (f.offset == offset) return &f;
  }
  return nullptr;
}

std::string TypedAnalysis::FieldName(uint32_t object, uint32_t offset) const {
  const scanner::types::FieldDescription* f = Field(object, offset);
  return f != nullptr && !f->name.empty() ? f->name : "+" + std::to_string(offset);
}

uint32_t TypedAnalysis::ObjectAt(uint64_t address) const {
  const std::vector<TypedObject>& objects = scan_.typed.objects;
  auto it = std::lower_bound(objects.begin(), objects.end(), address,
                             [](const TypedObject& o, uint64_t a) { return o.address < a; });
  return it != objects.end() && it->address == address ? static_cast<uint32_t>(it - objects.begin())
                                                       : kNone;
}

// The steps of typed object `from` towards the block `to` (a typed object, or kNone): its closure
// kind, and the label of each of its words pointing into `to` — a word at the start of a
// shared_ptr control block is a shared_ptr's (or a weak_ptr's) even without DWARF.
void TypedAnalysis::AddSteps(uint32_t from, uint32_t to,
                             std::vector<graph::CycleStep>& steps) const {
  steps.push_back({descriptions_[from]->closure, scanner::types::EdgeLabel::kNone});
  if (to == kNone) return;
  const scanner::TypedScanResult& typed = scan_.typed;
  for (uint32_t i = first_edge_[from]; i < first_edge_[from + 1]; ++i) {
    const scanner::TypedEdge& e = typed.edges[i];
    if (e.to != to) continue;
    const scanner::types::FieldDescription* f = Field(from, e.offset);
    scanner::types::EdgeLabel label = f != nullptr ? f->label : scanner::types::EdgeLabel::kNone;
    bool control =
        typed.objects[to].identity.model == scanner::types::ObjectModel::kSharedPtrControl;
    if (label == scanner::types::EdgeLabel::kNone && control && e.target_offset == 0) {
      label = scanner::types::EdgeLabel::kSharedOwner;
    }
    steps.push_back({descriptions_[from]->closure, label});
  }
}

// Each member on the record's path, typed or not, with its word towards the next one.
std::string TypedAnalysis::ShapeKind(const LeakCycle& record) const {
  std::vector<graph::CycleStep> steps;
  for (size_t i = 0; i < record.path.size(); ++i) {
    uint32_t from = ObjectAt(record.members[record.path[i]].address);
    if (from == kNone) continue;  // untyped: neither a closure nor a label
    size_t next = record.path[(i + 1) % record.path.size()];
    AddSteps(from, ObjectAt(record.members[next].address), steps);
  }
  return graph::CycleKind(steps);
}

std::vector<CategoryRow> TypedAnalysis::Categories() const {
  std::unordered_map<std::string, CategoryRow> rows;
  auto add = [&](const std::string& type, uint64_t count, uint64_t bytes, uint64_t leaked_count,
                 uint64_t leaked_bytes) {
    CategoryRow& r = rows[type];
    r.type = type;
    r.live_count += count;
    r.live_bytes += bytes;
    r.leaked_count += leaked_count;
    r.leaked_bytes += leaked_bytes;
  };
  for (size_t i = 0; i < scan_.typed.objects.size(); ++i) {
    const TypedObject& o = scan_.typed.objects[i];
    add(names_[i], 1, o.size, o.leaked, o.leaked != 0 ? o.size : 0);
  }
  for (const scanner::UntypedCategory& c : scan_.typed.untyped) {
    std::string type = c.size_key == UINT64_MAX ? CategoryName(c.function, 0)
                                                : CategoryName(c.function, c.size_key);
    add(type, c.live_count, c.live_bytes, c.leaked_count, c.leaked_bytes);
  }
  std::vector<CategoryRow> sorted;
  for (auto& [type, row] : rows) sorted.push_back(std::move(row));
  std::sort(sorted.begin(), sorted.end(), [](const CategoryRow& a, const CategoryRow& b) {
    if (a.live_bytes != b.live_bytes) return a.live_bytes > b.live_bytes;
    return a.type < b.type;
  });
  return sorted;
}

CycleMember TypedAnalysis::Member(uint32_t object) const {
  const TypedObject& o = scan_.typed.objects[object];
  return {o.address, o.size, names_[object], o.stack, CycleMember::kNoRecord, ""};
}

// A leaked retain cycle lies inside one leaked (conservative) cycle record: that record takes
// its kind, and its path becomes the retain cycle's, in canonical rotation.
// A record already typed keeps the first retain cycle found in it.
void TypedAnalysis::AddLeakedCycle(const graph::RetainCycle& cycle, const MemberIndex& index,
                                   LeakReport& report) const {
  auto first = index.find(scan_.typed.objects[cycle.members.front()].address);
  if (first == index.end()) return;
  size_t r = first->second.first;
  LeakCycle& record = report.cycles[r];
  if (record.typed) return;
  record.kind = cycle.kind;
  record.typed = true;
  record.path.clear();
  for (size_t i = 0; i < cycle.members.size(); ++i) {
    auto m = index.find(scan_.typed.objects[cycle.members[i]].address);
    if (m == index.end() || m->second.first != r) continue;
    record.members[m->second.second].field =
        graph::RetainCycles::FieldText(strong_[cycle.edges[i]]);
    record.path.push_back(m->second.second);
  }
}

// The retention path of the cycle's component (found by the scan), extended through typed
// references to the first cycle member reached.
std::optional<CycleRoot> TypedAnalysis::RootOf(const graph::RetainCycle& cycle) const {
  const scanner::TypedScanResult& typed = scan_.typed;
  auto found = component_path_.find(component_[cycle.members.front()]);
  if (found == component_path_.end()) return std::nullopt;
  const scanner::RetentionPath* path = found->second;
  CycleRoot root;
  root.kind = RootKindName(path->root_kind);
  root.thread = path->thread;
  root.address = path->root_address;
  if (path->module < typed.readers->modules().modules().size()) {
    root.module = typed.readers->modules().modules()[path->module].path;
  }
  for (size_t i = 0; i < path->steps.size(); ++i) {
    const scanner::PathStep& s = path->steps[i];
    uint32_t previous = i == 0 ? kNone : path->steps[i - 1].typed;
    std::string field;  // the root's word has none
    if (i > 0)
      field = previous != kNone ? FieldName(previous, s.offset) : fmt::format("+{}", s.offset);
    std::string type = s.typed != kNone ? names_[s.typed] : CategoryName(s.function, s.size);
    root.path.push_back({s.address, s.size, type, field});
  }
  // Breadth first from the path's end to the nearest member of the cycle (inside the component:
  // costs what it visits, not the whole heap).
  uint32_t start = path->steps.back().typed;
  std::unordered_map<uint32_t, uint32_t> via = {{start, kNone}};  // typed reference reaching it
  auto on_cycle = [&](uint32_t v) {
    return std::find(cycle.members.begin(), cycle.members.end(), v) != cycle.members.end();
  };
  std::deque<uint32_t> queue = {start};
  uint32_t reached = on_cycle(start) ? start : kNone;
  while (!queue.empty() && reached == kNone) {
    uint32_t u = queue.front();
    queue.pop_front();
    for (uint32_t e : out_[u]) {
      uint32_t w = typed.edges[e].to;
      if (!via.try_emplace(w, e).second) continue;
      if (on_cycle(w)) {
        reached = w;
        break;
      }
      queue.push_back(w);
    }
  }
  std::vector<RetentionStep> tail;
  for (uint32_t x = reached; x != kNone && x != start; x = typed.edges[via.at(x)].from) {
    const scanner::TypedEdge& e = typed.edges[via.at(x)];
    tail.push_back(
        {typed.objects[x].address, typed.objects[x].size, names_[x], FieldName(e.from, e.offset)});
  }
  root.path.insert(root.path.end(), tail.rbegin(), tail.rend());
  return root;
}

LeakCycle TypedAnalysis::ReachableCycle(const graph::RetainCycle& cycle) const {
  LeakCycle record;
  record.kind = cycle.kind;
  record.leaked = false;
  record.typed = true;
  for (size_t i = 0; i < cycle.members.size(); ++i) {
    record.members.push_back(Member(cycle.members[i]));
    record.members.back().field = graph::RetainCycles::FieldText(strong_[cycle.edges[i]]);
    record.path.push_back(i);
  }
  record.retained_bytes = MemberBytes(record);
  record.root = RootOf(cycle);
  record.representative_reason =
      record.root ? fmt::format("reachable from {}", record.root->kind) : "reachable";
  return record;
}

void TypedAnalysis::AddTo(LeakReport& report) const {
  if (!scan_.typed.enabled) return;
  report.categories = Categories();
  MemberIndex index;
  for (size_t r = 0; r < report.cycles.size(); ++r) {
    const LeakCycle& record = report.cycles[r];
    if (record.typed || !record.leaked) continue;
    for (size_t m = 0; m < record.members.size(); ++m) {
      index.try_emplace(record.members[m].address, r, m);
    }
  }
  std::vector<LeakCycle> reachable;
  for (const graph::RetainCycle& cycle : cycles_) {
    if (cycle.leaked) {
      AddLeakedCycle(cycle, index, report);
    } else {
      reachable.push_back(ReachableCycle(cycle));
    }
  }
  for (LeakCycle& record : report.cycles) {
    if (record.leaked && !record.typed) record.kind = ShapeKind(record);
  }
  std::stable_sort(reachable.begin(), reachable.end(), ListedBefore);
  report.cycles.insert(report.cycles.end(), reachable.begin(), reachable.end());
  report.summary.cycles = report.cycles.size();
}

}  // namespace heapgraph::report
