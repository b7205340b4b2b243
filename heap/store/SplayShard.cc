#include "heap/store/SplayShard.h"

#include <cstring>

#include "heap/store/ShardLock.h"

namespace heapgraph {

using format::TreeNode;

void SplayShard::Attach(format::ShardHeader* header, TreeNode* nodes, uint32_t capacity,
                        MappedFile* file, uint64_t file_offset) {
  header_ = header;
  nodes_ = nodes;
  capacity_ = capacity;
  file_ = file;
  file_offset_ = file_offset;
}

void SplayShard::Reset() {
  header_->root = 0;
  header_->free_head = 0;
  header_->used = 1;
  header_->writing = 0;
  header_->live_count = 0;
  header_->live_bytes = 0;
  header_->dropped = 0;
  header_->backed_bytes = 0;
}

void SplayShard::Lock() {
  LockShard(header_->lock);
}

void SplayShard::Unlock() {
  UnlockShard(header_->lock);
}

BlockRecord SplayShard::ToRecord(const TreeNode& node) {
  BlockRecord r;
  r.address = node.address();
  r.size = node.size();
  r.stack = node.stack;
  r.seq = node.seq;
  r.function = node.function;
  return r;
}

// Top-down splay: afterwards the node with `key`, or the last node on its search path, is the
// root. Node 0 serves as the temporary header that collects the left and right trees.
uint32_t SplayShard::Splay(uint32_t t, uint64_t key) {
  if (t == 0) return 0;
  TreeNode* n = nodes_;
  n[0].left = n[0].right = 0;
  uint32_t l = 0, r = 0;
  for (;;) {
    if (key < Key(t)) {
      uint32_t y = n[t].left;
      if (y == 0) break;
      if (key < Key(y)) {  // rotate right
        n[t].left = n[y].right;
        n[y].right = t;
        t = y;
        if (n[t].left == 0) break;
      }
      n[r].left = t;  // link right
      r = t;
      t = n[t].left;
    } else if (key > Key(t)) {
      uint32_t y = n[t].right;
      if (y == 0) break;
      if (key > Key(y)) {  // rotate left
        n[t].right = n[y].left;
        n[y].left = t;
        t = y;
        if (n[t].right == 0) break;
      }
      n[l].right = t;  // link left
      l = t;
      t = n[t].right;
    } else {
      break;
    }
  }
  n[l].right = n[t].left;
  n[r].left = n[t].right;
  n[t].left = n[0].right;
  n[t].right = n[0].left;
  n[0].left = n[0].right = 0;
  return t;
}

uint32_t SplayShard::NewNode() {
  uint32_t index = header_->free_head;
  if (index != 0) {
    header_->free_head = nodes_[index].left;
    return index;
  }
  if (header_->used >= capacity_) return 0;
  index = header_->used;
  uint64_t end = (uint64_t{index} + 1) * sizeof(TreeNode);
  if (end > header_->backed_bytes) {
    uint64_t chunk = uint64_t{capacity_} * sizeof(TreeNode) - header_->backed_bytes;
    if (chunk > kReserveChunkBytes) chunk = kReserveChunkBytes;
    if (!file_->Reserve(file_offset_ + header_->backed_bytes, chunk)) return 0;
    header_->backed_bytes += chunk;
  }
  header_->used = index + 1;
  return index;
}

void SplayShard::FreeNode(uint32_t index) {
  TreeNode& node = nodes_[index];
  memset(&node, 0, sizeof(node));
  node.left = header_->free_head;
  header_->free_head = index;
}

void SplayShard::Fill(uint32_t index, const BlockRecord& block) {
  TreeNode& node = nodes_[index];
  node.set_address(block.address);
  node.set_size(block.size);
  node.function = block.function;
  node.stack = block.stack;
  node.seq = block.seq;
}

bool SplayShard::Upsert(const BlockRecord& block) {
  uint32_t t = Splay(header_->root, block.address);
  if (t != 0 && Key(t) == block.address) {
    header_->writing = t + 1;
    header_->live_bytes -= nodes_[t].size();
    Fill(t, block);
    header_->live_bytes += block.size;
    header_->root = t;
    header_->writing = 0;
    return true;
  }
  header_->root = t;
  uint32_t x = NewNode();
  if (x == 0) {
    ++header_->dropped;
    return false;
  }
  header_->writing = x + 1;
  Fill(x, block);
  if (t == 0) {
    nodes_[x].left = nodes_[x].right = 0;
  } else if (block.address < Key(t)) {
    nodes_[x].left = nodes_[t].left;
    nodes_[x].right = t;
    nodes_[t].left = 0;
  } else {
    nodes_[x].right = nodes_[t].right;
    nodes_[x].left = t;
    nodes_[t].right = 0;
  }
  header_->root = x;
  ++header_->live_count;
  header_->live_bytes += block.size;
  header_->writing = 0;
  return true;
}

bool SplayShard::Remove(uint64_t address, BlockRecord* removed) {
  uint32_t t = Splay(header_->root, address);
  header_->root = t;
  if (t == 0 || Key(t) != address) return false;
  header_->writing = t + 1;
  if (removed != nullptr) *removed = ToRecord(nodes_[t]);
  uint32_t left = nodes_[t].left, right = nodes_[t].right;
  uint32_t root = right;
  if (left != 0) {
    root = Splay(left, address);  // every key in `left` is smaller: its maximum rises
    nodes_[root].right = right;
  }
  header_->root = root;
  --header_->live_count;
  header_->live_bytes -= nodes_[t].size();
  FreeNode(t);
  header_->writing = 0;
  return true;
}

bool SplayShard::Floor(uint64_t address, BlockRecord* found) {
  uint32_t t = Splay(header_->root, address);
  header_->root = t;
  if (t == 0) return false;
  if (Key(t) > address) {
    t = nodes_[t].left;
    if (t == 0) return false;
    while (nodes_[t].right != 0) t = nodes_[t].right;
  }
  *found = ToRecord(nodes_[t]);
  return true;
}

}  // namespace heapgraph
