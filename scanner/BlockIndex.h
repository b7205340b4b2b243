// scanner/: finds the heap block that a candidate word points into, in O(1) expected time: the
// sorted blocks are cut into regions at gaps of 1 MiB or more (a binary search over a handful of
// regions rejects most non-pointers), and each region has a granule table giving, for every
// granule of the region's span, the first block that ends after the granule starts; a short
// forward scan from there finds the block. Granules are 64 bytes (at most ~3 glibc chunks each);
// a sparse region gets coarser granules, up to a page, so that its table stays within
// kTableBytesPerBlock per block plus 1/kLiveBytesPerTableByte of its live bytes.
// A 64-byte granule's entry also says where its first block and the one after lie in the granule
// (FindWellInside), so that the marker resolves most words from the entry's cache line alone,
// without reading the block array (a second cache miss per word).
// Memory: 8 bytes per 64 bytes of a dense region's span (1/8 byte per heap byte), never more than
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
  static constexpr uint32_t kUndecided = UINT32_MAX - 1;  // FindWellInside: ask Find
  static constexpr uint64_t kRegionGap = 1u << 20;
  static constexpr uint32_t kGranuleShift = 6;      // the finest granule: 64 bytes
  static constexpr uint32_t kMaxGranuleShift = 12;  // the coarsest: a page
  // The bound's granule counts are those of 4-byte entries under 8 bytes a block and 1/32 of the
  // live bytes (a table of up to 1/8 of the live bytes, counted so, took as long to fill as the
  // marking of a 40,000-block heap: bench/repeated_checks.cc one check 76 -> 64 ms); entries are
  // 8 bytes since they carry their granule's block bounds, so the bytes are twice those.
  static constexpr uint64_t kEntryBytes = 8;
  static constexpr uint64_t kTableBytesPerBlock = 16;
  static constexpr uint64_t kLiveBytesPerTableByte = 16;

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
  // The block holding `address` more than 8 bytes before its end, when the granule entry alone
  // shows it (the granule's first block or the next, in a 64-byte-granule region); else
  // kUndecided, also for an address in no block. A block so found is Find(address), and `address`
  // is neither one past its end nor in its last 8 bytes (where glibc's next-chunk header may lie).
  // Reads only the region list and the entry (PrefetchEntry's line).
  uint32_t FindWellInside(uint64_t address) const {
    if (address < lowest_ || address >= highest_) return kUndecided;
    const Region& r = RegionOf(address);
    if (address >= r.end || r.shift != kGranuleShift) return kUndecided;
    const uint64_t granule = (address - r.begin) >> kGranuleShift;
    const Granule& g = first_[r.first_entry + granule];
    const uint32_t offset =
        static_cast<uint32_t>((address - r.begin) & ((1u << kGranuleShift) - 1));
    if (offset >= g.begin0 && offset + 8 < g.end0) return g.first;
    if (offset >= g.end0 && offset >= g.begin1 && offset + 8 < g.end1) return g.first + 1;
    return kUndecided;
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
    if (const Granule* entry = Entry(address)) __builtin_prefetch(entry);
  }
  // Requires the entry to have been loaded (PrefetchEntry) for the prefetch to pay off; needed
  // only for an address FindWellInside leaves undecided.
  void PrefetchBlock(uint64_t address) const {
    if (const Granule* entry = Entry(address)) __builtin_prefetch(&blocks_[entry->first]);
  }

  uint32_t size() const { return static_cast<uint32_t>(blocks_.size()); }
  const BlockRange& block(uint32_t i) const { return blocks_[i]; }
  uint64_t lowest() const { return lowest_; }
  uint64_t highest() const { return highest_; }
  size_t region_count() const { return regions_.size(); }
  // Bytes of granule tables (for benchmarks and tests of the memory bound).
  uint64_t table_bytes() const { return first_.size() * sizeof(Granule); }

 private:
  // A granule's entry. first: the first block of the region whose end is after the granule's
  // start. In a 64-byte-granule region, the offsets from the granule's start of that block's
  // begin (0 if before the granule) and end, and of the next block's (of the same region), each
  // capped at kFar; kFar for a begin outside the granule, or no such block. Elsewhere all kFar.
  struct Granule {
    uint32_t first;
    uint8_t begin0 = kFar, end0 = kFar, begin1 = kFar, end1 = kFar;
  };
  static constexpr uint8_t kFar = 255;  // > 63 + 8: never decides an address on its own
  static_assert(sizeof(Granule) == kEntryBytes);
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
  // The entry of the granule starting at `start` whose first block is `block`.
  Granule MakeGranule(const Region& r, uint32_t block, uint64_t start) const;
  // The last region starting at or before `address`; requires lowest_ <= address.
  const Region& RegionOf(uint64_t address) const {
    if (regions_.size() == 1) return regions_[0];
    return *(std::upper_bound(regions_.begin(), regions_.end(), address,
                              [](uint64_t a, const Region& r) { return a < r.begin; }) -
             1);
  }
  // The granule entry of a table region holding `address`, else nullptr.
  const Granule* Entry(uint64_t address) const {
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
    const Granule* entry = first_.data() + r.first_entry + ((address - r.begin) >> r.shift);
    if (r.shift != kGranuleShift)
      return SearchCandidates(entry[0].first, entry[1].first, r, address);
    for (uint32_t i = entry->first;; ++i) {
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
  // For granule g of region r (first_[r.first_entry + g].first): the first block of r whose end is
  // after r.begin + (g << r.shift). One extra entry per region (= r.end_block) closes its last
  // granule.
  std::vector<Granule, MmapAllocator<Granule>> first_;
  uint64_t lowest_ = UINT64_MAX;
  uint64_t highest_ = 0;
};

}  // namespace heapgraph::scanner
