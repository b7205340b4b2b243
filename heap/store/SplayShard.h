// heap/store/: one shard of the live-allocation tree: a top-down splay tree (Sleator-Tarjan) stored
// in a node array with 32-bit child indices and a free list of released nodes, so that no operation
// allocates (seed 000). The array lives in a MappedFile and grows in fixed-size reserved chunks.
// Callers hold the shard lock around every operation except Lock/Unlock.
#pragma once

#include <cstdint>

#include "heap/store/BlockRecord.h"
#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class SplayShard {
 public:
  // `nodes` has `capacity` entries starting at `file_offset` in `file` (for disk reservation).
  void Attach(format::ShardHeader* header, format::TreeNode* nodes, uint32_t capacity,
              MappedFile* file, uint64_t file_offset);
  // Formats an empty shard (node 0 is the splay header and null sentinel).
  void Reset();

  void Lock();
  void Unlock();

  // Inserts, or overwrites the block at the same address. False if the shard is full.
  bool Upsert(const BlockRecord& block);
  // Removes the block starting at `address`; false if there is none.
  bool Remove(uint64_t address, BlockRecord* removed);
  // The block with the greatest address <= `address`; false if none.
  bool Floor(uint64_t address, BlockRecord* found);

  // Visits blocks in address order without changing the tree. `stack` must hold live_count()
  // entries (a splay tree may be that deep). Returns false if it was too small.
  template <typename Visit>
  bool ForEachInOrder(uint32_t* stack, uint64_t stack_capacity, Visit&& visit) const;

  uint64_t live_count() const { return header_->live_count; }
  uint64_t live_bytes() const { return header_->live_bytes; }
  const format::ShardHeader* header() const { return header_; }

  static BlockRecord ToRecord(const format::TreeNode& node);

 private:
  static constexpr uint64_t kReserveChunkBytes = 64 * 1024;

  uint64_t Key(uint32_t index) const { return nodes_[index].address(); }
  uint32_t Splay(uint32_t root, uint64_t key);
  uint32_t NewNode();
  void FreeNode(uint32_t index);
  void Fill(uint32_t index, const BlockRecord& block);

  format::ShardHeader* header_ = nullptr;
  format::TreeNode* nodes_ = nullptr;
  uint32_t capacity_ = 0;
  MappedFile* file_ = nullptr;
  uint64_t file_offset_ = 0;
};

template <typename Visit>
bool SplayShard::ForEachInOrder(uint32_t* stack, uint64_t stack_capacity, Visit&& visit) const {
  uint64_t depth = 0;
  uint32_t current = header_->root;
  while (current != 0 || depth != 0) {
    while (current != 0) {
      if (depth == stack_capacity) return false;
      stack[depth++] = current;
      current = nodes_[current].left;
    }
    current = stack[--depth];
    visit(ToRecord(nodes_[current]));
    current = nodes_[current].right;
  }
  return true;
}

}  // namespace heapgraph
