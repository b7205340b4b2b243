#include "scanner/BlockIndex.h"

#include <algorithm>

namespace heapgraph::scanner {

BlockIndex::BlockIndex(std::vector<BlockRange, MmapAllocator<BlockRange>> blocks)
    : blocks_(std::move(blocks)) {
  if (blocks_.empty()) return;
  lowest_ = blocks_.front().begin;
  uint32_t first = 0;
  uint64_t end = End(blocks_[0]);
  for (uint32_t i = 1; i < blocks_.size(); ++i) {
    // Large blocks get a region of their own: they need no page table.
    bool large = blocks_[i].size >= kRegionGap || blocks_[i - 1].size >= kRegionGap;
    if (large || blocks_[i].begin >= end + kRegionGap) {
      AddRegion(first, i);
      first = i;
    }
    end = std::max(end, End(blocks_[i]));
  }
  AddRegion(first, static_cast<uint32_t>(blocks_.size()));
  highest_ = regions_.back().end;
}

void BlockIndex::AddRegion(uint32_t first_block, uint32_t end_block) {
  Region r;
  r.begin = blocks_[first_block].begin;
  r.first_page_number = r.begin >> kPageShift;
  r.end = 0;
  for (uint32_t i = first_block; i < end_block; ++i) r.end = std::max(r.end, End(blocks_[i]));
  if (end_block - first_block == 1) {
    r.first_page = kNoPages;
    r.single_block = first_block;
    regions_.push_back(r);
    return;
  }
  r.first_page = static_cast<uint32_t>(page_first_.size());
  r.single_block = kNotFound;
  uint64_t pages = ((r.end - 1) >> kPageShift) - r.first_page_number + 1;
  uint32_t block = first_block;
  for (uint64_t p = 0; p < pages; ++p) {
    uint64_t page_start = (r.first_page_number + p) << kPageShift;
    while (block < end_block && End(blocks_[block]) <= page_start) ++block;
    page_first_.push_back(block);
  }
  page_first_.push_back(end_block);
  regions_.push_back(r);
}

uint32_t BlockIndex::Find(uint64_t address) const {
  if (address < lowest_ || address >= highest_) return kNotFound;
  auto it = std::upper_bound(regions_.begin(), regions_.end(), address,
                             [](uint64_t a, const Region& r) { return a < r.begin; });
  const Region& r = *(it - 1);
  if (address >= r.end) return kNotFound;
  if (r.first_page == kNoPages) {
    const BlockRange& b = blocks_[r.single_block];
    return address >= b.begin && address < End(b) ? r.single_block : kNotFound;
  }
  uint64_t page = (address >> kPageShift) - r.first_page_number;
  uint32_t lo = page_first_[r.first_page + page];
  uint32_t hi = page_first_[r.first_page + page + 1];
  // Blocks [lo, hi] may overlap this page (hi: the first block reaching the next page, which
  // may start inside this one). Find the last block starting at or before `address`.
  hi = std::min<uint32_t>(hi + 1, static_cast<uint32_t>(blocks_.size()));
  auto first = blocks_.begin() + lo, last = blocks_.begin() + hi;
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
