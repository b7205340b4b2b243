#include "scanner/RetentionPaths.h"


#include "roots/RawSyscall.h"

namespace heapgraph::scanner {

RetentionPaths::RetentionPaths(const HeapMarker& marker, const BlockIndex& index,
                               std::span<const uint32_t> group, uint32_t groups)
    : marker_(marker),
      index_(index),
      group_(group),
      parent_(index.size(), kNone),
      offset_(index.size(), 0),
      reached_(groups, kNone),
      remaining_(groups) {
  queue_.reserve(1024);
}

bool RetentionPaths::Discover(uint32_t block, uint32_t parent, uint32_t offset) {
  if (parent_[block] != kNone) return false;
  parent_[block] = parent;
  offset_[block] = offset;
  queue_.push_back(block);
  uint32_t g = group_[block];
  if (g != kNone && reached_[g] == kNone) {
    reached_[g] = block;
    --remaining_;
  }
  return true;
}

void RetentionPaths::FromRoot(uint64_t word, const Root& root) {
  uint32_t block = marker_.Target(word);
  if (block == BlockIndex::kNotFound || parent_[block] != kNone) return;
  roots_.push_back(root);
  Discover(block, kRootBit, static_cast<uint32_t>(roots_.size() - 1));
}

void RetentionPaths::ScanRange(const RootRange& range, uint32_t index) {
  uint64_t begin = (range.begin + 7) & ~uint64_t{7};
  if (range.direct) {
    for (uint64_t at = begin; at + 8 <= range.end; at += 8) {
      FromRoot(*reinterpret_cast<const uint64_t*>(at), {at, index, kNone, kNone});
    }
    return;
  }
  buffer_.resize(kChunkBytes / 8);
  while (begin + 8 <= range.end) {
    size_t want = std::min<uint64_t>(range.end - begin, kChunkBytes) & ~size_t{7};
    long got = roots::RawSyscall::ReadOwnMemoryPart(begin, buffer_.data(), want);
    for (long i = 0; i < got / 8; ++i) {
      FromRoot(buffer_[i], {begin + static_cast<uint64_t>(i) * 8, index, kNone, kNone});
    }
    begin =
        got == static_cast<long>(want) ? begin + want : ((begin + (got > 0 ? got : 0)) | 4095) + 1;
  }
}

void RetentionPaths::Propagate() {
  while (head_ < queue_.size() && !done()) {
    uint32_t b = queue_[head_++];
    marker_.ForEachReferenceAt(b, [&](size_t word, uint32_t target, uint64_t) {
      Discover(target, b, static_cast<uint32_t>(word * 8));
    });
  }
}

// Breadth first from all roots at once: every root's block is at depth 0, so the first block of
// a group found is one of the nearest to any root.
void RetentionPaths::Search(const RootRanges& roots, std::span<const roots::ThreadInfo> threads) {
  for (uint32_t t = 0; t < threads.size() && !done(); ++t) {
    if (threads[t].is_caller) continue;
    for (uint32_t r = 0; r < threads[t].regs.size(); ++r) {
      FromRoot(threads[t].regs[r], {0, kNone, t, r});
    }
  }
  for (uint32_t i = 0; i < roots.ranges().size() && !done(); ++i) ScanRange(roots.ranges()[i], i);
  Propagate();
}

}  // namespace heapgraph::scanner
