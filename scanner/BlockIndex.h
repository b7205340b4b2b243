// scanner/: finds the heap block that a candidate word points into, in O(1) expected time: the
// sorted blocks are cut into regions at gaps of 1 MiB or more (a binary search over a handful of
// regions rejects most non-pointers), and each region has a granule table giving, for every
// granule of the region's span, the first block that ends after the granule starts; a short
// forward scan from there finds the block. Granules are 64 bytes (at most ~3 glibc chunks each);
// a sparse region gets coarser granules, up to a page, so that its table stays within
// kTableBytesPerBlock per block plus 1/kLiveBytesPerTableByte of its live bytes.
// Memory: 4 bytes per 64 bytes of a dense region's span (1/16 byte per heap byte), never more than
// the bound above, never less granular than the 4 KiB page.
// Built once per scan; memory from MmapAllocator. May include heap/ headers only.
#pragma once

#include <algorithm>
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
  static constexpr uint32_t kGranuleShift = 6;      // the finest granule: 64 bytes
  static constexpr uint32_t kMaxGranuleShift = 12;  // the coarsest: a page
  static constexpr uint64_t kTableBytesPerBlock = 8;
  // 32, not 8: a table of up to 1/8 of the live bytes took as long to fill (and fault in) as the
  // marking of a 40,000-block heap (bench/repeated_checks.cc: one check 76 -> 64 ms; the 1M-block
  // big heap, 3 interleaved runs: CPU 2.25-2.31 s -> 2.13-2.75 s, within its noise).
  static constexpr uint64_t kLiveBytesPerTableByte = 32;

  // `blocks` must be sorted by begin and must not overlap.
  explicit BlockIndex(std::vector<BlockRange, MmapAllocator<BlockRange>> blocks);

  // Index of the block containing `address` (interior pointers included), or kNotFound. Inline:
  // the marker calls it for every word in the heap's range.
  uint32_t Find(uint64_t address) const {
    if (address < lowest_ || address >= highest_) return kNotFound;
    const Region& r = RegionOf(address);
    if (address >= r.end) return kNotFound;
    // A one-block region is exactly its block: [r.begin, r.end).
    return r.shift == 0 ? r.first_block : FindInRegion(r, address);
  }
  // Index of the block starting exactly at `address`, or kNotFound.
  uint32_t FindStart(uint64_t address) const;
  // Index of the non-empty block ending exactly at `address` (one past its last byte), or
  // kNotFound. Says nothing of a block that may start there.
  uint32_t FindEndingAt(uint64_t address) const {
    if (address == 0) return kNotFound;
    uint32_t block = Find(address - 1);
    if (block == kNotFound) return kNotFound;
    const BlockRange& b = blocks_[block];
    return b.size != 0 && b.begin + b.size == address ? block : kNotFound;
  }

  // Batched lookups: a caller resolving many independent addresses calls PrefetchEntry on all of
  // them, then PrefetchBlock on all, then Find, so that their cache misses overlap instead of
  // following one another. Hints only: they never fault and change no result.
  void PrefetchEntry(uint64_t address) const {
    if (const uint32_t* entry = Entry(address)) __builtin_prefetch(entry);
  }
  // Requires the entry to have been loaded (PrefetchEntry) for the prefetch to pay off.
  void PrefetchBlock(uint64_t address) const {
    if (const uint32_t* entry = Entry(address)) __builtin_prefetch(&blocks_[*entry]);
  }

  uint32_t size() const { return static_cast<uint32_t>(blocks_.size()); }
  const BlockRange& block(uint32_t i) const { return blocks_[i]; }
  uint64_t lowest() const { return lowest_; }
  uint64_t highest() const { return highest_; }
  size_t region_count() const { return regions_.size(); }
  // Bytes of granule tables (for benchmarks and tests of the memory bound).
  uint64_t table_bytes() const { return first_.size() * sizeof(uint32_t); }

 private:
  struct Region {
    uint64_t begin;        // start of its first block (regions never overlap)
    uint64_t end;          // end of its last block
    uint64_t first_entry;  // index into first_ of granule 0 (unused for a one-block region)
    uint32_t first_block;
    uint32_t end_block;  // one past its last block
    uint32_t shift;      // log2 of its granule size; 0 for a one-block region (no table)
  };

  static uint64_t End(const BlockRange& b) { return b.begin + (b.size == 0 ? 1 : b.size); }
  static uint64_t Entries(const Region& r) { return ((r.end - 1 - r.begin) >> r.shift) + 2; }
  void CutRegions();
  Region MakeRegion(uint32_t first_block, uint32_t end_block) const;
  void FillTable(const Region& r);
  // The last region starting at or before `address`; requires lowest_ <= address.
  const Region& RegionOf(uint64_t address) const {
    if (regions_.size() == 1) return regions_[0];
    return *(std::upper_bound(regions_.begin(), regions_.end(), address,
                              [](uint64_t a, const Region& r) { return a < r.begin; }) -
             1);
  }
  // The granule entry of a table region holding `address`, else nullptr.
  const uint32_t* Entry(uint64_t address) const {
    if (address < lowest_ || address >= highest_) return nullptr;
    const Region& r = RegionOf(address);
    if (address >= r.end || r.shift == 0) return nullptr;
    return first_.data() + r.first_entry + ((address - r.begin) >> r.shift);
  }
  // Requires r.begin <= address < r.end. Starts at the first block ending after the granule
  // starts; blocks are sorted and disjoint, so the first one not ending at or before `address`
  // decides. The scan stops by the region's last block, which ends at r.end > address. With the
  // finest granules it visits at most ~3 glibc chunks; coarser granules binary-search instead.
  uint32_t FindInRegion(const Region& r, uint64_t address) const {
    const uint32_t* entry = first_.data() + r.first_entry + ((address - r.begin) >> r.shift);
    if (r.shift != kGranuleShift) return SearchCandidates(entry[0], entry[1], r, address);
    for (uint32_t i = entry[0];; ++i) {
      const BlockRange& b = blocks_[i];
      if (address < b.begin) return kNotFound;
      if (address < End(b)) return i;
    }
  }
  // Binary search for the block containing `address` among blocks [lo, hi] (hi: the first block
  // reaching the next granule, which may start inside this one), clamped to the region.
  uint32_t SearchCandidates(uint32_t lo, uint32_t hi, const Region& r, uint64_t address) const;

  std::vector<BlockRange, MmapAllocator<BlockRange>> blocks_;
  std::vector<Region, MmapAllocator<Region>> regions_;
  // For granule g of region r (first_[r.first_entry + g]): the first block of r whose end is after
  // r.begin + (g << r.shift). One extra entry per region (= r.end_block) closes its last granule.
  std::vector<uint32_t, MmapAllocator<uint32_t>> first_;
  uint64_t lowest_ = UINT64_MAX;
  uint64_t highest_ = 0;
};

}  // namespace heapgraph::scanner
