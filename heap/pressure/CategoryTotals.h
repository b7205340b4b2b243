// heap/pressure/: per-category totals of live blocks for the memory-pressure watcher: heap blocks
// by exact size (the seed's "Malloc 48.00KiB" categories), in a fixed open-addressing table mapped
// once with mmap, so a refresh never allocates and costs O(blocks). Sizes beyond kCapacity distinct
// ones are lumped into one kCategoryOtherSizes entry. Not thread-safe: one watcher thread.
#pragma once

#include <cstdint>

#include "heap/store/LiveAllocationTree.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class CategoryTotals {
 public:
  static constexpr uint32_t kCapacity = 1u << 16;  // distinct sizes kept (2 MiB table)

  CategoryTotals() = default;
  ~CategoryTotals();
  CategoryTotals(const CategoryTotals&) = delete;
  CategoryTotals& operator=(const CategoryTotals&) = delete;

  bool Map();  // false (errno) if the table cannot be mapped
  void Clear();
  void AddHeap(uint64_t size);
  // Adds every live block of `heap`, holding one shard lock at a time (allocations in the other
  // shards go on). O(live blocks + table slots).
  void AddHeapTree(LiveAllocationTree& heap);
  void SetVm(uint64_t count, uint64_t bytes);

  // The nonzero entries, packed to the front of the table (valid until the next Add/Clear); the
  // table is unusable for AddHeap after this until Clear.
  const format::CategoryTotal* Pack(uint32_t* count);
  // True when more distinct sizes arrived than the table keeps ("other sizes" holds the rest).
  bool overflowed() const { return table_[kCapacity].count != 0; }
  uint64_t heap_count() const { return heap_count_; }
  uint64_t heap_bytes() const { return heap_bytes_; }

 private:
  format::CategoryTotal* table_ = nullptr;  // kCapacity + 2 entries: + "other sizes" + VM
  uint32_t used_ = 0;
  uint64_t heap_count_ = 0, heap_bytes_ = 0;
};

}  // namespace heapgraph
