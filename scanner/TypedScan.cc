#include "scanner/TypedScan.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "scanner/MmapAllocator.h"
#include "scanner/RecordFile.h"
#include "scanner/RetentionPaths.h"
#include "scanner/RootOrigin.h"
#include "scanner/StrongComponents.h"
#include "scanner/types/SnapshotMemory.h"

namespace heapgraph::scanner {
namespace {

constexpr uint64_t kMagic = 0x48475459504553ull;  // "HGTYPES"
constexpr uint32_t kNone = UINT32_MAX;
constexpr uint64_t kSmallSizes = 4096;  // untyped sizes below this are counted in a table

struct Header {
  uint64_t magic;
  uint64_t objects;
  uint64_t edges;
  uint64_t untyped;
  uint64_t paths;
  uint64_t steps;
  double typing_ms;
  double path_ms;
};

struct PathHeader {
  uint8_t root_kind;
  int32_t thread;
  uint64_t root_address;
  uint32_t module;
  uint32_t steps;
};

double NowMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Untyped blocks below kSmallSizes bytes, one category per size: `slot[size]` is 1 + the size's
// position in `used` (0: not met yet), so a heap with few sizes writes few categories. The table
// of categories for every size had been 192 KiB, written and read by every typed check.
struct SmallSizes {
  uint16_t slot[kSmallSizes] = {};
  MmapVector<UntypedCategory> used;

  UntypedCategory& Of(uint64_t size) {
    if (slot[size] == 0) {
      used.push_back({size, format::AllocFunction::kNone});
      slot[size] = static_cast<uint16_t>(used.size());
    }
    return used[slot[size] - 1];
  }
};
static_assert(kSmallSizes <= UINT16_MAX);

void CountUntyped(const LeakedBlock& b, bool leaked, SmallSizes& small,
                  MmapVector<UntypedCategory>& other) {
  bool vm = format::IsVmFunction(b.function);
  UntypedCategory* c;
  if (!vm && b.size < kSmallSizes) {
    c = &small.Of(b.size);
  } else {
    other.push_back({vm ? UINT64_MAX : b.size, vm ? b.function : format::AllocFunction::kNone});
    c = &other.back();
  }
  c->size_key = vm ? UINT64_MAX : b.size;
  c->live_count += 1;
  c->live_bytes += b.size;
  c->leaked_count += leaked ? 1 : 0;
  c->leaked_bytes += leaked ? b.size : 0;
}

// Merges per-block entries of equal size key (sorted first) and appends them to `out`.
void MergeOther(MmapVector<UntypedCategory>& other, MmapVector<UntypedCategory>& out) {
  std::sort(other.begin(), other.end(), [](const UntypedCategory& a, const UntypedCategory& b) {
    return a.size_key < b.size_key;
  });
  for (const UntypedCategory& c : other) {
    if (!out.empty() && out.back().size_key == c.size_key && c.size_key >= kSmallSizes) {
      UntypedCategory& m = out.back();
      m.live_count += c.live_count;
      m.live_bytes += c.live_bytes;
      m.leaked_count += c.leaked_count;
      m.leaked_bytes += c.leaked_bytes;
    } else {
      out.push_back(c);
    }
  }
}

// The root kind of the root that reached `block` on the search.
PathHeader RootOf(const RetentionPaths& search, uint32_t block, const TypedScan::Input& in) {
  RootOrigin o = ClassifyRoot(search.root(block), {in.roots, in.threads, in.static_tls_size,
                                                   in.tcb_size, &in.readers.modules(), nullptr});
  return {static_cast<uint8_t>(o.kind), o.thread, o.address, o.module, 0};
}

struct Typed {
  MmapVector<TypedObject> objects;
  MmapVector<uint32_t> typed_index;  // per block
  MmapVector<TypedEdge> edges;
  MmapVector<UntypedCategory> untyped;
};

void Identify(const TypedScan::Input& in, Typed& t) {
  types::SnapshotMemory memory(in.index, in.readers.modules(), in.mappings);
  MmapVector<types::TypeIdentity> own;
  std::span<types::TypeIdentity> identities = in.identities;
  if (identities.empty()) {
    own.resize(in.blocks.size());
    identities = own;
    in.readers.IdentifyRange(memory, identities, 0, static_cast<uint32_t>(own.size()));
  }
  in.readers.IdentifyReferenced(memory, identities);
  t.typed_index.assign(in.blocks.size(), kNone);
  SmallSizes small;
  MmapVector<UntypedCategory> other;
  for (uint32_t b = 0; b < in.blocks.size(); ++b) {
    const LeakedBlock& block = in.blocks[b];
    bool leaked = in.leaked_index[b] != kNone;
    if (!identities[b].typed()) {
      CountUntyped(block, leaked, small, other);
      continue;
    }
    t.typed_index[b] = static_cast<uint32_t>(t.objects.size());
    TypedObject o;
    o.address = block.address;
    o.size = block.size;
    o.identity = identities[b];
    o.stack = block.stack;
    o.seq = block.seq;
    o.function = block.function;
    o.leaked = leaked ? 1 : 0;
    o.leaked_index = in.leaked_index[b];
    t.objects.push_back(o);
  }
  std::sort(
      small.used.begin(), small.used.end(),
      [](const UntypedCategory& a, const UntypedCategory& b) { return a.size_key < b.size_key; });
  t.untyped.insert(t.untyped.end(), small.used.begin(), small.used.end());
  MergeOther(other, t.untyped);
}

void CollectEdges(const TypedScan::Input& in, Typed& t) {
  for (uint32_t b = 0; b < in.blocks.size(); ++b) {
    uint32_t from = t.typed_index[b];
    if (from == kNone) continue;
    in.marker.ForEachReferenceAt(b, [&](size_t word, uint32_t target, uint64_t value) {
      uint32_t to = t.typed_index[target];
      if (to == kNone) return;
      t.edges.push_back({from, to, static_cast<uint32_t>(word * 8),
                         static_cast<uint32_t>(value - in.index.block(target).begin)});
    });
  }
}

// Groups: the reachable cyclic components of the typed references, numbered; group[block].
uint32_t ReachableGroups(const TypedScan::Input& in, const Typed& t, MmapVector<uint32_t>& group) {
  MmapVector<std::pair<uint32_t, uint32_t>> pairs;
  pairs.reserve(t.edges.size());
  for (const TypedEdge& e : t.edges) pairs.push_back({e.from, e.to});
  StrongComponents components(static_cast<uint32_t>(t.objects.size()), pairs);
  MmapVector<uint32_t> number(components.count(), kNone);
  uint32_t groups = 0;
  group.assign(in.blocks.size(), kNone);
  for (uint32_t b = 0; b < in.blocks.size(); ++b) {
    uint32_t o = t.typed_index[b];
    if (o == kNone || t.objects[o].leaked != 0) continue;
    uint32_t c = components.component(o);
    if (!components.cyclic(c)) continue;
    if (number[c] == kNone) number[c] = groups++;
    group[b] = number[c];
  }
  return groups;
}

bool WritePaths(const TypedScan::Input& in, const Typed& t, AppendWriter& w, uint64_t* paths,
                uint64_t* steps) {
  MmapVector<uint32_t> group;
  uint32_t groups = ReachableGroups(in, t, group);
  if (groups == 0) return true;
  RetentionPaths search(in.marker, in.index, group, groups);
  search.Search(in.roots, in.threads);
  MmapVector<PathStep> path;
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t b = search.reached(g);
    if (b == RetentionPaths::kNone) continue;
    path.clear();
    uint32_t first = b;
    for (uint32_t x = b; x != RetentionPaths::kNone; x = search.parent(x)) {
      const LeakedBlock& block = in.blocks[x];
      path.push_back({block.address, block.size,
                      search.parent(x) == RetentionPaths::kNone ? 0u : search.offset(x),
                      t.typed_index[x], block.function});
      first = x;
    }
    std::reverse(path.begin(), path.end());
    PathHeader h = RootOf(search, first, in);
    h.steps = static_cast<uint32_t>(path.size());
    if (!w.Put(&h, 1) || !w.Put(path.data(), path.size())) return false;
    ++*paths;
    *steps += path.size();
  }
  return true;
}

}  // namespace

bool TypedScan::WriteTo(int fd, const Input& in) {
  double start = NowMs();
  Typed t;
  Identify(in, t);
  CollectEdges(in, t);
  Header h = {kMagic, t.objects.size(), t.edges.size(), t.untyped.size(), 0, 0, 0, 0};
  AppendWriter w(fd);
  w.Seek(sizeof(Header));
  if (!w.Put(t.objects.data(), t.objects.size()) || !w.Put(t.edges.data(), t.edges.size()) ||
      !w.Put(t.untyped.data(), t.untyped.size())) {
    return false;
  }
  double paths_start = NowMs();
  if (!WritePaths(in, t, w, &h.paths, &h.steps)) return false;
  h.path_ms = NowMs() - paths_start;
  h.typing_ms = NowMs() - start;
  w.Seek(0);
  return w.Put(&h, 1);
}

bool TypedScan::ReadFrom(int fd, TypedScanResult* out, std::string* error) {
  Header h;
  if (pread(fd, &h, sizeof(h), 0) != static_cast<ssize_t>(sizeof(h)) || h.magic != kMagic) {
    *error = "the snapshot process wrote no type information";
    return false;
  }
  off_t offset = sizeof(h);
  if (!ReadArray(fd, &offset, h.objects, &out->objects) ||
      !ReadArray(fd, &offset, h.edges, &out->edges) ||
      !ReadArray(fd, &offset, h.untyped, &out->untyped)) {
    *error = "the snapshot process wrote truncated type information";
    return false;
  }
  out->paths.clear();
  for (uint64_t p = 0; p < h.paths; ++p) {
    PathHeader ph;
    std::vector<PathStep> steps;
    bool ok = pread(fd, &ph, sizeof(ph), offset) == static_cast<ssize_t>(sizeof(ph));
    offset += sizeof(ph);
    if (!ok || !ReadArray(fd, &offset, ph.steps, &steps)) {
      *error = "the snapshot process wrote truncated retention paths";
      return false;
    }
    RetentionPath path;
    path.root_kind = static_cast<RootKind>(ph.root_kind);
    path.thread = ph.thread;
    path.root_address = ph.root_address;
    path.module = ph.module;
    path.steps = std::move(steps);
    out->paths.push_back(std::move(path));
  }
  out->typing_ms = h.typing_ms;
  out->path_ms = h.path_ms;
  out->enabled = true;
  return true;
}

}  // namespace heapgraph::scanner
