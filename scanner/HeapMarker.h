// scanner/: conservative marking. Every aligned 8-byte word of a root range, and of every block
// found reachable, that points into a block (interior pointers count unless disabled) marks that
// block; marking is transitive through a work list. Root ranges are read with process_vm_readv in
// 64 KiB chunks, so unmapped or PROT_NONE pages inside a root are skipped and counted, never fatal.
// Heap blocks are read directly: they are live malloc memory (in the snapshot process,
// scanner/UnreadablePages makes a page of one that faults readable). With PresentPages given, a
// block of kSparseBlockBytes or more skips its pages that exist neither in memory nor in swap
// (the untouched bulk of a large calloc). No host malloc (MmapAllocator).
// Candidate words are resolved in batches of kBatch, stage by stage (granule entries, blocks,
// mark bytes, marking), with software prefetches between the stages: a lookup is a chain of
// dependent cache misses, and a batch overlaps the chains of its words. A word that its granule
// entry alone resolves (BlockIndex::FindWellInside, with interior pointers) skips the blocks'
// stage. Every Scan* call and Propagate() resolve their whole batch before returning, so marks are
// final after Propagate(). Interior pointers that are exactly glibc's next-chunk header address are
// ignored (see IsNextChunkHeader).
//
// Pointer policy (docs/leak-scan.md): with interior pointers (the default), a word pointing
// anywhere inside a block, or one past its last byte (a common `end` pointer, as in Boehm GC's
// all-interior mode), references it. A word inside a block belongs to that block only, so an end
// pointer is never attributed to the block after: it counts for its own block only when it lies in
// no block at all (with glibc, in the next chunk's header). An end pointer that is also glibc's
// next-chunk header address (sizes that are multiples of 16) is that metadata, and ignored. With
// interior pointers off (`--start-only`), only a word equal to a block's start references it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "scanner/BlockIndex.h"
#include "scanner/MmapAllocator.h"
#include "scanner/PresentPages.h"

namespace heapgraph::scanner {

struct MarkStats {
  uint64_t root_words = 0;
  uint64_t heap_words = 0;
  uint64_t unreadable_pages = 0;
  uint64_t absent_pages = 0;  // of the blocks scanned, skipped unread (PresentPages)
  uint64_t marked_blocks = 0;
};

class HeapMarker {
 public:
  // `shared_marks`, if given, holds one byte per block and may be shared with another marking
  // process (a MAP_SHARED mapping): marks are then set with an atomic exchange, so each block is
  // scanned by exactly one of them. `pages`, if given, tells which pages of a large block to read
  // (while marking, and in ForEachReference*); it must outlive the marker.
  HeapMarker(const BlockIndex& index, bool interior_pointers = true,
             uint8_t* shared_marks = nullptr, PresentPages* pages = nullptr);

  // Treats the memory [begin, end) of this process as a root; unreadable pages are skipped.
  void ScanRoot(uint64_t begin, uint64_t end);
  // The same for memory known to be readable throughout (private anonymous): plain loads. In a
  // copy-on-write snapshot, process_vm_readv would unshare every page it reads.
  void ScanReadableRoot(uint64_t begin, uint64_t end);
  // Treats already-copied words (saved registers) as a root.
  void ScanWords(const uint64_t* words, size_t count);
  // Marks everything reachable from the marked blocks.
  void Propagate();

  bool marked(uint32_t block) const {
    return __atomic_load_n(&marks_[block], __ATOMIC_RELAXED) != 0;
  }
  const MarkStats& stats() const { return stats_; }

  // Blocks from this size on are read only where PresentPages says pages exist.
  static constexpr uint64_t kSparseBlockBytes = 1u << 20;

  // Calls visit(j) for every block j that a word of block i points to (i's outgoing edges).
  template <typename Visit>
  void ForEachReference(uint32_t i, Visit&& visit) const;
  // The same with the word: visit(word_index, j, word) for every word of block i pointing to j.
  template <typename Visit>
  void ForEachReferenceAt(uint32_t i, Visit&& visit) const;
  // The block `word` references under this marker's rules, or BlockIndex::kNotFound.
  uint32_t Target(uint64_t word) const {
    return InRange(word) ? Lookup(word) : BlockIndex::kNotFound;
  }

 private:
  static constexpr size_t kChunkBytes = 64 * 1024;

  // Words that may reference a block: from the lowest block's start to one past the highest end
  // (ScanChunk and Propagate test the same with the bounds in registers).
  bool InRange(uint64_t word) const { return word >= index_.lowest() && word <= index_.highest(); }
  uint32_t Lookup(uint64_t word) const {
    if (!interior_) return index_.FindStart(word);
    uint32_t inside = index_.FindWellInside(word);  // neither an end nor a chunk header
    if (inside != BlockIndex::kUndecided) return inside;
    uint32_t block = index_.Find(word);
    if (block == BlockIndex::kNotFound) block = index_.FindEndingAt(word);  // one past the end
    if (block != BlockIndex::kNotFound && IsNextChunkHeader(index_.block(block), word)) {
      return BlockIndex::kNotFound;
    }
    return block;
  }
  // glibc's arena state (main_arena.top, bins, last_remainder) points at chunk headers; the header
  // of the chunk after a block lies inside that block's last bytes. Such a word is allocator
  // metadata, not a reference to the block.
  static bool IsNextChunkHeader(const BlockRange& b, uint64_t word) {
    uint64_t chunk = (b.size + 8 + 15) & ~uint64_t{15};
    if (chunk < 32) chunk = 32;
    return word == b.begin - 16 + chunk;
  }
  static constexpr size_t kBatch = 64;

  // Queues a word in [lowest, highest] for lookup; resolves the batch when it is full.
  void Candidate(uint64_t word) {
    batch_[batch_size_++] = word;
    if (batch_size_ == kBatch) ResolveBatch();
  }
  void ResolveBatch();
  // Calls read(first_word, words, count) for the parts of block b to read: all of it, or for a
  // large block with PresentPages, its pages that exist. Returns the pages skipped.
  template <typename Read>
  uint64_t ForEachPart(const BlockRange& b, Read&& read) const;
  void ScanChunk(const uint64_t* words, size_t count, uint64_t* counter);

  const BlockIndex& index_;
  bool interior_;
  PresentPages* pages_;
  std::vector<uint8_t, MmapAllocator<uint8_t>> own_marks_;
  uint8_t* marks_;
  std::vector<uint32_t, MmapAllocator<uint32_t>> work_;
  std::vector<uint64_t, MmapAllocator<uint64_t>> buffer_;
  uint64_t batch_[kBatch];
  size_t batch_size_ = 0;
  MarkStats stats_;
};

template <typename Read>
uint64_t HeapMarker::ForEachPart(const BlockRange& b, Read&& read) const {
  const size_t count = b.size / sizeof(uint64_t);
  if (pages_ == nullptr || b.size < kSparseBlockBytes) {
    read(size_t{0}, reinterpret_cast<const uint64_t*>(b.begin), count);
    return 0;
  }
  // Runs start at the block or at a page boundary, so they stay word-aligned with it.
  const uint64_t end = b.begin + count * sizeof(uint64_t);
  return pages_->ForEachRun(b.begin, end, [&](uint64_t from, uint64_t to) {
    read((from - b.begin) / sizeof(uint64_t), reinterpret_cast<const uint64_t*>(from),
         (to - from) / sizeof(uint64_t));
  });
}

template <typename Visit>
void HeapMarker::ForEachReference(uint32_t i, Visit&& visit) const {
  ForEachPart(index_.block(i), [&](size_t, const uint64_t* words, size_t count) {
    for (size_t w = 0; w < count; ++w) {
      uint32_t target = Lookup(words[w]);
      if (target != BlockIndex::kNotFound) visit(target);
    }
  });
}

template <typename Visit>
void HeapMarker::ForEachReferenceAt(uint32_t i, Visit&& visit) const {
  ForEachPart(index_.block(i), [&](size_t first, const uint64_t* words, size_t count) {
    for (size_t w = 0; w < count; ++w) {
      uint32_t target = Target(words[w]);
      if (target != BlockIndex::kNotFound) visit(first + w, target, words[w]);
    }
  });
}

}  // namespace heapgraph::scanner
