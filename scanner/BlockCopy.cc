#include "scanner/BlockCopy.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heap/store/LiveAllocationTree.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph::scanner {
namespace {

// Every live block of the locked `tree`, by a linear scan of each shard's slot table (the walk a
// reader of the files makes), handed to `add` in slot order; stops when `add` returns false.
template <typename Add>
bool ForEachLiveBlock(LiveAllocationTree& tree, Add&& add) {
  bool ok = true;
  for (uint32_t s = 0; s < tree.shard_count() && ok; ++s) {
    tree.shard(s).ForEach([&](const BlockRecord& r) {
      if (ok) ok = add(LeakedBlock{r.address, r.size, r.stack, r.seq, r.function, r.ignored});
    });
  }
  return ok;
}

}  // namespace

BlockCopy::~BlockCopy() {
  Unmap();
}

void BlockCopy::Unmap() {
  if (slots_ != nullptr) syscall(SYS_munmap, slots_, bytes_);
  slots_ = nullptr;
  capacity_ = count_ = bytes_ = 0;
  copied_ = false;
}

bool BlockCopy::Reserve(uint64_t live_blocks) {
  count_ = 0;
  copied_ = false;
  const uint64_t wanted = live_blocks + live_blocks / 4 + 1024;
  const bool roomy = capacity_ >= live_blocks + live_blocks / 8 + 1024 && capacity_ <= 4 * wanted;
  if (slots_ != nullptr && roomy) return true;  // kept: its pages are written already
  Unmap();
  return Map(wanted);
}

bool BlockCopy::ReuseIfItFit() {
  const bool keep = slots_ != nullptr && copied_ && count_ >= capacity_ / 4;
  count_ = 0;
  copied_ = false;
  return keep;
}

bool BlockCopy::Map(uint64_t capacity) {
  const uint64_t bytes = (capacity * sizeof(LeakedBlock) + format::kPageSize - 1) /
                         format::kPageSize * format::kPageSize;
  long r =
      syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r < 0 && r > -4096) return false;
  slots_ = reinterpret_cast<LeakedBlock*>(r);
  capacity_ = capacity;
  bytes_ = bytes;
  // The page faults happen here, before the locks (MAP_POPULATE left the first writes slow).
  auto* page = reinterpret_cast<volatile char*>(slots_);
  for (uint64_t at = 0; at < bytes_; at += format::kPageSize) page[at] = 0;
  return true;
}

bool BlockCopy::CopyFrom(LiveAllocationTree& tree) {
  count_ = 0;
  copied_ = slots_ != nullptr && tree.LiveCount() <= capacity_ &&
            ForEachLiveBlock(tree, [this](const LeakedBlock& b) {
              if (count_ == capacity_) return false;
              slots_[count_++] = b;
              return true;
            });
  if (!copied_) count_ = 0;
  return copied_;
}

std::pair<uint64_t, uint64_t> BlockCopy::Range() const {
  if (slots_ == nullptr) return {0, 0};
  auto begin = reinterpret_cast<uint64_t>(slots_);
  return {begin, begin + bytes_};
}

MmapVector<LeakedBlock> BlockCopy::Copy(LiveAllocationTree& tree) {
  MmapVector<LeakedBlock> blocks;
  blocks.reserve(tree.LiveCount());
  ForEachLiveBlock(tree, [&blocks](const LeakedBlock& b) {
    blocks.push_back(b);
    return true;
  });
  return blocks;
}

}  // namespace heapgraph::scanner
