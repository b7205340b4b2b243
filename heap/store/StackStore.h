// heap/store/: suffix-sharing stack store (seed 000). Frames are inserted outermost first as 64-bit
// (return address, parent id) nodes, so stacks that share their outer frames share those nodes; a
// stack id is the index of its innermost frame's node. Nodes are appended densely to the node
// array of a MappedFile (ids 1, 2, 3, ...), so the file's disk grows with the nodes stored (8 bytes
// each, reserved ahead in page steps: a full disk drops stacks, never raises SIGBUS); the
// open-addressing index that finds a node again is shared anonymous memory (not persisted: readers
// only follow ids), shared with forked children like the file. The index places a node by a hash
// of its path (its frames from the stack's outermost), known before any parent id is, so one
// Intern prefetches every level's slot first and its cache misses overlap. The index grows in
// levels (8x more slots each, the last one 2^slot_bits): a short process touches only the pages of
// a small first level instead of one page of a 32 MiB table per new node. Insertion is lock-free
// (one CAS per new node) and never allocates.
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class StackStore {
 public:
  static uint64_t FileSize(uint32_t slot_bits);

  bool Create(int dir_fd, const char* name, uint32_t slot_bits, uint32_t max_depth);
  // Fork support: the table only ever gains nodes, each published by one CAS into the index
  // (shared memory), and prefixes are appended under a lock kept in the file, so parent and child
  // keep sharing one table; the child's directory gets a hard link to it (from `from_dir_fd`, or
  // from the open file when that directory no longer holds it). When the file has no name left
  // (its directory was pruned), the child's gets a copy of the nodes so far: nodes added later
  // are in the shared table only.
  bool LinkInto(int from_dir_fd, int to_dir_fd, const char* name) const;
  void Unmap();

  // Stores frames[0..depth) (innermost first) and returns the stack id; 0 when depth is 0 or the
  // table is too full to take a new node (counted in `dropped`). `new_nodes`, if given, receives
  // how many nodes this call added (0 for a stack seen before).
  uint32_t Intern(const uintptr_t* frames, uint32_t depth, uint32_t* new_nodes = nullptr);

  // Copies the frames of stack `id`, innermost first; returns how many.
  uint32_t Frames(uint32_t id, uintptr_t* out, uint32_t capacity) const;

  uint64_t node_count() const { return header_->node_count.load(std::memory_order_relaxed); }
  uint64_t stack_count() const { return header_->stack_count.load(std::memory_order_relaxed); }
  uint64_t dropped() const { return header_->dropped.load(std::memory_order_relaxed); }
  uint64_t slot_count() const { return mask_ + 1; }
  // Bytes of the file with disk blocks (header + the node pages reserved so far).
  uint64_t ReservedBytes() const;
  const MappedFile& file() const { return file_; }

 private:
  // Frames above 2^48 (never user code on x86-64/aarch64 Linux) are not representable.
  static constexpr uint32_t kAddressBits = 48;

  // The index: what every process of a fork family shares besides the file (MAP_SHARED anonymous
  // memory): the next node id to hand out, how far the file's disk is reserved, the level new
  // nodes go to and each level's entry count, then the levels' entries `tag << 32 | id` (0 =
  // empty, kClosed = an empty slot of an older level that no node may take any more), tag being
  // 32 more bits of the node's hash. Pages of a level are touched only when used.
  static constexpr uint32_t kMaxLevels = 8;
  struct IndexHeader {
    std::atomic<uint64_t> next_id;
    std::atomic<uint64_t> reserved_end;
    std::atomic<uint64_t> level;
    uint64_t padding[5];
    std::atomic<uint64_t> counts[kMaxLevels];  // entries start on their own cache line
  };
  // One level of the index: 2^bits entries at index_ + offset.
  struct Level {
    uint64_t offset;
    uint32_t bits;
  };

  // The node's frame part (prefix index and low address bits); false for an unrepresentable frame.
  bool Encode(uint64_t address, uint64_t* frame);
  // Prefetches the home slot of path hash `hash` in levels 0..through_level (never faults a page).
  void Prefetch(uint64_t hash, uint32_t through_level) const;
  uint32_t PrefixIndex(uint64_t high);
  void LockPrefixes();
  uint64_t Decode(uint64_t node) const;
  // `*level`: in, the first level to search (a node lies in its parent's level or a newer one:
  // levels only advance, and a node is published after its parent); out, the node's level.
  // `hash`: the node's path hash (StackStore.cc, PathHash), which places it in the index.
  uint32_t Find(uint64_t node, uint64_t hash, uint32_t* created, uint32_t* level);
  void SetUpLevels(uint32_t slot_bits);
  void Inserted(uint32_t level);
  uint32_t NewNode(uint64_t node);
  bool ReserveThrough(uint64_t id);
  uint64_t IndexBytes() const;

  MappedFile file_;
  format::StackHeader* header_ = nullptr;
  std::atomic<uint64_t>* nodes_ = nullptr;
  IndexHeader* index_header_ = nullptr;
  std::atomic<uint64_t>* index_ = nullptr;
  uint64_t mask_ = 0;  // of the last level: 2^slot_bits - 1
  Level levels_[kMaxLevels] = {};
  uint32_t level_count_ = 0;
  uint64_t index_slots_ = 0;  // all levels
  uint32_t slot_bits_ = 0;
  uint64_t max_nodes_ = 0;
  // Process-local: address >> 28 -> prefix index (0 = not assigned yet). Anonymous memory.
  std::atomic<uint8_t>* prefix_of_ = nullptr;
};

}  // namespace heapgraph
