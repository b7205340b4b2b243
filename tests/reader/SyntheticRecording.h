// tests/reader: builds recording directories byte by byte from the structs in PersistedFormat.h,
// independently of the recorder, so the reader can be tested (and fuzzed) against exact layouts.
// Shared by RecordingReaderTest, HeapgraphCliTest and RecordingReaderFuzzer.
//
// heap.tree is written as version 2 (hash slots, each block at the slot linear probing from its
// home gives, computed here from the documented formula), vm.tree as version 1 (splay nodes).
// Layout invariants of what Build() returns: every splay shard has used == capacity (unused nodes
// are free), every hash shard has capacity == shard_capacity, module capacity == count, and no
// file has slack at its end, so cutting any file anywhere removes bytes the reader must read.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "heap/store/PersistedFormat.h"
#include "reader/RecordingReader.h"

namespace heapgraph::synthetic {

using Files = std::map<std::string, std::string>;  // file name -> contents

inline uint64_t RoundUpToPage(uint64_t n) {
  return (n + format::kPageSize - 1) / format::kPageSize * format::kPageSize;
}

// Overwrites sizeof(T) bytes of `file` at `offset` (grows nothing: the range must exist).
template <typename T>
void Patch(Files& files, const std::string& file, uint64_t offset, const T& value) {
  std::string& bytes = files.at(file);
  if (offset + sizeof(T) > bytes.size()) throw std::out_of_range("Patch past end of " + file);
  memcpy(bytes.data() + offset, &value, sizeof(T));
}

inline void WriteFiles(const std::string& dir, const Files& files) {
  for (const auto& [name, bytes] : files) {
    std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + dir + "/" + name);
  }
}

class SyntheticRecording {
 public:
  static constexpr uint32_t kShards = 2;
  static constexpr uint32_t kShardShift = 12;
  static constexpr uint32_t kCapacity = 8;  // nodes (including node 0) or slots per shard
  static constexpr uint32_t kSlotBits = 10;
  static constexpr uint32_t kMaxDepth = 16;
  static constexpr uint64_t kNodesOffset = format::kPageSize;
  static constexpr uint64_t kShardHeadersOffset = 64;
  static constexpr uint64_t kSlotsOffset = format::kPageSize;
  static constexpr uint64_t kModuleRecordsOffset = format::kPageSize;

  struct NodeRef {
    uint32_t shard;
    uint32_t index;
  };

  // Puts a block in the shard its address selects: vm.tree at that shard's next node, heap.tree
  // at the first free slot from the address's home slot.
  NodeRef AddBlock(TreeKind tree, uint64_t address, uint64_t size, format::AllocFunction function,
                   uint32_t stack, uint32_t seq = 0) {
    uint32_t shard = static_cast<uint32_t>((address >> kShardShift) & (kShards - 1));
    Shard& s = trees_[Tree(tree)][shard];
    if (s.nodes.size() + 1 >= kCapacity) throw std::length_error("synthetic shard full");
    if (tree == TreeKind::kHeap) return {shard, AddSlot(s, address, size, function, stack, seq)};
    format::TreeNode node{};
    node.set_address(address);
    node.set_size(size);
    node.function = function;
    node.stack = stack;
    node.seq = seq;
    s.nodes.push_back(node);
    return {shard, static_cast<uint32_t>(s.nodes.size())};
  }

  // Where AddBlock put the block at `address` (heap.tree: slot index; vm.tree: node index).
  NodeRef Locate(TreeKind tree, uint64_t address) const {
    uint32_t shard = static_cast<uint32_t>((address >> kShardShift) & (kShards - 1));
    const Shard& s = trees_[Tree(tree)][shard];
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      if (s.nodes[i].address() == address) {
        uint32_t index = tree == TreeKind::kHeap ? s.slot_of[i] : static_cast<uint32_t>(i + 1);
        return {shard, index};
      }
    }
    throw std::out_of_range("no synthetic block at that address");
  }

  // The home slot of `address` in a table of `capacity` slots (docs/recording-format.md).
  static uint64_t Home(uint64_t address, uint64_t capacity) {
    uint64_t h = (address >> 4) * format::kHashMultiplier;
    return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * capacity) >> 64);
  }

  void SetDropped(TreeKind tree, uint32_t shard, uint64_t dropped) {
    trees_[Tree(tree)][shard].dropped = dropped;
  }

  // Interns `frames` (innermost first) with suffix sharing, like the recorder; returns the id.
  uint32_t AddStack(const std::vector<uint64_t>& frames) {
    uint64_t parent = 0;
    for (size_t i = frames.size(); i-- > 0;) {
      uint64_t node = (parent << kParentShift) | (uint64_t{Prefix(frames[i] >> kLow)} << kLow) |
                      (frames[i] & kLowMask);
      auto [it, inserted] = slot_of_.try_emplace(node, slots_.size() + 1);
      if (inserted) slots_.push_back(node);
      parent = it->second;
    }
    return static_cast<uint32_t>(parent);
  }

  void AddModule(const std::string& path, uint64_t load_bias, uint64_t start, uint64_t end,
                 const std::vector<uint8_t>& build_id, uint32_t state = format::kModuleLoaded) {
    format::ModuleRecord r{};
    r.load_bias = load_bias;
    r.start = start;
    r.end = end;
    r.state = state;
    r.segment_count = 1;
    r.segments[0] = {start - load_bias, end - start, 5, 0};
    r.build_id_len = static_cast<uint32_t>(build_id.size());
    if (!build_id.empty()) memcpy(r.build_id, build_id.data(), build_id.size());
    snprintf(r.path, sizeof(r.path), "%s", path.c_str());
    modules_.push_back(r);
  }

  void SetSession(int32_t pid, const std::string& executable) {
    session_pid_ = pid;
    executable_ = executable;
  }

  Files Build() const {
    Files files;
    files[format::kHeapTreeFile] = BuildTree(0);
    files[format::kVmTreeFile] = BuildTree(1);
    files[format::kStackFile] = BuildStacks();
    files[format::kModuleFile] = BuildModules();
    if (session_pid_ != 0) files[format::kSessionFile] = BuildSession();
    return files;
  }

  // Byte offsets inside the built files, for corruption tests.
  static uint64_t NodeOffset(uint32_t shard, uint32_t index) {  // vm.tree
    return kNodesOffset + (uint64_t{shard} * kCapacity + index) * sizeof(format::TreeNode);
  }
  static uint64_t HashSlotOffset(uint32_t shard, uint32_t index) {  // heap.tree
    return kNodesOffset + (uint64_t{shard} * kCapacity + index) * sizeof(format::HashSlot);
  }
  static uint64_t ShardHeaderOffset(uint32_t shard) {
    return kShardHeadersOffset + uint64_t{shard} * sizeof(format::ShardHeader);
  }
  static uint64_t SlotOffset(uint64_t slot) { return kSlotsOffset + slot * sizeof(uint64_t); }
  static uint64_t ModuleRecordOffset(uint32_t i) {
    return kModuleRecordsOffset + uint64_t{i} * sizeof(format::ModuleRecord);
  }
  static uint64_t EncodeNode(uint64_t parent, uint32_t prefix, uint64_t low) {
    return (parent << kParentShift) | (uint64_t{prefix} << kLow) | (low & kLowMask);
  }

 private:
  static constexpr uint32_t kLow = format::kStackLowBits;
  static constexpr uint64_t kLowMask = (uint64_t{1} << kLow) - 1;
  static constexpr uint32_t kParentShift = format::kStackLowBits + format::kStackPrefixBits;

  struct Shard {
    std::vector<format::TreeNode> nodes;  // nodes 1.. in order (heap.tree: blocks in add order)
    std::vector<uint32_t> slot_of;        // heap.tree: the slot of nodes[i]
    uint64_t dropped = 0;
  };

  static uint32_t AddSlot(Shard& s, uint64_t address, uint64_t size, format::AllocFunction function,
                          uint32_t stack, uint32_t seq) {
    uint64_t slot = Home(address, kCapacity);
    auto taken = [&](uint64_t i) {
      for (uint32_t used : s.slot_of) {
        if (used == i) return true;
      }
      return false;
    };
    while (taken(slot)) slot = (slot + 1) % kCapacity;
    format::TreeNode node{};
    node.set_address(address);
    node.set_size(size);
    node.function = function;
    node.stack = stack;
    node.seq = seq;
    s.nodes.push_back(node);
    s.slot_of.push_back(static_cast<uint32_t>(slot));
    return static_cast<uint32_t>(slot);
  }

  static int Tree(TreeKind tree) { return tree == TreeKind::kHeap ? 0 : 1; }

  template <typename T>
  static void Put(std::string& bytes, uint64_t offset, const T& value) {
    memcpy(bytes.data() + offset, &value, sizeof(T));
  }

  static format::FileHeader Header(const char (&magic)[8], uint64_t header_size,
                                   uint32_t version = format::kVersion) {
    format::FileHeader h{};
    memcpy(h.magic, magic, sizeof(h.magic));
    h.version = version;
    h.header_size = static_cast<uint32_t>(header_size);
    return h;
  }

  uint32_t Prefix(uint64_t high) {
    for (size_t i = 1; i < prefixes_.size(); ++i) {
      if (prefixes_[i] == high) return static_cast<uint32_t>(i);
    }
    prefixes_.push_back(high);
    return static_cast<uint32_t>(prefixes_.size() - 1);
  }

  std::string BuildHashTree() const {
    std::string bytes(HashSlotOffset(kShards, 0), '\0');
    format::TreeHeader h{};
    h.file = Header(format::kTreeMagic, kNodesOffset, format::kHashTreeVersion);
    h.node_size = sizeof(format::HashSlot);
    h.shard_count = kShards;
    h.shard_shift = kShardShift;
    h.shard_capacity = kCapacity;
    h.nodes_offset = kNodesOffset;
    Put(bytes, 0, h);
    for (uint32_t i = 0; i < kShards; ++i) {
      const Shard& s = trees_[0][i];
      format::HashShardHeader sh{};
      sh.capacity = kCapacity;
      sh.live_count = s.nodes.size();
      for (const format::TreeNode& n : s.nodes) sh.live_bytes += n.size();
      sh.dropped = s.dropped;
      sh.backed_bytes = kCapacity * sizeof(format::HashSlot);
      Put(bytes, ShardHeaderOffset(i), sh);
      for (size_t j = 0; j < s.nodes.size(); ++j) {
        const format::TreeNode& n = s.nodes[j];
        format::HashSlot slot{n.address(), format::HashSlot::Pack(n.size(), n.function), n.stack,
                              n.seq};
        Put(bytes, HashSlotOffset(i, s.slot_of[j]), slot);
      }
    }
    return bytes;
  }

  std::string BuildTree(int tree) const {
    if (tree == 0) return BuildHashTree();
    std::string bytes(NodeOffset(kShards, 0), '\0');
    format::TreeHeader h{};
    h.file = Header(format::kTreeMagic, kNodesOffset);
    h.node_size = sizeof(format::TreeNode);
    h.shard_count = kShards;
    h.shard_shift = kShardShift;
    h.shard_capacity = kCapacity;
    h.nodes_offset = kNodesOffset;
    Put(bytes, 0, h);
    for (uint32_t i = 0; i < kShards; ++i) {
      const Shard& s = trees_[tree][i];
      format::ShardHeader sh{};
      sh.used = kCapacity;
      sh.live_count = s.nodes.size();
      for (const format::TreeNode& n : s.nodes) sh.live_bytes += n.size();
      sh.dropped = s.dropped;
      sh.backed_bytes = kCapacity * sizeof(format::TreeNode);
      Put(bytes, ShardHeaderOffset(i), sh);
      for (size_t j = 0; j < s.nodes.size(); ++j) {
        Put(bytes, NodeOffset(i, static_cast<uint32_t>(j + 1)), s.nodes[j]);
      }
    }
    return bytes;
  }

  std::string BuildStacks() const {
    uint64_t slots = uint64_t{1} << kSlotBits;
    std::string bytes(SlotOffset(slots), '\0');
    format::StackHeader h{};
    h.file = Header(format::kStackMagic, kSlotsOffset);
    h.slot_bits = kSlotBits;
    h.max_depth = kMaxDepth;
    h.slots_offset = kSlotsOffset;
    h.prefix_count = static_cast<uint32_t>(prefixes_.size());
    h.node_count = slots_.size();
    h.stack_count = slots_.size();
    for (size_t i = 0; i < prefixes_.size(); ++i) h.prefixes[i] = prefixes_[i];
    Put(bytes, 0, h);
    for (size_t i = 0; i < slots_.size(); ++i) Put(bytes, SlotOffset(i + 1), slots_[i]);
    return bytes;
  }

  std::string BuildModules() const {
    std::string bytes(ModuleRecordOffset(static_cast<uint32_t>(modules_.size())), '\0');
    format::ModuleHeader h{};
    h.file = Header(format::kModuleMagic, kModuleRecordsOffset);
    h.record_size = sizeof(format::ModuleRecord);
    h.capacity = static_cast<uint32_t>(modules_.size());
    h.count = static_cast<uint32_t>(modules_.size());
    h.sequence = 2;
    Put(bytes, 0, h);
    for (size_t i = 0; i < modules_.size(); ++i) {
      Put(bytes, ModuleRecordOffset(static_cast<uint32_t>(i)), modules_[i]);
    }
    return bytes;
  }

  std::string BuildSession() const {
    std::string bytes(sizeof(format::SessionHeader), '\0');
    format::SessionHeader h{};
    h.file = Header(format::kSessionMagic, sizeof(format::SessionHeader));
    h.pid = session_pid_;
    h.max_depth = kMaxDepth;
    h.start_time_ns = 1'700'000'000'000'000'000ull;
    h.sequence = 42;
    h.state = format::kSessionExited;
    snprintf(h.executable, sizeof(h.executable), "%s", executable_.c_str());
    Put(bytes, 0, h);
    return bytes;
  }

  Shard trees_[2][kShards];
  std::vector<uint64_t> prefixes_ = {0};  // index 0 is reserved
  std::vector<uint64_t> slots_;           // slot i + 1
  std::map<uint64_t, uint64_t> slot_of_;  // node -> slot
  std::vector<format::ModuleRecord> modules_;
  int32_t session_pid_ = 0;
  std::string executable_;
};

}  // namespace heapgraph::synthetic
