#include "scanner/BlockIndex.h"

#include <algorithm>

namespace heapgraph::scanner {

BlockIndex::BlockIndex(std::vector<BlockRange, MmapAllocator<BlockRange>> blocks)
    : blocks_(std::move(blocks)) {
  if (blocks_.empty()) return;
  lowest_ = blocks_.front().begin;
  CutRegions();
  highest_ = regions_.back().end;
  // Size the tables exactly first: one mapping, no regrowth copies.
  uint64_t entries = 0;
  for (Region& r : regions_) {
    r.first_entry = entries;
    if (r.shift != 0) entries += Entries(r);
  }
  first_.reserve(entries);
  for (const Region& r : regions_) {
    if (r.shift != 0) FillTable(r);
  }
}

// Regions start at the begin of their first block (never page-aligned down: that made regions
// overlap), break at gaps of kRegionGap or more, and give each large block a region of its own.
void BlockIndex::CutRegions() {
  uint32_t first = 0;
  uint64_t end = End(blocks_[0]);
  for (uint32_t i = 1; i < blocks_.size(); ++i) {
    bool large = blocks_[i].size >= kRegionGap || blocks_[i - 1].size >= kRegionGap;
    if (large || blocks_[i].begin >= end + kRegionGap) {
      regions_.push_back(MakeRegion(first, i));
      first = i;
    }
    end = std::max(end, End(blocks_[i]));
  }
  regions_.push_back(MakeRegion(first, static_cast<uint32_t>(blocks_.size())));
}

// The finest granule whose table fits the memory bound (kTableBytesPerBlock per block plus
// 1/kLiveBytesPerTableByte of the live bytes), but never coarser than a page.
BlockIndex::Region BlockIndex::MakeRegion(uint32_t first_block, uint32_t end_block) const {
  Region r{blocks_[first_block].begin, 0, 0, first_block, end_block, 0};
  uint64_t live = 0;
  for (uint32_t i = first_block; i < end_block; ++i) {
    r.end = std::max(r.end, End(blocks_[i]));
    live += blocks_[i].size;
  }
  if (end_block - first_block == 1) return r;  // the block is the region: no table
  uint64_t budget = kTableBytesPerBlock * (end_block - first_block) + live / kLiveBytesPerTableByte;
  r.shift = kGranuleShift;
  while (r.shift < kMaxGranuleShift && Entries(r) * kEntryBytes > budget) ++r.shift;
  return r;
}

void BlockIndex::FillTable(const Region& r) {
  uint64_t granules = Entries(r) - 1;
  uint32_t block = r.first_block;
  for (uint64_t g = 0; g < granules; ++g) {
    uint64_t start = r.begin + (g << r.shift);
    while (block < r.end_block && End(blocks_[block]) <= start) ++block;
    first_.push_back(r.shift == kGranuleShift ? MakeGranule(r, block, start) : Granule{block});
  }
  first_.push_back(Granule{r.end_block});
}

BlockIndex::Granule BlockIndex::MakeGranule(const Region& r, uint32_t block, uint64_t start) const {
  Granule g{block};
  auto offset = [start](uint64_t address) {
    return static_cast<uint8_t>(std::min<uint64_t>(address - start, kFar));
  };
  const uint64_t granule_end = start + (uint64_t{1} << kGranuleShift);
  if (block >= r.end_block) return g;
  const BlockRange& b = blocks_[block];  // End(b) > start
  if (b.begin >= granule_end) return g;
  g.begin0 = b.begin <= start ? 0 : offset(b.begin);
  g.end0 = offset(End(b));
  if (block + 1 >= r.end_block) return g;
  const BlockRange& next = blocks_[block + 1];
  if (next.begin < End(b) || next.begin >= granule_end) return g;
  g.begin1 = offset(next.begin);
  g.end1 = offset(End(next));
  return g;
}

uint32_t BlockIndex::SearchCandidates(uint32_t lo, uint32_t hi, const Region& r,
                                      uint64_t address) const {
  auto first = blocks_.begin() + lo, last = blocks_.begin() + std::min(hi + 1, r.end_block);
  auto found = std::upper_bound(first, last, address,
                                [](uint64_t a, const BlockRange& b) { return a < b.begin; });
  if (found == first) return kNotFound;
  const BlockRange& b = *(found - 1);
  return address < End(b) ? static_cast<uint32_t>(found - 1 - blocks_.begin()) : kNotFound;
}

uint32_t BlockIndex::FindStart(uint64_t address) const {
  uint32_t i = Find(address);
  return i != kNotFound && blocks_[i].begin == address ? i : kNotFound;
}

}  // namespace heapgraph::scanner
