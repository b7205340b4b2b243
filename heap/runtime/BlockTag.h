// heap/runtime/: the tag the recorder keeps in the last 8 bytes of a recorded block's usable
// size, naming the block's slot in the live-allocation tree (heap/store/LiveAllocationTree) so
// that free and realloc find the slot without a search. The hooks ask glibc for a few more bytes
// when the chunk would leave fewer than 8 behind the program's (PaddedRequest), so the tag never
// overlaps bytes the program asked for, and malloc_usable_size hides them.
//
// Layout: bits 0-27 the slot index (shard_capacity_log2 <= 28), bits 28-37 the shard (<= 1024
// shards), bits 38-63 a check: 26 bits of a hash of the block's address. A block that carries no
// tag (allocated while nothing was recorded) has whatever the program left there; it is taken
// for tagged only if the check matches and the slot it names holds a block at that very address,
// so a stray tag can never remove another block's record.
//
// Bad input: an overrun that changes a tag leaves the block's record in the tree (a leak report
// names it). Header only, no state; never allocates; the glibc layout rules are in GlibcChunk.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "heap/runtime/GlibcChunk.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph::block_tag {

inline constexpr size_t kBytes = 8;
inline constexpr uint32_t kIndexBits = 28, kShardBits = 10;
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

inline uint64_t Check(uint64_t address) {
  return (address * format::kHashMultiplier) >> (kIndexBits + kShardBits);
}

inline uint64_t* Where(void* block) {
  return reinterpret_cast<uint64_t*>(static_cast<char*>(block) + glibc_chunk::UsableSize(block) -
                                     kBytes);
}

inline void Write(void* block, uint32_t shard, uint32_t index) {
  const uint64_t tag = Check(reinterpret_cast<uintptr_t>(block)) << (kIndexBits + kShardBits) |
                       uint64_t{shard} << kIndexBits | index;
  memcpy(Where(block), &tag, sizeof(tag));
}

// Erases the block's tag: a chunk glibc hands out again holds no tag of an earlier block.
inline void Clear(void* block) {
  const uint64_t zero = 0;
  memcpy(Where(block), &zero, sizeof(zero));
}

// The slot the block's tag names, if its check matches the block's address. The caller still
// confirms that the slot holds this address (LiveAllocationTree::Holds / Remove).
inline bool Read(void* block, uint32_t* shard, uint32_t* index) {
  if (glibc_chunk::UsableSize(block) < kBytes) return false;
  uint64_t tag;
  memcpy(&tag, Where(block), sizeof(tag));
  if (tag >> (kIndexBits + kShardBits) != Check(reinterpret_cast<uintptr_t>(block))) return false;
  *shard = static_cast<uint32_t>(tag >> kIndexBits) & ((1u << kShardBits) - 1);
  *index = static_cast<uint32_t>(tag) & ((1u << kIndexBits) - 1);
  return true;
}

}  // namespace heapgraph::block_tag
