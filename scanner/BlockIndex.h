// scanner/: finds the heap block that a candidate word points into, in O(1) expected time: the
// sorted blocks are cut into regions at gaps of 1 MiB or more (a binary search over a handful of
// regions rejects most non-pointers), and each region has a per-page table giving the first block
// that ends after the page starts, so only the blocks overlapping one page are searched.
// Built once per scan; memory from MmapAllocator. May include heap/ headers only.
#pragma once

#include <cstdint>
#include <vector>

#include "scanner/MmapAllocator.h"

namespace heapgraph::scanner {

struct BlockRange {
  uint64_t begin = 0;
  uint64_t size = 0;  // a block of size 0 is matched by its begin address only
};

class BlockIndex {
 public:
  static constexpr uint32_t kNotFound = UINT32_MAX;
  static constexpr uint64_t kRegionGap = 1u << 20;
  static constexpr uint32_t kPageShift = 12;

  // `blocks` must be sorted by begin and must not overlap.
  explicit BlockIndex(std::vector<BlockRange, MmapAllocator<BlockRange>> blocks);

  // Index of the block containing `address` (interior pointers included), or kNotFound.
  uint32_t Find(uint64_t address) const;
  // Index of the block starting exactly at `address`, or kNotFound.
  uint32_t FindStart(uint64_t address) const;

  uint32_t size() const { return static_cast<uint32_t>(blocks_.size()); }
  const BlockRange& block(uint32_t i) const { return blocks_[i]; }
  uint64_t lowest() const { return lowest_; }
  uint64_t highest() const { return highest_; }
  size_t region_count() const { return regions_.size(); }

 private:
  struct Region {
    uint64_t begin;              // start of its first block (regions never overlap)
    uint64_t first_page_number;  // begin >> kPageShift
    uint64_t end;                // end of its last block
    uint32_t first_page;         // index into page_first_, or kNoPages for a one-block region
    uint32_t single_block;       // the block of a one-block region
  };
  static constexpr uint32_t kNoPages = UINT32_MAX;

  static uint64_t End(const BlockRange& b) { return b.begin + (b.size == 0 ? 1 : b.size); }
  void AddRegion(uint32_t first_block, uint32_t end_block);

  std::vector<BlockRange, MmapAllocator<BlockRange>> blocks_;
  std::vector<Region, MmapAllocator<Region>> regions_;
  // For page p of a region: the first block whose end is after the page's start. One extra
  // entry per region closes its last page.
  std::vector<uint32_t, MmapAllocator<uint32_t>> page_first_;
  uint64_t lowest_ = UINT64_MAX;
  uint64_t highest_ = 0;
};

}  // namespace heapgraph::scanner
