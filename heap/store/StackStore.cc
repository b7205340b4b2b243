#include "heap/store/StackStore.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "heap/platform/LineBuffer.h"

namespace heapgraph {

using format::kStackLowBits;
using format::kStackPrefixBits;
using format::StackHeader;

namespace {

constexpr uint64_t kLowMask = (uint64_t{1} << kStackLowBits) - 1;
constexpr uint64_t kPrefixTableSize = uint64_t{1} << (48 - kStackLowBits);
// Past this fill ratio (9/10) new nodes are refused so probe chains stay short.
constexpr uint64_t kMaxFillNumerator = 9, kMaxFillDenominator = 10;
// The index's first level has 2^10..2^12 slots (8-32 KiB), each next one 2^3 times more.
constexpr uint32_t kFirstLevelMinBits = 10, kLevelStepBits = 3;
// An older level's empty slot that ended a search once a newer level took new nodes.
constexpr uint64_t kClosed = ~uint64_t{0};

uint64_t SlotsOffset() {
  return (sizeof(StackHeader) + format::kPageSize - 1) / format::kPageSize * format::kPageSize;
}

uint64_t RoundUpToPage(uint64_t n) {
  return (n + format::kPageSize - 1) / format::kPageSize * format::kPageSize;
}

void* RawMmap(uint64_t length, int flags) {
  long r = syscall(SYS_mmap, nullptr, length, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (r < 0 && r > -4096) return nullptr;
  return reinterpret_cast<void*>(r);
}

// The index's key for a node: a hash of its path, the encoded frames from the stack's outermost
// to the node (a node is (frame, parent id), so its path is a function of the node). The low 32
// bits are the entry's tag (a probe compares a node only when its tag matches), the high bits pick
// the home slot in each level. `outer` is the path hash of the parent, kRootPath for none.
constexpr uint64_t kRootPath = 0x84222325CBF29CE4ull;
uint64_t PathHash(uint64_t outer, uint64_t encoded) {
  uint64_t h = (outer ^ encoded) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 32;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 29);
}

}  // namespace

uint64_t StackStore::FileSize(uint32_t slot_bits) {
  return SlotsOffset() + (uint64_t{1} << slot_bits) * sizeof(uint64_t);
}

uint64_t StackStore::IndexBytes() const {
  return sizeof(IndexHeader) + index_slots_ * sizeof(uint64_t);
}

// Levels of slot_bits - 3k bits down to the first of at least 12 bits (slot_bits itself if less).
void StackStore::SetUpLevels(uint32_t slot_bits) {
  uint32_t first = slot_bits;
  while (first >= kFirstLevelMinBits + kLevelStepBits) first -= kLevelStepBits;
  level_count_ = 0;
  index_slots_ = 0;
  for (uint32_t bits = first; bits <= slot_bits; bits += kLevelStepBits) {
    levels_[level_count_++] = {index_slots_, bits};
    index_slots_ += uint64_t{1} << bits;
  }
}

// Counts an entry added to `level`; the one that fills a level that is not the last to half
// sends new nodes to the next level.
void StackStore::Inserted(uint32_t level) {
  uint64_t count = index_header_->counts[level].fetch_add(1, std::memory_order_relaxed) + 1;
  if (level + 1 < level_count_ && count == (uint64_t{1} << levels_[level].bits) / 2) {
    uint64_t expected = level;
    index_header_->level.compare_exchange_strong(expected, level + 1, std::memory_order_acq_rel);
  }
}

bool StackStore::Create(int dir_fd, const char* name, uint32_t slot_bits, uint32_t max_depth) {
  if (slot_bits < 10 || slot_bits > format::kStackParentBits ||
      max_depth > format::kMaxStackDepth) {
    return false;
  }
  prefix_of_ = static_cast<std::atomic<uint8_t>*>(
      RawMmap(kPrefixTableSize, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE));
  if (prefix_of_ == nullptr) return false;
  mask_ = (uint64_t{1} << slot_bits) - 1;
  SetUpLevels(slot_bits);
  // Shared, not private: a forked child keeps finding the nodes its parent adds, and the reverse.
  void* index = RawMmap(IndexBytes(), MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE);
  if (index == nullptr) return false;
  index_header_ = static_cast<IndexHeader*>(index);
  index_ = reinterpret_cast<std::atomic<uint64_t>*>(index_header_ + 1);
  uint64_t size = FileSize(slot_bits);
  if (!file_.Create(dir_fd, name, size) || !file_.Reserve(0, SlotsOffset())) return false;
  index_header_->reserved_end.store(SlotsOffset(), std::memory_order_relaxed);
  header_ = reinterpret_cast<StackHeader*>(file_.data());
  nodes_ = reinterpret_cast<std::atomic<uint64_t>*>(file_.data() + SlotsOffset());
  slot_bits_ = slot_bits;
  max_nodes_ = (mask_ + 1) / kMaxFillDenominator * kMaxFillNumerator;
  header_->slot_bits = slot_bits;
  header_->max_depth = max_depth;
  header_->slots_offset = SlotsOffset();
  header_->prefix_count.store(1, std::memory_order_relaxed);
  header_->file.version = format::kVersion;
  header_->file.header_size = static_cast<uint32_t>(SlotsOffset());
  memcpy(header_->file.magic, format::kStackMagic, sizeof(header_->file.magic));
  return true;
}

uint64_t StackStore::ReservedBytes() const {
  return index_header_ == nullptr ? 0 : index_header_->reserved_end.load(std::memory_order_relaxed);
}

bool StackStore::LinkInto(int from_dir_fd, int to_dir_fd, const char* name) const {
  if (linkat(from_dir_fd, name, to_dir_fd, name, 0) == 0) return true;
  // The directory that held it may be gone (a forked child writing its directory after its
  // parent's was renamed away): link the open file itself while it still has a name elsewhere.
  int fd = file_.OwnFd();
  LineBuffer path;
  path.Append("/proc/self/fd/").AppendDecimal(static_cast<uint64_t>(fd)).AppendChar('\0');
  if (fd >= 0 && linkat(AT_FDCWD, path.data(), to_dir_fd, name, AT_SYMLINK_FOLLOW) == 0) {
    return true;
  }
  // No name left (its directory was pruned): a copy of the nodes so far.
  MappedFile::Range used = {0, ReservedBytes()};
  return file_.CopyTo(to_dir_fd, name, &used, 1);
}

void StackStore::Unmap() {
  file_.Unmap();
  if (index_header_ != nullptr) syscall(SYS_munmap, index_header_, IndexBytes());
  index_header_ = nullptr;
  index_ = nullptr;
  if (prefix_of_ != nullptr) syscall(SYS_munmap, prefix_of_, kPrefixTableSize);
  prefix_of_ = nullptr;
}

// Assigns prefix indices under the lock in the file header (another process sharing the table
// after fork may have added the prefix: the persisted list is searched first). The persisted
// prefix is written before its index is published, so every node using it can be decoded.
// The lock word holds the owner's pid because parent and child share it after fork: a process
// killed while holding it (a window of a few stores) must not hang the other forever, so a waiter
// that finds the owner gone takes the lock over.
void StackStore::LockPrefixes() {
  int32_t self = getpid();
  for (unsigned spins = 1;; ++spins) {
    int32_t owner = 0;
    if (header_->prefix_lock.compare_exchange_weak(owner, self, std::memory_order_acquire)) return;
    if (spins % 1024 == 0 && owner != 0 && kill(owner, 0) != 0 && errno == ESRCH) {
      header_->prefix_lock.compare_exchange_strong(owner, 0, std::memory_order_relaxed);
    }
    sched_yield();
  }
}

uint32_t StackStore::PrefixIndex(uint64_t high) {
  uint8_t known = prefix_of_[high].load(std::memory_order_acquire);
  if (known != 0) return known;
  LockPrefixes();
  uint32_t count = header_->prefix_count.load(std::memory_order_relaxed);
  uint32_t index = 0;
  for (uint32_t i = 1; i < count && index == 0; ++i) {
    if (header_->prefixes[i] == high) index = i;
  }
  if (index == 0 && count < format::kMaxStackPrefixes) {
    header_->prefixes[count] = high;
    header_->prefix_count.store(count + 1, std::memory_order_release);
    index = count;
  }
  header_->prefix_lock.store(0, std::memory_order_release);
  if (index != 0) prefix_of_[high].store(static_cast<uint8_t>(index), std::memory_order_release);
  return index;
}

bool StackStore::Encode(uint64_t address, uint64_t* frame) {
  if ((address >> kAddressBits) != 0) return false;
  uint32_t prefix = PrefixIndex(address >> kStackLowBits);
  if (prefix == 0) return false;
  *frame = (uint64_t{prefix} << kStackLowBits) | (address & kLowMask);
  return true;
}

void StackStore::Prefetch(uint64_t hash, uint32_t through_level) const {
  for (uint32_t level = 0; level <= through_level && level < level_count_; ++level) {
    __builtin_prefetch(index_ + levels_[level].offset + (hash >> (64 - levels_[level].bits)));
  }
}

uint64_t StackStore::Decode(uint64_t node) const {
  uint64_t prefix = (node >> kStackLowBits) & ((1u << kStackPrefixBits) - 1);
  return (header_->prefixes[prefix] << kStackLowBits) | (node & kLowMask);
}

// Makes sure node `id` lies in the reserved part of the file, reserving a quarter more than
// needed (at least to the end of its page) so that reservations stay rare as the table grows.
bool StackStore::ReserveThrough(uint64_t id) {
  uint64_t end = SlotsOffset() + (id + 1) * sizeof(uint64_t);
  uint64_t reserved = index_header_->reserved_end.load(std::memory_order_acquire);
  if (end <= reserved) return true;
  uint64_t target = RoundUpToPage(end + (end - SlotsOffset()) / 4);
  if (target > file_.size()) target = file_.size();
  if (!file_.Reserve(reserved, target - reserved)) return false;
  while (reserved < target && !index_header_->reserved_end.compare_exchange_weak(
                                  reserved, target, std::memory_order_acq_rel)) {
  }
  return true;
}

// Takes the next id and writes `node` there; 0 when the table is full or the disk refused.
uint32_t StackStore::NewNode(uint64_t node) {
  uint64_t last = index_header_->next_id.load(std::memory_order_relaxed);
  do {
    if (last >= max_nodes_) return 0;
  } while (
      !index_header_->next_id.compare_exchange_weak(last, last + 1, std::memory_order_relaxed));
  uint64_t id = last + 1;
  if (!ReserveThrough(id)) return 0;
  nodes_[id].store(node, std::memory_order_relaxed);
  return static_cast<uint32_t>(id);
}

// The id of `node`, publishing it (and setting *created) if it is new; 0 if it could not be stored.
// A thread that loses the race to publish the same node leaves its id unreferenced and zeroed.
// The levels are searched oldest first, from `*first_level` on (Intern gives the parent's level:
// a node is published after its parent, and the level taking new nodes only advances, so no node
// lies in a level older than its parent's). In a level older than the one taking new nodes, the
// empty slot that ends the node's probe chain is closed (kClosed) before the search moves on: a
// thread that still meant to publish the node there then fails its CAS and looks in the newer
// levels, so a node is never published twice. Entries are never removed, so chains only grow.
uint32_t StackStore::Find(uint64_t node, uint64_t hash, uint32_t* created, uint32_t* first_level) {
  uint64_t tag = hash & 0xFFFFFFFFu;
  uint32_t mine = 0;
  for (uint32_t level = *first_level; level < level_count_; ++level) {
    uint64_t current = index_header_->level.load(std::memory_order_acquire);
    std::atomic<uint64_t>* entries = index_ + levels_[level].offset;
    uint64_t mask = (uint64_t{1} << levels_[level].bits) - 1;
    uint64_t slot = hash >> (64 - levels_[level].bits);
    for (uint64_t probes = 0; probes <= mask; ++probes, slot = (slot + 1) & mask) {
      uint64_t seen = entries[slot].load(std::memory_order_acquire);
      if (seen == 0 && level < current) {
        if (entries[slot].compare_exchange_strong(seen, kClosed, std::memory_order_acq_rel)) break;
      } else if (seen == 0) {
        if (mine == 0 && (mine = NewNode(node)) == 0) return 0;
        if (entries[slot].compare_exchange_strong(seen, tag << 32 | mine,
                                                  std::memory_order_acq_rel)) {
          Inserted(level);
          header_->node_count.fetch_add(1, std::memory_order_relaxed);
          ++*created;
          *first_level = level;
          return mine;
        }
      }
      // `seen` is now the entry in the slot.
      if (seen == kClosed) break;
      auto id = static_cast<uint32_t>(seen);
      if ((seen >> 32) == tag && nodes_[id].load(std::memory_order_relaxed) == node) {
        if (mine != 0) nodes_[mine].store(0, std::memory_order_relaxed);
        *first_level = level;
        return id;
      }
    }
  }
  if (mine != 0) nodes_[mine].store(0, std::memory_order_relaxed);
  return 0;
}

// Two passes: the first encodes the frames and computes every node's path hash, which needs no
// node id, and prefetches each node's home slot in the levels in use, so that the index's cache
// misses overlap; the second finds or adds the nodes outermost first, each needing its parent's id.
uint32_t StackStore::Intern(const uintptr_t* frames, uint32_t depth, uint32_t* new_nodes) {
  if (depth > header_->max_depth) depth = header_->max_depth;  // keep the innermost frames
  uint64_t encoded[format::kMaxStackDepth];
  uint64_t paths[format::kMaxStackDepth];
  const uint32_t current =
      static_cast<uint32_t>(index_header_->level.load(std::memory_order_relaxed));
  uint32_t count = 0;  // representable frames, outermost first; unrepresentable ones are skipped
  uint64_t path = kRootPath;
  for (uint32_t i = depth; i-- > 0;) {
    if (!Encode(frames[i], &encoded[count])) continue;
    path = PathHash(path, encoded[count]);
    paths[count++] = path;
    Prefetch(path, current);
  }
  uint32_t parent = 0;
  uint32_t created = 0;
  uint32_t level = 0;  // the parent's: its children lie there or in newer levels
  bool new_leaf = false;
  for (uint32_t k = 0; k < count; ++k) {
    uint64_t node = (uint64_t{parent} << (kStackLowBits + kStackPrefixBits)) | encoded[k];
    uint32_t before = created;
    uint32_t id = Find(node, paths[k], &created, &level);
    if (id == 0) {
      header_->dropped.fetch_add(1, std::memory_order_relaxed);
      if (new_nodes != nullptr) *new_nodes = created;
      return 0;
    }
    new_leaf = created != before;
    parent = id;
  }
  if (new_leaf) header_->stack_count.fetch_add(1, std::memory_order_relaxed);
  if (new_nodes != nullptr) *new_nodes = created;
  return parent;
}

uint32_t StackStore::Frames(uint32_t id, uintptr_t* out, uint32_t capacity) const {
  uint32_t n = 0;
  while (id != 0 && id <= mask_ && n < capacity) {
    uint64_t node = nodes_[id].load(std::memory_order_acquire);
    if (node == 0) break;
    out[n++] = Decode(node);
    id = static_cast<uint32_t>(node >> (kStackLowBits + kStackPrefixBits));
  }
  return n;
}

}  // namespace heapgraph
