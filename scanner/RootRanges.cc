#include "scanner/RootRanges.h"

#include <pthread.h>

#include <algorithm>

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

// glibc puts a thread's control block (struct pthread, whose tcbhead_t starts with `tcb` and has
// `self` two words later, both pointing to itself) at the top of its stack mapping, with the
// static TLS blocks right below it. On x86-64 and aarch64 alike the TCB lies within the last
// static_tls_size bytes.
uint64_t RootRanges::LiveStart(const ProcessMappings::Mapping& m, uint64_t static_tls_size,
                               std::span<const uint64_t> live_tcbs) {
  if (static_tls_size == 0 || m.size() < 2 * static_tls_size) return m.start;
  uint64_t top = m.end - static_tls_size - 64;
  top &= ~uint64_t{63};
  for (uint64_t tp = m.end - 64; tp >= top; tp -= 64) {
    auto* word = reinterpret_cast<const uint64_t*>(tp);
    if (word[0] != tp || word[2] != tp) continue;  // readable: m is readable and private
    bool live = std::find(live_tcbs.begin(), live_tcbs.end(), tp) != live_tcbs.end();
    return live ? m.start : top;
  }
  return m.start;
}

void RootRanges::Compute(const ProcessMappings& mappings,
                         std::span<const roots::ThreadInfo> threads, const BlockIndex& blocks,
                         uint64_t caller_stack_pointer, std::span<const uint64_t> own_memory,
                         uint64_t static_tls_size) {
  ranges_.clear();
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
    ranges_.push_back(
        {std::max<uint64_t>(program_stack->start, caller_stack_pointer), program_stack->end, true});
  }
  for (const roots::ThreadInfo& t : threads) {
    if (t.is_caller) continue;
    roots::ThreadStacks::Range r = roots::ThreadStacks::ForThread(t, mappings);
    if (r.mapping == nullptr) continue;
    skipped.push_back(r.mapping);
    if (r.begin < r.end) ranges_.push_back({r.begin, r.end, true, true});
  }
  for (const ProcessMappings::Mapping& m : mappings.mappings()) {
    if (!m.readable || !m.writable || m.shared) continue;
    if (m.kind == ProcessMappings::Kind::kHeap || m.kind == ProcessMappings::Kind::kSpecial ||
        m.kind == ProcessMappings::Kind::kMainStack) {
      continue;
    }
    if (std::find(skipped.begin(), skipped.end(), &m) != skipped.end()) continue;
    if (HoldsBlock(m, blocks)) continue;
    bool anonymous = m.kind == ProcessMappings::Kind::kAnonymous;
    ranges_.push_back({LiveStart(m, static_tls_size, live_tcbs), m.end, false, anonymous});
  }
}

void RootRanges::Exclude(std::span<const std::pair<uint64_t, uint64_t>> own) {
  for (auto [begin, end] : own) {
    if (begin >= end) continue;
    size_t count = ranges_.size();
    for (size_t i = 0; i < count; ++i) {
      RootRange& r = ranges_[i];
      if (end <= r.begin || begin >= r.end) continue;
      if (begin > r.begin && end < r.end) {  // a hole: keep both sides
        RootRange above = r;
        above.begin = end;
        r.end = begin;
        ranges_.push_back(above);
      } else if (begin > r.begin) {
        r.end = begin;
      } else {
        r.begin = std::min(end, r.end);
      }
    }
  }
  std::erase_if(ranges_, [](const RootRange& r) { return r.begin >= r.end; });
}

uint64_t RootRanges::total_bytes() const {
  uint64_t n = 0;
  for (const RootRange& r : ranges_) n += r.end - r.begin;
  return n;
}

}  // namespace heapgraph::scanner
