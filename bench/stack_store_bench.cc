// bench/: stack_store_bench — the suffix-sharing stack store (heap/store/StackStore.h) on
// call-tree-shaped stacks. A plain program (prints a markdown table): the measurements are phases,
// not loops.
//
// Stacks come from synthetic call trees 35 frames deep (_start, __libc_start_call_main and main on
// top): every tree node is a call site (a return address in one of four modules: the executable
// near 0x5555..., libc, libstdc++ and an application library near 0x7fff...), one return address
// appearing in many contexts as a utility function's call sites do. In the tree's branching levels
// every node has 1 + Geometric(p) children, p chosen so that the tree has `unique` leaves; each
// leaf is one unique allocation stack. Three shapes: branching spread over all levels below main
// (what recorded programs look like, see docs/performance.md), only in the innermost 12 levels, and
// only in the outermost 12 (the worst case for suffix sharing). The unique stacks are interned in
// random order, then `occurrences` stack occurrences drawn from them with Zipf(1) popularity.
//
// Reported per tree shape (median of --reps runs, each on a fresh store):
//   new nodes per unique stack   node_count / unique stacks
//   bytes per unique stack       node_count * 8 / unique (payload); slot_count * 8 / unique (the
//                                whole table at this fill); payload / 0.6 (the seed's 60% fill)
//   ns per Intern, new stack     phase 1: every unique stack interned once (includes the
//                                first-touch page faults of the table)
//   ns per Intern, seen stack    phase 2: all occurrences (every stack already stored)
//   ns per recorder cache hit    Recorder.cc's per-thread cache (FNV hash of the frames + a
//                                256-entry direct-mapped lookup), replicated here
// Usage: stack_store_bench [--unique N] [--occurrences M] [--reps R] [--slot-bits B]
#include <fcntl.h>
#include <ftw.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "heap/store/StackStore.h"

namespace {

constexpr uint32_t kDepth = 35;

uint64_t Mix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Uniform(uint64_t& s) {
  return double(Mix(s) >> 11) * (1.0 / 9007199254740992.0);
}

// Zipf(s) over [0, n) by inverse CDF on precomputed weights.
class Zipf {
 public:
  Zipf(uint32_t n, double s) : cdf_(n) {
    double sum = 0;
    for (uint32_t i = 0; i < n; ++i) cdf_[i] = sum += 1.0 / std::pow(double(i + 1), s);
    for (auto& c : cdf_) c /= sum;
  }
  uint32_t Draw(uint64_t& rng) const {
    double u = Uniform(rng);
    return uint32_t(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin()) %
           uint32_t(cdf_.size());
  }

 private:
  std::vector<double> cdf_;
};

// Where the call tree branches. Levels 0..2 (_start, __libc_start_call_main, main) never branch;
// the branching levels give every node 1 + Geometric(p) children, p chosen so that the tree has
// about `unique` leaves at depth 35.
struct Shape {
  const char* name;
  uint32_t first_branching_level;
  uint32_t last_branching_level;  // inclusive
};

// A call tree 35 levels deep: every node is a call site (return address) reached through its
// parent's function; a leaf is one unique allocation stack. Call sites of one level are drawn from
// a pool a third the size of the level, so the same return address appears in many contexts, as
// a utility function's call sites do; siblings always differ.
struct CallTree {
  std::vector<std::vector<uint32_t>> parent;   // per level: parent index in the level above
  std::vector<std::vector<uint64_t>> address;  // per level: return address
};

CallTree GrowTree(const Shape& shape, uint32_t unique, uint64_t seed) {
  const uint64_t kModules[] = {0x555555556000ull, 0x7ffff7c28000ull, 0x7ffff7e8a000ull,
                               0x7ffff1000000ull};
  uint32_t branching = shape.last_branching_level - shape.first_branching_level + 1;
  double m = std::pow(double(unique), 1.0 / branching);
  for (;; m *= 1.01) {
    uint64_t rng = seed;
    CallTree t;
    t.parent.resize(kDepth);
    t.address.resize(kDepth);
    t.parent[0] = {0};
    for (uint32_t l = 1; l < kDepth; ++l) {
      bool branches = l >= shape.first_branching_level && l <= shape.last_branching_level;
      double p = branches ? (m - 1) / m : 0;  // P(another child)
      for (uint32_t i = 0; i < t.parent[l - 1].size(); ++i) {
        t.parent[l].push_back(i);
        while (Uniform(rng) < p && t.parent[l].size() < 8ull * unique) t.parent[l].push_back(i);
      }
    }
    if (t.parent[kDepth - 1].size() < unique) continue;
    for (uint32_t l = 0; l < kDepth; ++l) {
      uint32_t module = l == 1 ? 1 : l + 3 >= kDepth ? 2 + l % 2 : (l % 3 == 0 ? 3 : 0);
      uint64_t pool = std::max<uint64_t>(256, t.parent[l].size() / 3);  // > any sibling count
      uint64_t base = kModules[module] + (uint64_t(l) << 20);           // 1 MiB of text per level
      for (uint32_t i = 0; i < t.parent[l].size(); ++i) {
        uint64_t a;
        bool clash;
        do {  // siblings are distinct call sites
          a = base + 5 + (Mix(rng) % pool) * 37;
          clash = false;
          for (uint32_t j = i; j-- > 0 && t.parent[l][j] == t.parent[l][i];)
            clash |= t.address[l][j] == a;
        } while (clash);
        t.address[l].push_back(a);
      }
    }
    return t;
  }
}

struct Workload {
  std::vector<uint64_t> unique;       // unique stacks, kDepth frames each (innermost first)
  std::vector<uint32_t> occurrences;  // indices into unique
};

Workload MakeWorkload(const Shape& shape, uint32_t unique, uint32_t occurrences, uint64_t seed) {
  CallTree tree = GrowTree(shape, unique, seed);
  Workload w;
  uint64_t rng = seed ^ 0xabcdef;
  // `unique` leaves spread over the whole tree, in random order (the order a program meets them).
  uint64_t leaves = tree.parent[kDepth - 1].size();
  std::vector<uint32_t> chosen;
  for (uint64_t i = 0; i < leaves && chosen.size() < unique; ++i) {
    if (Mix(rng) % (leaves - i) < unique - chosen.size()) chosen.push_back(uint32_t(i));
  }
  for (uint32_t i = uint32_t(chosen.size()); i > 1; --i)
    std::swap(chosen[i - 1], chosen[Mix(rng) % i]);
  for (uint32_t leaf : chosen) {
    uint32_t index = leaf;
    for (uint32_t l = kDepth; l-- > 0;) {
      w.unique.push_back(tree.address[l][index]);
      index = tree.parent[l][index];
    }
  }
  uint32_t n = uint32_t(chosen.size());
  // Popularity: Zipf(1) over the stacks (in their random order).
  Zipf popularity(n, 1.0);
  w.occurrences.reserve(occurrences);
  for (uint32_t i = 0; i < occurrences; ++i) w.occurrences.push_back(popularity.Draw(rng));
  return w;
}

double NowNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

// Recorder.cc's per-thread stack cache (anonymous namespace there), replicated.
struct CacheEntry {
  uint64_t hash;
  uint32_t id;
};
uint64_t HashFrames(const uintptr_t* frames, uint32_t depth) {
  uint64_t h = 0x84222325cbf29ce4ull ^ depth;
  for (uint32_t i = 0; i < depth; ++i) h = (h ^ frames[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

struct Result {
  double new_nodes_per_stack, payload_bytes, table_bytes, seed_fill_bytes, fill;
  double ns_new, ns_seen, cpu_ns_new, cpu_ns_seen, ns_cache_hit;
  uint64_t unique, nodes, dropped;
};

class TempDir {
 public:
  TempDir() {
    char path[] = "/tmp/hg-stack-bench.XXXXXX";
    if (mkdtemp(path) == nullptr) std::exit(1);
    path_ = path;
    fd_ = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  ~TempDir() {
    close(fd_);
    nftw(
        path_.c_str(),
        [](const char* p, const struct stat*, int, struct FTW*) { return remove(p); }, 16,
        FTW_DEPTH | FTW_PHYS);
  }
  int fd() const { return fd_; }

 private:
  std::string path_;
  int fd_;
};

Result RunOnce(const Workload& w, uint32_t slot_bits, int rep) {
  TempDir dir;
  heapgraph::StackStore store;
  std::string name = "stacks-" + std::to_string(rep);
  if (!store.Create(dir.fd(), name.c_str(), slot_bits, 64)) {
    std::perror("StackStore::Create");
    std::exit(1);
  }
  const auto* frames = reinterpret_cast<const uintptr_t*>(w.unique.data());
  uint32_t n = uint32_t(w.unique.size() / kDepth);
  std::vector<uint32_t> ids(n);
  Result r{};
  uint64_t check = 0;

  // Phase 1: every unique stack once (all new).
  double t0 = NowNs(CLOCK_MONOTONIC), c0 = NowNs(CLOCK_THREAD_CPUTIME_ID);
  for (uint32_t i = 0; i < n; ++i) ids[i] = store.Intern(frames + size_t(i) * kDepth, kDepth);
  double t1 = NowNs(CLOCK_MONOTONIC), c1 = NowNs(CLOCK_THREAD_CPUTIME_ID);
  r.ns_new = (t1 - t0) / n;
  r.cpu_ns_new = (c1 - c0) / n;
  r.unique = n;
  r.nodes = store.node_count();
  r.dropped = store.dropped();

  // Phase 2: all occurrences (every one seen before).
  t0 = NowNs(CLOCK_MONOTONIC);
  c0 = NowNs(CLOCK_THREAD_CPUTIME_ID);
  for (uint32_t k : w.occurrences)
    check += store.Intern(frames + size_t(k) * kDepth, kDepth) != ids[k];
  t1 = NowNs(CLOCK_MONOTONIC);
  c1 = NowNs(CLOCK_THREAD_CPUTIME_ID);
  r.ns_seen = (t1 - t0) / double(w.occurrences.size());
  r.cpu_ns_seen = (c1 - c0) / double(w.occurrences.size());
  if (check != 0)
    std::fprintf(stderr, "stack ids changed for %lu occurrences!\n", (unsigned long)check);

  // Recorder cache hits: hash the frames and look the entry up (the cache filled by a first pass).
  static CacheEntry cache[256];
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t h = HashFrames(frames + size_t(i) * kDepth, kDepth);
    cache[h % 256] = {h, ids[i]};
  }
  uint32_t hot[64];
  for (uint32_t i = 0; i < 64; ++i) hot[i] = w.occurrences[i];  // a few stacks, all cached
  for (uint32_t i = 0; i < 64; ++i) {
    uint64_t h = HashFrames(frames + size_t(hot[i]) * kDepth, kDepth);
    cache[h % 256] = {h, ids[hot[i]]};
  }
  uint64_t hits = 0;
  constexpr uint32_t kLookups = 2'000'000;
  t0 = NowNs(CLOCK_THREAD_CPUTIME_ID);
  for (uint32_t i = 0; i < kLookups; ++i) {
    const uintptr_t* f = frames + size_t(hot[i & 63]) * kDepth;
    uint64_t h = HashFrames(f, kDepth);
    const CacheEntry& e = cache[h % 256];
    hits += e.hash == h && e.id != 0;
  }
  t1 = NowNs(CLOCK_THREAD_CPUTIME_ID);
  r.ns_cache_hit = (t1 - t0) / kLookups;
  if (hits == 0) std::fprintf(stderr, "no cache hits?\n");

  r.new_nodes_per_stack = double(r.nodes) / n;
  r.payload_bytes = double(r.nodes) * 8 / n;
  r.table_bytes = double(store.slot_count()) * 8 / n;
  r.seed_fill_bytes = r.payload_bytes / 0.6;
  r.fill = double(r.nodes) / double(store.slot_count());
  store.Unmap();
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t unique = 50'000, occurrences = 1'000'000, reps = 5, slot_bits = 22;
  for (int i = 1; i + 1 < argc; i += 2) {
    uint32_t v = uint32_t(std::strtoul(argv[i + 1], nullptr, 10));
    if (!std::strcmp(argv[i], "--unique"))
      unique = v;
    else if (!std::strcmp(argv[i], "--occurrences"))
      occurrences = v;
    else if (!std::strcmp(argv[i], "--reps"))
      reps = v;
    else if (!std::strcmp(argv[i], "--slot-bits"))
      slot_bits = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  const Shape shapes[] = {
      // Branching spread evenly over every level below main (what recorded programs look like:
      // docs/performance.md compares with cmake and python recordings).
      {"even (levels 3-34)", 3, kDepth - 1},
      // Stacks diverge only in the innermost 12 frames (a shared framework trunk).
      {"inner (levels 23-34)", kDepth - 12, kDepth - 1},
      // Stacks diverge only in the outermost 12 frames below main: the worst case for sharing.
      {"outer (levels 3-14)", 3, 14},
  };
  std::printf(
      "stack store: %u-frame stacks, %u unique, %u occurrences, %u slots (2^%u), "
      "median of %u runs\n\n",
      kDepth, unique, occurrences, 1u << slot_bits, slot_bits, reps);
  std::printf(
      "| graph | unique stacks | new nodes / unique stack | bytes / stack (nodes x 8) | "
      "bytes / stack at 60%% fill | table bytes / stack (fill) | ns / Intern new | "
      "ns / Intern seen | cpu ns new / seen | ns / recorder cache hit |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Shape& shape : shapes) {
    Workload w = MakeWorkload(shape, unique, occurrences, 1234);
    std::vector<Result> results;
    for (uint32_t rep = 0; rep < reps; ++rep) results.push_back(RunOnce(w, slot_bits, int(rep)));
    auto med = [&](double Result::*field) {
      std::vector<double> v;
      for (const auto& r : results) v.push_back(r.*field);
      return Median(v);
    };
    const Result& r0 = results[0];
    std::printf(
        "| %s | %lu | %.2f | %.1f | %.1f | %.0f (%.1f%%) | %.0f | %.0f | %.0f / %.0f | %.1f |\n",
        shape.name, (unsigned long)r0.unique, r0.new_nodes_per_stack, r0.payload_bytes,
        r0.seed_fill_bytes, r0.table_bytes, r0.fill * 100, med(&Result::ns_new),
        med(&Result::ns_seen), med(&Result::cpu_ns_new), med(&Result::cpu_ns_seen),
        med(&Result::ns_cache_hit));
    if (r0.dropped != 0) std::printf("  (dropped: %lu)\n", (unsigned long)r0.dropped);
    std::fflush(stdout);
  }
  return 0;
}
