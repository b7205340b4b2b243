// heap/runtime/: the tag the recorder keeps in the last 4 bytes of a recorded block's usable
// size, naming the block's slot in the live-allocation tree (heap/store/LiveAllocationTree) so
// that free and realloc find the slot without a search. The hooks ask glibc for a few more bytes
// when the chunk would leave fewer than 4 behind the program's (PaddedRequest), so the tag never
// overlaps bytes the program asked for, and malloc_usable_size hides them. glibc's chunks leave
// 0-15 spare bytes, so a 4-byte tag pads a quarter of the sizes where an 8-byte one padded half.
//
// Layout: the complement of (shard << 22 | index): bits 0-21 the slot index (shard_capacity_log2
// <= 22), bits 22-31 the shard (<= 1024 shards). Any 4 bytes read as some slot; the tag carries no
// check of its own. A block that carries no tag (allocated while nothing was recorded) has
// whatever the program left there, and it is taken for tagged only if the slot it names holds a
// block at that very address (LiveAllocationTree::Holds), so a stray tag can never remove another
// block's record. Zero bytes (fresh, calloc'd or cleared memory) name the last slot of shard 1023,
// which the bounds check rejects without a memory read unless the tree has 1024 shards.
//
// Bad input: an overrun that changes a tag leaves the block's record in the tree (a leak report
// names it). Header only, no state; never allocates; the glibc layout rules are in GlibcChunk.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "heap/runtime/GlibcChunk.h"

namespace heapgraph::block_tag {

inline constexpr size_t kBytes = 4;
inline constexpr uint32_t kIndexBits = 22, kShardBits = 10;
// Requests this large are always padded: glibc may map them (page-rounded, its own header).
inline constexpr size_t kAlwaysPad = 64 * 1024;

// `n` bytes and a tag (n itself where that overflows: glibc refuses such a request anyway).
inline size_t PlusTag(size_t n) {
  return n + kBytes < n ? n : n + kBytes;
}

// What to ask glibc's malloc/calloc/realloc for so that `n` bytes and a tag fit in the chunk:
// n itself when glibc's chunk for it (glibc_chunk::UsableFor) leaves room behind them.
inline size_t PaddedRequest(size_t n) {
  if (n >= kAlwaysPad) return PlusTag(n);
  return glibc_chunk::UsableFor(n) - n >= kBytes ? n : PlusTag(n);
}

// True when a block of `size` program bytes has room for a tag behind them.
inline bool Fits(const void* block, size_t size) {
  return glibc_chunk::UsableSize(block) >= size + kBytes;
}

inline uint32_t* Where(void* block) {
  return reinterpret_cast<uint32_t*>(static_cast<char*>(block) + glibc_chunk::UsableSize(block) -
                                     kBytes);
}

inline void Write(void* block, uint32_t shard, uint32_t index) {
  const uint32_t tag = ~(shard << kIndexBits | index);
  memcpy(Where(block), &tag, sizeof(tag));
}

// Erases the block's tag: a chunk glibc hands out again holds no tag of an earlier block.
inline void Clear(void* block) {
  const uint32_t zero = 0;
  memcpy(Where(block), &zero, sizeof(zero));
}

// The slot the block's last 4 bytes name. The caller confirms that the slot holds this address
// (LiveAllocationTree::Holds / Remove) before taking the block for tagged.
inline void Read(void* block, uint32_t* shard, uint32_t* index) {
  uint32_t tag;
  memcpy(&tag, Where(block), sizeof(tag));
  tag = ~tag;
  *shard = tag >> kIndexBits;
  *index = tag & ((1u << kIndexBits) - 1);
}

}  // namespace heapgraph::block_tag
