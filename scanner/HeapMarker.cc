#include "scanner/HeapMarker.h"


#include <algorithm>

#include "roots/RawSyscall.h"

namespace heapgraph::scanner {

HeapMarker::HeapMarker(const BlockIndex& index, bool interior_pointers, uint8_t* shared_marks,
                       PresentPages* pages)
    : index_(index), interior_(interior_pointers), pages_(pages), marks_(shared_marks) {
  if (marks_ == nullptr) {
    own_marks_.assign(index.size(), 0);
    marks_ = own_marks_.data();
  }
  work_.reserve(1024);
}

void HeapMarker::ResolveBatch() {
  const size_t n = batch_size_;
  batch_size_ = 0;
  for (size_t k = 0; k < n; ++k) index_.PrefetchEntry(batch_[k]);
  uint32_t found[kBatch];
  for (size_t k = 0; k < n; ++k) {
    found[k] = interior_ ? index_.FindWellInside(batch_[k]) : BlockIndex::kUndecided;
    if (found[k] == BlockIndex::kUndecided) {
      index_.PrefetchBlock(batch_[k]);
    } else {
      __builtin_prefetch(&marks_[found[k]]);
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (found[k] != BlockIndex::kUndecided) continue;
    found[k] = Lookup(batch_[k]);
    if (found[k] != BlockIndex::kNotFound) __builtin_prefetch(&marks_[found[k]]);
  }
  for (size_t k = 0; k < n; ++k) {
    uint32_t block = found[k];
    if (block == BlockIndex::kNotFound) continue;
    if (__atomic_load_n(&marks_[block], __ATOMIC_RELAXED) != 0) continue;
    if (__atomic_exchange_n(&marks_[block], 1, __ATOMIC_RELAXED) != 0) continue;  // another's
    ++stats_.marked_blocks;
    work_.push_back(block);
    // The word's own line: the block's first one for a start pointer, without the block array's
    // miss that its begin would cost (Propagate prefetches the begin again before reading).
    __builtin_prefetch(reinterpret_cast<const void*>(batch_[k]));
  }
}

void HeapMarker::ScanChunk(const uint64_t* words, size_t count, uint64_t* counter) {
  uint64_t lowest = index_.lowest(), highest = index_.highest();
  for (size_t i = 0; i < count; ++i) {
    uint64_t w = words[i];
    if (w >= lowest && w <= highest) Candidate(w);  // the range filter rejects most words cheaply
  }
  *counter += count;
}

void HeapMarker::ScanWords(const uint64_t* words, size_t count) {
  ScanChunk(words, count, &stats_.root_words);
  ResolveBatch();
}

void HeapMarker::ScanRoot(uint64_t begin, uint64_t end) {
  begin = (begin + 7) & ~uint64_t{7};
  // The read buffer is reserved whole (mapped, not written) by the first root read, and its size
  // follows the largest chunk read so far: zeroing all of it up front wrote (and faulted in) 16
  // pages that a small program's roots never fill, and a marker that reads no root (a scan's
  // second, which only reads the final marks) maps none.
  const size_t words = std::min<uint64_t>(end > begin ? end - begin : 0, kChunkBytes) / 8;
  if (buffer_.size() < words) {
    buffer_.reserve(kChunkBytes / sizeof(uint64_t));
    buffer_.resize(words);
  }
  while (begin + sizeof(uint64_t) <= end) {
    size_t want = end - begin < kChunkBytes ? end - begin : kChunkBytes;
    want &= ~size_t{7};
    long got = roots::RawSyscall::ReadOwnMemoryPart(begin, buffer_.data(), want);
    if (got > 0) ScanChunk(buffer_.data(), static_cast<size_t>(got) / 8, &stats_.root_words);
    if (got == static_cast<long>(want)) {
      begin += want;
      continue;
    }
    // A fault stopped the read: skip the page that holds the first unread byte.
    uint64_t bad = begin + (got > 0 ? static_cast<uint64_t>(got) : 0);
    ++stats_.unreadable_pages;
    begin = (bad | 4095) + 1;
  }
  ResolveBatch();
}

void HeapMarker::ScanReadableRoot(uint64_t begin, uint64_t end) {
  begin = (begin + 7) & ~uint64_t{7};
  if (end < begin + sizeof(uint64_t)) return;
  ScanChunk(reinterpret_cast<const uint64_t*>(begin), (end - begin) / 8, &stats_.root_words);
  ResolveBatch();
}

// Depth first through the work list, kGroup blocks at a time: their contents are prefetched
// before the first is read (the most recently marked block may be the next one popped, too soon
// for the prefetch made when it was marked). A batch that is not full is resolved when the list
// runs dry, which may refill it.
void HeapMarker::Propagate() {
  constexpr size_t kGroup = 16;
  uint64_t lowest = index_.lowest(), highest = index_.highest();
  for (;;) {
    if (work_.empty()) {
      if (batch_size_ == 0) break;
      ResolveBatch();
      continue;
    }
    uint32_t group[kGroup];
    size_t n = std::min(kGroup, work_.size());
    for (size_t k = 0; k < n; ++k) {
      group[k] = work_.back();
      work_.pop_back();
      __builtin_prefetch(reinterpret_cast<const void*>(index_.block(group[k]).begin));
    }
    for (size_t k = 0; k < n; ++k) {
      stats_.absent_pages +=
          ForEachPart(index_.block(group[k]), [&](size_t, const uint64_t* words, size_t count) {
            for (size_t w = 0; w < count; ++w) {
              uint64_t v = words[w];
              if (v >= lowest && v <= highest) Candidate(v);
            }
            stats_.heap_words += count;
          });
    }
  }
}

}  // namespace heapgraph::scanner
