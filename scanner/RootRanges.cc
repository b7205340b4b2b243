#include "scanner/RootRanges.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>

#include "heap/platform/ResidentPages.h"
#include "roots/ThreadStacks.h"

namespace heapgraph::scanner {

using roots::ProcessMappings;

bool RootRanges::HoldsBlock(const ProcessMappings::Mapping& m, const BlockIndex& blocks) {
  if (m.end <= blocks.lowest() || m.start >= blocks.highest()) return false;
  if (blocks.Find(m.start) != BlockIndex::kNotFound) return true;  // a block reaching into m
  // Otherwise a block overlapping m must start inside it: the first block starting at or after
  // m.start.
  uint32_t lo = 0, hi = blocks.size();
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (blocks.block(mid).begin < m.start) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < blocks.size() && blocks.block(lo).begin < m.end;
}

void RootRanges::ClipToBlock(uint64_t stack_pointer, const BlockIndex& blocks, uint64_t* begin,
                             uint64_t* end) {
  const uint32_t i = blocks.Find(stack_pointer);
  if (i == BlockIndex::kNotFound) return;
  const BlockRange& b = blocks.block(i);
  *begin = std::max(*begin, b.begin);
  *end = std::min(*end, b.begin + b.size);
}

// glibc puts a thread's control block (struct pthread, whose tcbhead_t starts with `tcb` and has
// `self` two words later, both pointing to itself) at the top of its stack mapping, with the
// static TLS blocks right below it. On x86-64 and aarch64 alike the TCB lies within the last
// static_tls_size bytes.
uint64_t RootRanges::LiveStart(const ProcessMappings::Mapping& m, uint64_t static_tls_size,
                               std::span<const uint64_t> live_tcbs, uint64_t* cached_tcb) {
  *cached_tcb = 0;
  if (static_tls_size == 0 || m.size() < 2 * static_tls_size) return m.start;
  uint64_t top = m.end - static_tls_size - 64;
  top &= ~uint64_t{63};
  // Only the pages of the top that are in memory are read (all of them when the kernel cannot
  // say): reading one that is not mapped a zero page and its page table, in most mappings of a
  // small program (the recorder's reservations, the scan's buffers), for nothing, since a control
  // block is written. A swapped-out control block is missed so: that mapping is scanned whole, as
  // one with no control block is.
  const uint64_t page = static_cast<uint64_t>(getpagesize());
  const uint64_t first_page = top & ~(page - 1);
  unsigned char resident[32];
  const size_t pages = ResidentPages(top, m.end, resident, sizeof(resident));
  for (uint64_t tp = m.end - 64; tp >= top; tp -= 64) {
    if (pages != 0 && (resident[(tp - first_page) / page] & 1) == 0) {
      tp &= ~(page - 1);  // on to the last line of the page below
      continue;
    }
    auto* word = reinterpret_cast<const uint64_t*>(tp);
    if (word[0] != tp || word[2] != tp) continue;  // readable: m is readable and private
    bool live = std::find(live_tcbs.begin(), live_tcbs.end(), tp) != live_tcbs.end();
    if (live) return m.start;
    *cached_tcb = tp;
    return top;
  }
  return m.start;
}

uint64_t RootRanges::StaticTlsSize() {
  using StaticTlsInfoFn = void (*)(size_t*, size_t*);
  auto info = reinterpret_cast<StaticTlsInfoFn>(dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"));
  if (info == nullptr) return 0;
  size_t size = 0, align = 0;
  info(&size, &align);
  return size;
}

void RootRanges::Compute(const ProcessMappings& mappings,
                         std::span<const roots::ThreadInfo> threads, const BlockIndex& blocks,
                         uint64_t caller_stack_pointer, std::span<const uint64_t> own_memory,
                         uint64_t static_tls_size) {
  ranges_.clear();
  cached_tcbs_.clear();
  std::vector<const ProcessMappings::Mapping*, MmapAllocator<const ProcessMappings::Mapping*>>
      skipped;  // thread stacks (scanned from SP only) and heapgraph's own mappings
  const ProcessMappings::Mapping* program_stack = mappings.Find(caller_stack_pointer);
  // Live threads' control blocks. The scan's process shares the calling thread's thread pointer.
  std::vector<uint64_t, MmapAllocator<uint64_t>> live_tcbs = {
      reinterpret_cast<uint64_t>(pthread_self())};
#if defined(__x86_64__)
  for (const roots::ThreadInfo& t : threads) {
    live_tcbs.push_back(t.regs[roots::ThreadInfo::kFsBase]);
  }
#endif
  for (uint64_t address : own_memory) {
    const ProcessMappings::Mapping* m = mappings.Find(address);
    if (m != nullptr && m != program_stack) skipped.push_back(m);
  }
  if (program_stack != nullptr) {
    skipped.push_back(program_stack);
    uint64_t begin = std::max<uint64_t>(program_stack->start, caller_stack_pointer);
    uint64_t end = program_stack->end;
    ClipToBlock(caller_stack_pointer, blocks, &begin, &end);
    ranges_.push_back({begin, end, true});
  }
  // Each thread's stack around its SP; and where the SP lies outside the thread's own stack (a
  // sigaltstack handler, a swapcontext fiber), that stack whole too: it holds the frames the
  // thread returns to.
  for (const roots::ThreadInfo& t : threads) {
    if (t.is_caller) continue;
    roots::ThreadStacks::Range r = roots::ThreadStacks::ForThread(t, mappings);
    if (r.mapping != nullptr) {
      skipped.push_back(r.mapping);
      ClipToBlock(t.stack_pointer, blocks, &r.begin, &r.end);
      if (r.begin < r.end) ranges_.push_back({r.begin, r.end, true, true});
    }
  }
  for (const roots::ThreadInfo& t : threads) {
    const uint64_t sp = t.is_caller ? caller_stack_pointer : t.stack_pointer;
    const ProcessMappings::Mapping* own =
        roots::ThreadStacks::OwnStack(t, mappings, static_tls_size);
    if (own == nullptr || own->Contains(sp) || !own->readable || !own->writable) continue;
    if (std::find(skipped.begin(), skipped.end(), own) != skipped.end()) continue;
    skipped.push_back(own);
    const bool anonymous = own->kind == ProcessMappings::Kind::kAnonymous ||
                           own->kind == ProcessMappings::Kind::kMainStack;
    ranges_.push_back({own->start, own->end, true, anonymous});
  }
  std::sort(skipped.begin(), skipped.end());  // one lookup per mapping: 10,000 threads and more
  for (const ProcessMappings::Mapping& m : mappings.mappings()) {
    if (!m.readable || !m.writable || m.shared) continue;
    if (m.kind == ProcessMappings::Kind::kHeap || m.kind == ProcessMappings::Kind::kSpecial ||
        m.kind == ProcessMappings::Kind::kMainStack) {
      continue;
    }
    if (std::binary_search(skipped.begin(), skipped.end(), &m)) continue;
    if (HoldsBlock(m, blocks)) continue;
    bool anonymous = m.kind == ProcessMappings::Kind::kAnonymous;
    uint64_t cached_tcb = 0;
    ranges_.push_back(
        {LiveStart(m, static_tls_size, live_tcbs, &cached_tcb), m.end, false, anonymous});
    if (cached_tcb != 0) cached_tcbs_.push_back(cached_tcb);
  }
}

void RootRanges::Exclude(std::span<const std::pair<uint64_t, uint64_t>> own) {
  // The cuts in address order, overlapping ones merged.
  std::vector<std::pair<uint64_t, uint64_t>, MmapAllocator<std::pair<uint64_t, uint64_t>>> cuts;
  cuts.reserve(own.size());
  for (auto cut : own) {
    if (cut.first < cut.second) cuts.push_back(cut);
  }
  if (cuts.empty()) return;
  std::sort(cuts.begin(), cuts.end());
  size_t merged = 0;
  for (size_t i = 1; i < cuts.size(); ++i) {
    if (cuts[i].first <= cuts[merged].second) {
      cuts[merged].second = std::max(cuts[merged].second, cuts[i].second);
    } else {
      cuts[++merged] = cuts[i];
    }
  }
  cuts.resize(merged + 1);
  std::vector<RootRange, MmapAllocator<RootRange>> kept;
  kept.reserve(ranges_.size() + cuts.size());
  for (const RootRange& r : ranges_) {
    // The first cut ending after r.begin, then every cut starting before r.end.
    auto cut = std::partition_point(cuts.begin(), cuts.end(),
                                    [&](const auto& c) { return c.second <= r.begin; });
    uint64_t begin = r.begin;
    for (; cut != cuts.end() && cut->first < r.end; ++cut) {
      if (cut->first > begin) kept.push_back({begin, cut->first, r.thread_stack, r.direct});
      begin = std::max(begin, cut->second);
    }
    if (begin < r.end) kept.push_back({begin, r.end, r.thread_stack, r.direct});
  }
  ranges_.swap(kept);
}

void RootRanges::ExcludeUnwinderMemory(const UnwinderMappings& unwinder,
                                       const ProcessMappings& mappings) {
  std::vector<std::pair<uint64_t, uint64_t>, MmapAllocator<std::pair<uint64_t, uint64_t>>> own;
  unwinder.ForEach([&](uint64_t begin, uint64_t end) {
    while (begin < end) {
      const ProcessMappings::Mapping* m = mappings.Find(begin);
      if (m == nullptr || m->shared || m->kind != ProcessMappings::Kind::kAnonymous) return;
      own.push_back({begin, std::min(end, m->end)});
      begin = m->end;
    }
  });
  Exclude(own);
}

void RootRanges::ExcludeWaitingCheckFrames(std::span<const HeapgraphCheckEntrant> entrants,
                                           std::span<const roots::ThreadInfo> threads,
                                           const ProcessMappings& mappings) {
  std::vector<HeapgraphCheckEntrant, MmapAllocator<HeapgraphCheckEntrant>> waiting;
  for (const HeapgraphCheckEntrant& e : entrants) {
    if (e.tid > 0) waiting.push_back(e);
  }
  if (waiting.empty()) return;
  std::vector<std::pair<uint64_t, uint64_t>, MmapAllocator<std::pair<uint64_t, uint64_t>>> own;
  for (const roots::ThreadInfo& t : threads) {
    if (t.is_caller) continue;  // scanned from the caller's frame already
    for (const HeapgraphCheckEntrant& e : waiting) {
      if (e.tid != t.tid || e.stack_pointer <= t.stack_pointer) continue;
      const ProcessMappings::Mapping* m = mappings.Find(t.stack_pointer);
      if (m == nullptr || !m->Contains(e.stack_pointer)) continue;
      const uint64_t low = t.stack_pointer - std::min<uint64_t>(t.stack_pointer - m->start,
                                                                roots::ThreadInfo::kRedZone);
      own.push_back({low, e.stack_pointer});
    }
  }
  Exclude(own);
}

bool RootRanges::InStaticTls(uint64_t begin, uint64_t end, uint64_t thread_pointer,
                             uint64_t static_tls_size) {
  if (static_tls_size == 0 || begin >= end) return false;
#if defined(__x86_64__)
  return thread_pointer >= static_tls_size && begin >= thread_pointer - static_tls_size &&
         end <= thread_pointer;
#else
  return begin >= thread_pointer && end >= begin && end - thread_pointer <= static_tls_size;
#endif
}

void RootRanges::ExcludeThreadState(const StaticTlsArea& area,
                                    std::span<const roots::ThreadInfo> threads,
                                    uint64_t static_tls_size) {
  if (area.size() == 0) return;
  std::vector<uint64_t, MmapAllocator<uint64_t>> pointers(cached_tcbs_.begin(), cached_tcbs_.end());
#if defined(__x86_64__)
  for (const roots::ThreadInfo& t : threads) pointers.push_back(t.regs[roots::ThreadInfo::kFsBase]);
#else
  (void)threads;  // ThreadInfo holds no TPIDR_EL0: only the scanning thread's is known
  pointers.push_back(StaticTlsArea::ThreadPointer());
#endif
  std::vector<std::pair<uint64_t, uint64_t>, MmapAllocator<std::pair<uint64_t, uint64_t>>> own;
  own.reserve(pointers.size());
  for (uint64_t tp : pointers) {
    uint64_t begin = area.BeginIn(tp);
    uint64_t end = begin + area.size();
    if (InStaticTls(begin, end, tp, static_tls_size)) own.push_back({begin, end});
  }
  Exclude(own);
}

void RootRanges::SkipAbsentPages(PresentPages& pages) {
  std::vector<RootRange, MmapAllocator<RootRange>> kept;
  kept.reserve(ranges_.size());
  for (const RootRange& r : ranges_) {
    if (r.thread_stack) {  // in use above SP; one range each names its thread (TypedScan)
      kept.push_back(r);
      continue;
    }
    absent_pages_ += pages.ForEachRun(r.begin, r.end, [&](uint64_t begin, uint64_t end) {
      kept.push_back({begin, end, r.thread_stack, r.direct});
    });
  }
  ranges_.swap(kept);
}

uint64_t RootRanges::total_bytes() const {
  uint64_t n = 0;
  for (const RootRange& r : ranges_) n += r.end - r.begin;
  return n;
}

}  // namespace heapgraph::scanner
