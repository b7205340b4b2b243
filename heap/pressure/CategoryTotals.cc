#include "heap/pressure/CategoryTotals.h"

#include <string.h>
#include <sys/mman.h>

namespace heapgraph {
namespace {

constexpr size_t kEntries = CategoryTotals::kCapacity + 2;
constexpr uint32_t kOther = CategoryTotals::kCapacity;
constexpr uint32_t kVm = CategoryTotals::kCapacity + 1;

uint32_t Home(uint64_t size) {
  return static_cast<uint32_t>((size * format::kHashMultiplier) >> 48);  // 16 bits
}

}  // namespace

static_assert(CategoryTotals::kCapacity == 1u << 16, "Home() yields 16 bits");

CategoryTotals::~CategoryTotals() {
  if (table_ != nullptr) munmap(table_, kEntries * sizeof(format::CategoryTotal));
}

bool CategoryTotals::Map() {
  void* p = mmap(nullptr, kEntries * sizeof(format::CategoryTotal), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  table_ = static_cast<format::CategoryTotal*>(p);
  Clear();
  return true;
}

void CategoryTotals::Clear() {
  memset(table_, 0, kEntries * sizeof(format::CategoryTotal));
  table_[kOther].kind = format::kCategoryOtherSizes;
  table_[kVm].kind = format::kCategoryVm;
  used_ = 0;
  heap_count_ = heap_bytes_ = 0;
}

// Linear probing; an entry is empty while its kind is 0. The table is never filled past 7/8.
void CategoryTotals::AddHeap(uint64_t size) {
  ++heap_count_;
  heap_bytes_ += size;
  for (uint32_t i = Home(size);; i = (i + 1) & (kCapacity - 1)) {
    format::CategoryTotal& e = table_[i];
    if (e.kind == format::kCategoryHeap && e.size == size) {
      ++e.count;
      e.bytes += size;
      return;
    }
    if (e.kind != 0) continue;
    if (used_ >= kCapacity / 8 * 7) {
      ++table_[kOther].count;
      table_[kOther].bytes += size;
      return;
    }
    ++used_;
    e = {size, format::kCategoryHeap, 0, 1, size};
    return;
  }
}

void CategoryTotals::AddHeapTree(LiveAllocationTree& heap) {
  for (uint32_t s = 0; s < heap.shard_count(); ++s) {
    SlabShard& shard = heap.shard(s);
    shard.Lock();
    shard.ForEach([this](const BlockRecord& b) { AddHeap(b.size); });
    shard.Unlock();
  }
}

void CategoryTotals::SetVm(uint64_t count, uint64_t bytes) {
  table_[kVm].count = count;
  table_[kVm].bytes = bytes;
}

const format::CategoryTotal* CategoryTotals::Pack(uint32_t* count) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < kEntries; ++i) {
    if (table_[i].count != 0) table_[n++] = table_[i];
  }
  *count = n;
  return table_;
}

}  // namespace heapgraph
