// scanner/: one shortest retention path from the roots to each of a set of target groups of
// blocks, in the snapshot child: a breadth-first search from every root word (registers, then
// root ranges in order) through the heap, remembering for each block the block and word that
// reached it first. It stops once every group is reached. Costs at most one single-process
// marking pass plus 8 bytes per block; the leak scan runs it only when a reachable group of typed
// blocks may form a cycle. No host malloc. May include heap/ and roots/.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "roots/ThreadInfo.h"
#include "scanner/HeapMarker.h"
#include "scanner/MmapAllocator.h"
#include "scanner/RootRanges.h"

namespace heapgraph::scanner {

class RetentionPaths {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  struct Root {
    uint64_t address = 0;     // the root word's address; 0 for a register
    uint32_t range = kNone;   // index into the root ranges, kNone for a register
    uint32_t thread = kNone;  // index into the threads for a register
    uint32_t reg = kNone;     // index into that thread's regs for a register
  };

  // `group[b]`: the target group of block b, or kNone. `groups`: how many there are.
  RetentionPaths(const HeapMarker& marker, const BlockIndex& index, std::span<const uint32_t> group,
                 uint32_t groups);

  void Search(const RootRanges& roots, std::span<const roots::ThreadInfo> threads);

  // The block of group g reached first, or kNone if the group was not reached.
  uint32_t reached(uint32_t g) const { return reached_[g]; }
  // Whether the search reached block b (then its path is parent(b), parent(parent(b)), ...).
  bool discovered(uint32_t b) const { return parent_[b] != kNone; }
  // Block b's predecessor on its path, or kNone when a root reached it (then root(b)).
  uint32_t parent(uint32_t b) const { return parent_[b] & kRootBit ? kNone : parent_[b]; }
  // The byte offset, in parent(b), of the word pointing to b.
  uint32_t offset(uint32_t b) const { return offset_[b]; }
  const Root& root(uint32_t b) const { return roots_[offset_[b]]; }

 private:
  static constexpr uint32_t kRootBit = 1u << 31;
  static constexpr size_t kChunkBytes = 64 * 1024;

  bool Discover(uint32_t block, uint32_t parent, uint32_t offset);
  void FromRoot(uint64_t word, const Root& root);
  void ScanRange(const RootRange& range, uint32_t index);
  void Propagate();
  bool done() const { return remaining_ == 0; }

  const HeapMarker& marker_;
  const BlockIndex& index_;
  std::span<const uint32_t> group_;
  std::vector<uint32_t, MmapAllocator<uint32_t>> parent_;  // kNone: undiscovered
  std::vector<uint32_t, MmapAllocator<uint32_t>> offset_;  // or, for a root's block, roots_ index
  std::vector<Root, MmapAllocator<Root>> roots_;
  std::vector<uint32_t, MmapAllocator<uint32_t>> reached_;
  std::vector<uint32_t, MmapAllocator<uint32_t>> queue_;
  std::vector<uint64_t, MmapAllocator<uint64_t>> buffer_;
  size_t head_ = 0;
  uint32_t remaining_;
};

}  // namespace heapgraph::scanner
