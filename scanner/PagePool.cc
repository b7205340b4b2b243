#include "scanner/PagePool.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "scanner/ArrayMapping.h"

namespace heapgraph::scanner {
namespace {

void* Mapped(long r) {
  return r < 0 && r > -4096 ? nullptr : reinterpret_cast<void*>(r);
}

void Unmap(uintptr_t begin, size_t bytes) {
  syscall(SYS_munmap, begin, bytes);
}

}  // namespace

void PagePool::Release() {
  for (size_t i = 0; i < count_; ++i) Unmap(extents_[i].begin, extents_[i].bytes);
  count_ = 0;
}

void* PagePool::Take(size_t bytes) {
  bytes = Round(bytes);
  void* p = TakeKept(bytes);
  if (p == nullptr) p = Grow(bytes);
  if (p != nullptr) {
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
    largest_take_ = std::max(largest_take_, bytes);
  }
  return p;
}

// The front of the smallest kept extent of at least `bytes` (a multiple of pages), or nullptr.
void* PagePool::TakeKept(size_t bytes) {
  size_t best = count_;
  for (size_t i = 0; i < count_; ++i) {
    if (extents_[i].bytes >= bytes &&
        (best == count_ || extents_[i].bytes < extents_[best].bytes)) {
      best = i;
    }
  }
  if (best == count_) return nullptr;
  auto* p = reinterpret_cast<void*>(extents_[best].begin);
  extents_[best].begin += bytes;
  extents_[best].bytes -= bytes;
  if (extents_[best].bytes == 0) Remove(best);
  return p;
}

// No kept extent is large enough: the largest one's pages are moved into a mapping of the size
// asked for, when it is worth a move (kMinMoveBytes). An extent merged from two mappings may span
// two VMAs, which mremap refuses: then a fresh mapping.
void* PagePool::Grow(size_t bytes) {
  size_t largest = count_;
  for (size_t i = 0; i < count_; ++i) {
    if (largest == count_ || extents_[i].bytes > extents_[largest].bytes) largest = i;
  }
  if (largest != count_ && extents_[largest].bytes >= kMinMoveBytes) {
    Extent e = extents_[largest];
    void* p = Mapped(syscall(SYS_mremap, e.begin, e.bytes, bytes, MREMAP_MAYMOVE, 0));
    if (p != nullptr) {
      Remove(largest);
      return p;
    }
  }
  return ArrayMapping::Map(bytes);
}

void PagePool::Give(void* p, size_t bytes) {
  Extent e{reinterpret_cast<uintptr_t>(p), Round(bytes)};
  in_use_ -= std::min(in_use_, e.bytes);
  for (size_t i = 0; i < count_;) {
    if (extents_[i].begin + extents_[i].bytes == e.begin) {
      e = {extents_[i].begin, extents_[i].bytes + e.bytes};
    } else if (e.begin + e.bytes == extents_[i].begin) {
      e.bytes += extents_[i].bytes;
    } else {
      ++i;
      continue;
    }
    Remove(i);  // merged into e; look again from the start of what is left
    i = 0;
  }
  if (count_ == kMaxExtents) {
    size_t smallest = 0;
    for (size_t i = 1; i < count_; ++i) {
      if (extents_[i].bytes < extents_[smallest].bytes) smallest = i;
    }
    if (extents_[smallest].bytes >= e.bytes) {
      Unmap(e.begin, e.bytes);
      return;
    }
    Unmap(extents_[smallest].begin, extents_[smallest].bytes);
    Remove(smallest);
  }
  extents_[count_++] = e;
}

void PagePool::Trim(size_t bytes) {
  bytes = bytes == 0 ? 0 : Round(bytes);
  size_t kept = kept_bytes();
  while (kept > bytes) {
    size_t largest = 0;
    for (size_t i = 1; i < count_; ++i) {
      if (extents_[i].bytes > extents_[largest].bytes) largest = i;
    }
    Extent& e = extents_[largest];
    size_t cut = std::min(e.bytes, kept - bytes);
    Unmap(e.begin + e.bytes - cut, cut);
    e.bytes -= cut;
    kept -= cut;
    if (e.bytes == 0) Remove(largest);
  }
}

void PagePool::TrimToPeak() {
  Trim(peak_ + largest_take_);
  peak_ = in_use_;
  largest_take_ = 0;
}

std::array<std::pair<uint64_t, uint64_t>, PagePool::kMaxExtents> PagePool::Ranges() const {
  std::array<std::pair<uint64_t, uint64_t>, kMaxExtents> ranges = {};
  for (size_t i = 0; i < count_; ++i) {
    ranges[i] = {extents_[i].begin, extents_[i].begin + extents_[i].bytes};
  }
  return ranges;
}

size_t PagePool::kept_bytes() const {
  size_t total = 0;
  for (size_t i = 0; i < count_; ++i) total += extents_[i].bytes;
  return total;
}

}  // namespace heapgraph::scanner
