#include "report/LeakReport.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "report/StackResolver.h"

namespace heapgraph::report {
namespace {

using Adjacency = std::vector<std::vector<uint32_t>>;

constexpr size_t kMaxListedTypes = 3;
constexpr size_t kMaxTypeKeys = 8;

// A record's blocks as they are collected, before the record is finished.
struct Group {
  LeakRecord record;
  bool uniform_size = true;
  std::vector<std::string> types;  // distinct, first seen first, at most kMaxListedTypes
  bool more_types = false;         // a type beyond `types` was seen
  // TypeKey()s whose type is already in `types` (at most kMaxTypeKeys): blocks with one of these
  // keys skip CategoryName, so a group formats its type about once, not once per block.
  std::vector<uint64_t> type_keys;
};

// What the pass over the blocks adds up per group, kept apart from the Groups in one compact
// array: a pass over millions of blocks then touches about one line per block, not a Group's
// three and its vectors' heap blocks. Folded into the Group's record after the pass.
struct Tally {
  uint64_t size = 0;
  uint64_t count = 0;
  uint64_t retained_bytes = 0;
  uint64_t block_size = 0;                                    // the last block's
  std::array<uint64_t, LeakReport::kMaxExamples> examples{};  // the lowest, ascending
  uint32_t example_count = 0;
  bool uniform_size = true;
  bool key_known = false;  // `known_key` is one of the Group's type_keys
  uint64_t known_key = 0;
};

std::string BlockType(const scanner::LeakedBlock& block) {
  return CategoryName(block.function, block.size);
}

// Leaked block v's type: its reader's name when typed (`types`, may be null), else the category.
std::string BlockType(const scanner::ScanResult& result, const std::vector<std::string>* types,
                      uint32_t v) {
  if (types != nullptr && v < types->size() && !(*types)[v].empty()) return (*types)[v];
  return BlockType(result.leaked[v]);
}

// Blocks with equal keys have equal BlockType(): it depends only on the size and on whether the
// function is a VM one (then not on the size).
uint64_t TypeKey(const scanner::LeakedBlock& block) {
  return format::IsVmFunction(block.function) ? UINT64_MAX : block.size;
}

// out[v] lists the blocks v references. Edges naming a block outside `leaked` are ignored.
Adjacency BuildAdjacency(const scanner::ScanResult& result) {
  Adjacency out(result.leaked.size());
  for (auto [from, to] : result.edges) {
    if (from < out.size() && to < out.size()) out[from].push_back(to);
  }
  return out;
}

// Keeps the kMaxExamples lowest addresses, ascending.
void AddExample(Tally& t, uint64_t address) {
  constexpr size_t kMax = LeakReport::kMaxExamples;
  if (t.example_count == kMax && t.examples[kMax - 1] < address) return;
  size_t i = t.example_count < kMax ? t.example_count++ : kMax - 1;  // the last one drops out
  for (; i > 0 && t.examples[i - 1] >= address; --i) t.examples[i] = t.examples[i - 1];
  t.examples[i] = address;
}

void AddType(Group& group, Tally& tally, const scanner::LeakedBlock& block,
             const std::string* typed) {
  if (group.more_types) return;  // the joined type can no longer change
  bool has_type = typed != nullptr && !typed->empty();
  uint64_t key = TypeKey(block);
  auto& keys = group.type_keys;
  if (!has_type && std::find(keys.begin(), keys.end(), key) != keys.end()) {
    tally.key_known = true;
    tally.known_key = key;
    return;
  }
  std::string type = has_type ? *typed : BlockType(block);
  if (std::find(group.types.begin(), group.types.end(), type) == group.types.end()) {
    if (group.types.size() == kMaxListedTypes) {
      group.more_types = true;
      return;
    }
    group.types.push_back(std::move(type));
  }
  if (!has_type && keys.size() < kMaxTypeKeys) keys.push_back(key);
}

void AddBlock(Group& group, Tally& t, const scanner::LeakedBlock& block, uint64_t retained,
              const std::string* typed) {
  if (t.count > 0 && block.size != t.block_size) t.uniform_size = false;
  t.block_size = block.size;
  t.size += block.size;
  t.count += 1;
  t.retained_bytes += retained;
  AddExample(t, block.address);
  bool has_type = typed != nullptr && !typed->empty();
  if (!has_type && t.key_known && t.known_key == TypeKey(block)) return;  // AddType: no change
  AddType(group, t, block, typed);
}

// The tally's sums into the group's record.
void Fold(Group& group, const Tally& t) {
  LeakRecord& r = group.record;
  r.size = t.size;
  r.count = t.count;
  r.retained_bytes = t.retained_bytes;
  r.block_size = t.block_size;
  r.examples.assign(t.examples.begin(), t.examples.begin() + t.example_count);
  group.uniform_size = t.uniform_size;
}

// "A" when every block has type A; otherwise "A, B, C" or "A, B, C, ..." (more than three).
std::string JoinTypes(const Group& group) {
  std::string joined;
  for (const std::string& type : group.types) joined += (joined.empty() ? "" : ", ") + type;
  return group.more_types ? joined + ", ..." : joined;
}

LeakRecord Finish(Group& group) {
  LeakRecord record = std::move(group.record);
  if (!group.uniform_size) record.block_size = 0;
  record.type = JoinTypes(group);
  return record;
}

bool LargerRecord(const LeakRecord& a, const LeakRecord& b) {
  if (a.size != b.size) return a.size > b.size;
  if (a.count != b.count) return a.count > b.count;
  if (a.kind != b.kind) return a.kind == LeakKind::kDirect;
  return a.stack_id < b.stack_id;
}

// (kind, stack) -> group index: open addressing with linear probing, at most half full, so it
// stays about as small as the number of groups (a table indexed by stack id spans the recording's
// whole stack table: up to hundreds of MB touched at random for a few thousand groups).
class GroupIndex {
 public:
  GroupIndex() : slots_(kInitialSlots) {}

  // The group of (kind, stack), or `next` (then inserted = true) when there was none.
  std::pair<size_t, bool> Find(LeakKind kind, uint32_t stack, size_t next) {
    Slot& slot = slots_[IndexOf(Key(kind, stack))];
    if (slot.group != kNone) return {slot.group, false};
    slot = {Key(kind, stack), next};
    if (2 * ++used_ > slots_.size()) Grow();
    return {next, true};
  }

  // The group of (kind, stack), which Find() inserted.
  size_t At(LeakKind kind, uint32_t stack) const { return slots_[IndexOf(Key(kind, stack))].group; }

 private:
  static constexpr size_t kNone = SIZE_MAX;
  static constexpr size_t kInitialSlots = 1024;  // a power of two
  struct Slot {
    uint64_t key = 0;
    size_t group = kNone;
  };

  static uint64_t Key(LeakKind kind, uint32_t stack) {
    return 2 * uint64_t{stack} + (kind == LeakKind::kDirect ? 1 : 0);
  }
  // The slot holding `key`, else the empty slot where it belongs.
  size_t IndexOf(uint64_t key) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = (key * 0x9e3779b97f4a7c15ULL) >> 20 & mask;; i = (i + 1) & mask) {
      if (slots_[i].group == kNone || slots_[i].key == key) return i;
    }
  }
  void Grow() {
    std::vector<Slot> old(2 * slots_.size());
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.group != kNone) slots_[IndexOf(s.key)] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t used_ = 0;
};

// One group per (kind, stack), in order of first block; `index` maps (kind, stack) to it.
std::vector<Group> CollectGroups(const scanner::ScanResult& result, const graph::LeakGraph& graph,
                                 GroupIndex& index, const std::vector<std::string>* types) {
  std::vector<Group> groups;
  std::vector<Tally> tallies;
  for (uint32_t v = 0; v < result.leaked.size(); ++v) {
    const scanner::LeakedBlock& block = result.leaked[v];
    LeakKind kind = graph.is_direct(v) ? LeakKind::kDirect : LeakKind::kIndirect;
    auto [group, inserted] = index.Find(kind, block.stack, groups.size());
    if (inserted) {
      groups.emplace_back();
      groups.back().record.kind = kind;
      groups.back().record.stack_id = block.stack;
      tallies.emplace_back();
    }
    AddBlock(groups[group], tallies[group], block, graph.retained_bytes(v),
             types != nullptr && v < types->size() ? &(*types)[v] : nullptr);
  }
  for (size_t g = 0; g < groups.size(); ++g) Fold(groups[g], tallies[g]);
  return groups;
}

// The finished records, largest first. position[g] is the record of group g.
std::vector<LeakRecord> SortedRecords(std::vector<Group>& groups, std::vector<size_t>& position) {
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&groups](size_t a, size_t b) {
    return LargerRecord(groups[a].record, groups[b].record);
  });
  position.assign(groups.size(), 0);
  std::vector<LeakRecord> records;
  records.reserve(groups.size());
  for (size_t i = 0; i < order.size(); ++i) {
    position[order[i]] = i;
    records.push_back(Finish(groups[order[i]]));
  }
  return records;
}

bool AllocatedEarlier(const scanner::ScanResult& result, uint32_t a, uint32_t b) {
  const scanner::LeakedBlock& x = result.leaked[a];
  const scanner::LeakedBlock& y = result.leaked[b];
  return x.seq != y.seq ? x.seq < y.seq : x.address < y.address;
}

// A shortest closed walk from `start` back to it through blocks of start's component (breadth
// first), as vertices: start first, the block that references start last. Self references are no
// step. Empty if there is none, which cannot happen for a component of two or more blocks.
std::vector<uint32_t> ShortestCycle(uint32_t start, const Adjacency& out,
                                    const graph::LeakGraph& graph) {
  uint32_t component = graph.component(start);
  std::unordered_map<uint32_t, uint32_t> parent = {{start, start}};
  std::deque<uint32_t> queue = {start};
  while (!queue.empty()) {
    uint32_t u = queue.front();
    queue.pop_front();
    for (uint32_t w : out[u]) {
      if (w == u) continue;
      if (w == start) {
        std::vector<uint32_t> path;
        for (uint32_t x = u; x != start; x = parent[x]) path.push_back(x);
        path.push_back(start);
        std::reverse(path.begin(), path.end());
        return path;
      }
      if (graph.component(w) == component && parent.try_emplace(w, u).second) queue.push_back(w);
    }
  }
  return {};
}

// For a cycle that another leaked block references: walks up the dominator tree from `start` to
// the nearest direct leak. Reaching the virtual root first means several leak roots reach the
// cycle, so none of them alone retains it.
void SetOwner(LeakCycle& cycle, uint32_t start, const scanner::ScanResult& result,
              const graph::LeakGraph& graph) {
  uint32_t v = start;
  while (v != UINT32_MAX && !graph.is_direct(v)) v = graph.immediate_dominator(v);
  if (v == UINT32_MAX) {
    cycle.representative_reason = "referenced by other leaks, none of which alone retains it";
    return;
  }
  cycle.retained_by = result.leaked[v].address;
  cycle.representative_reason =
      fmt::format("referenced by other leaked blocks; retained by the direct leak {:#x}",
                  result.leaked[v].address);
}

// The record of each leaked block: its (kind, stack) group's place among the sorted records.
class RecordOf {
 public:
  RecordOf(const scanner::ScanResult& result, const graph::LeakGraph& graph,
           const GroupIndex& index, const std::vector<size_t>& position)
      : result_(result), graph_(graph), index_(index), position_(position) {}
  size_t operator()(uint32_t v) const {
    LeakKind kind = graph_.is_direct(v) ? LeakKind::kDirect : LeakKind::kIndirect;
    return position_[index_.At(kind, result_.leaked[v].stack)];
  }

 private:
  const scanner::ScanResult& result_;
  const graph::LeakGraph& graph_;
  const GroupIndex& index_;
  const std::vector<size_t>& position_;
};

LeakCycle BuildCycle(const std::vector<uint32_t>& vertices, const scanner::ScanResult& result,
                     const graph::LeakGraph& graph, const Adjacency& out, const RecordOf& record_of,
                     const std::vector<std::string>* types) {
  LeakCycle cycle;
  std::unordered_map<uint32_t, size_t> member_of;
  uint32_t start = vertices.front();
  for (uint32_t v : vertices) {
    const scanner::LeakedBlock& block = result.leaked[v];
    member_of[v] = cycle.members.size();
    cycle.members.push_back(
        {block.address, block.size, BlockType(result, types, v), block.stack, record_of(v), ""});
    if (graph.is_direct(v)) cycle.representative = member_of[v];
    if (AllocatedEarlier(result, v, start)) start = v;
  }
  if (cycle.representative) {
    start = vertices[*cycle.representative];
    cycle.representative_reason = "earliest allocated";
    cycle.retained_bytes = graph.retained_bytes(start);
  } else {
    SetOwner(cycle, start, result, graph);
    cycle.retained_bytes = MemberBytes(cycle);
  }
  if (vertices.size() == 1) {
    cycle.path = {0};  // a typed self-owner
    return cycle;
  }
  for (uint32_t v : ShortestCycle(start, out, graph)) cycle.path.push_back(member_of[v]);
  return cycle;
}

std::vector<LeakCycle> BuildCycles(const scanner::ScanResult& result, const graph::LeakGraph& graph,
                                   const RecordOf& record_of, const std::vector<std::string>* types,
                                   const std::vector<uint32_t>* self_owners) {
  bool owners = self_owners != nullptr && !self_owners->empty();
  if (graph.cycles().empty() && !owners) return {};  // no adjacency lists (one per block) needed
  Adjacency out = BuildAdjacency(result);
  std::vector<LeakCycle> cycles;
  for (const std::vector<uint32_t>& vertices : graph.cycles()) {
    if (!vertices.empty()) {
      cycles.push_back(BuildCycle(vertices, result, graph, out, record_of, types));
    }
  }
  if (owners) {  // those not already in a cycle of two or more blocks
    std::unordered_set<uint32_t> in_cycles;
    for (const std::vector<uint32_t>& vertices : graph.cycles()) {
      in_cycles.insert(vertices.begin(), vertices.end());
    }
    for (uint32_t v : *self_owners) {
      if (v < result.leaked.size() && in_cycles.count(v) == 0) {
        cycles.push_back(BuildCycle({v}, result, graph, out, record_of, types));
      }
    }
  }
  std::stable_sort(cycles.begin(), cycles.end(), ListedBefore);
  return cycles;
}

// Every record's frames; a stack shared by a direct and an indirect record is copied once, its
// last record takes the resolver's frames.
void ResolveStacks(std::vector<LeakRecord>& records, StackResolver& resolver) {
  std::unordered_map<uint32_t, uint32_t> uses;
  for (const LeakRecord& r : records) ++uses[r.stack_id];
  for (LeakRecord& r : records) {
    r.stack = --uses[r.stack_id] == 0 ? resolver.Take(r.stack_id) : resolver.Resolve(r.stack_id);
  }
}

LeakSummary Summarize(const LeakReport& report) {
  LeakSummary s;
  for (const LeakRecord& r : report.leaks) {
    if (!r.suppressed.empty()) {
      s.suppressed_blocks += r.count;
      s.suppressed_bytes += r.size;
      continue;
    }
    bool direct = r.kind == LeakKind::kDirect;
    (direct ? s.direct_blocks : s.indirect_blocks) += r.count;
    (direct ? s.direct_bytes : s.indirect_bytes) += r.size;
  }
  s.leaked_bytes = s.direct_bytes + s.indirect_bytes;
  s.cycles = report.cycles.size();
  s.live_blocks = report.stats.live_blocks;
  s.live_bytes = report.stats.live_bytes;
  return s;
}

}  // namespace

const char* LeakKindName(LeakKind kind) {
  return kind == LeakKind::kDirect ? "direct" : "indirect";
}

uint64_t MemberBytes(const LeakCycle& cycle) {
  uint64_t total = 0;
  for (const CycleMember& m : cycle.members) total += m.size;
  return total;
}

bool ListedBefore(const LeakCycle& a, const LeakCycle& b) {
  if (a.retained_bytes != b.retained_bytes) return a.retained_bytes > b.retained_bytes;
  uint64_t sa = MemberBytes(a), sb = MemberBytes(b);
  return sa != sb ? sa > sb : a.members.front().address < b.members.front().address;
}

LeakReport BuildLeakReport(const scanner::ScanResult& result, const graph::LeakGraph& graph,
                           const RecordingReader& reader, Symbolizer& symbolizer,
                           const std::vector<std::string>* types,
                           const std::vector<uint32_t>* self_owners) {
  LeakReport report;
  report.ok = result.ok;
  report.error = result.error;
  report.notice = result.notice;
  report.timings = result.timings;
  report.stats = result.stats;
  report.recording_dir = result.recording_dir;
  if (!result.ok) return report;
  GroupIndex index;
  std::vector<Group> groups = CollectGroups(result, graph, index, types);
  std::vector<size_t> position;  // group -> record
  report.leaks = SortedRecords(groups, position);
  StackResolver resolver(reader, symbolizer);
  ResolveStacks(report.leaks, resolver);
  report.warnings = resolver.warnings();
  report.cycles =
      BuildCycles(result, graph, RecordOf(result, graph, index, position), types, self_owners);
  report.summary = Summarize(report);
  return report;
}

void ApplySuppressions(const Suppressions& rules, LeakReport& report) {
  if (!report.ok || rules.empty()) return;
  for (LeakRecord& r : report.leaks) {
    const std::string* rule = rules.Match(r.stack);
    if (rule == nullptr) continue;
    r.suppressed = *rule;
    auto use = std::find_if(report.suppressions_used.begin(), report.suppressions_used.end(),
                            [&](const SuppressionUse& u) { return u.rule == *rule; });
    if (use == report.suppressions_used.end()) {
      use = report.suppressions_used.insert(use, SuppressionUse{*rule, 0, 0});
    }
    use->count += r.count;
    use->bytes += r.size;
  }
  report.summary = Summarize(report);
}

}  // namespace heapgraph::report
