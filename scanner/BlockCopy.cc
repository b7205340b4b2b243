#include "scanner/BlockCopy.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "heap/store/LiveAllocationTree.h"
#include "heap/store/PersistedFormat.h"
#include "roots/RawSyscall.h"

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
  if (header_ != nullptr) syscall(SYS_munmap, header_, bytes_);
  header_ = nullptr;
  slots_ = nullptr;
  capacity_ = count_ = bytes_ = written_ = 0;
  copied_ = false;
}

bool BlockCopy::Reserve(uint64_t live_blocks, bool shared) {
  count_ = 0;
  copied_ = false;
  const uint64_t wanted = live_blocks + live_blocks / 4 + 1024;
  const bool roomy = capacity_ >= live_blocks + live_blocks / 8 + 1024 && capacity_ <= 4 * wanted;
  if (slots_ != nullptr && roomy && shared == shared_) {  // kept: its pages are written already
    header_->state.store(kCopying, std::memory_order_relaxed);
  } else {
    Unmap();
    if (!Map(wanted, shared)) return false;
  }
  WritePages(live_blocks + live_blocks / 4 + kWrittenSlack);
  return true;
}

void BlockCopy::WritePages(uint64_t blocks) {
  const uint64_t end = std::min(bytes_, kHeaderBytes + blocks * sizeof(LeakedBlock));
  if (end <= written_) return;
  // One call faults the run in (Linux 5.14+): half the time of a fault a page for shared memory
  // on a Firecracker guest (40 MiB: 64 ms against 125; docs/performance.md, session 33). The
  // writes then make sure of every page, and do it all where the call is refused.
  const uint64_t run_end =
      std::min(bytes_, (end + format::kPageSize - 1) & ~(format::kPageSize - 1));
  syscall(SYS_madvise, reinterpret_cast<char*>(header_) + written_, run_end - written_,
          MADV_POPULATE_WRITE);
  auto* bytes = reinterpret_cast<volatile char*>(header_);
  for (; written_ < end; written_ += format::kPageSize) bytes[written_] = 0;
}

bool BlockCopy::ReuseIfItFit() {
  const bool keep = slots_ != nullptr && copied_ && count_ >= capacity_ / 4;
  count_ = 0;
  copied_ = false;
  return keep;
}

bool BlockCopy::Map(uint64_t capacity, bool shared) {
  const uint64_t bytes = (kHeaderBytes + capacity * sizeof(LeakedBlock) + format::kPageSize - 1) /
                         format::kPageSize * format::kPageSize;
  const int kind = shared ? MAP_SHARED : MAP_PRIVATE;
  long r = syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, kind | MAP_ANONYMOUS, -1, 0);
  if (r < 0 && r > -4096) return false;
  header_ = new (reinterpret_cast<void*>(r)) Header{};
  slots_ = reinterpret_cast<LeakedBlock*>(r + static_cast<long>(kHeaderBytes));
  shared_ = shared;
  capacity_ = capacity;
  bytes_ = bytes;
  written_ = format::kPageSize;  // the header's page
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

void BlockCopy::Publish() {
  if (header_ == nullptr) return;
  header_->count = count_;
  header_->state.store(copied_ ? kCopied : kNotCopied, std::memory_order_release);
}

bool BlockCopy::AwaitPublished(std::span<const LeakedBlock>* blocks) const {
  *blocks = {};
  if (header_ == nullptr) return false;
  const int64_t deadline = roots::RawSyscall::MonotonicNs() + kPublishWaitNs;
  uint32_t state = kCopying;
  while ((state = header_->state.load(std::memory_order_acquire)) == kCopying &&
         roots::RawSyscall::MonotonicNs() < deadline) {
    roots::RawSyscall::Nanosleep(50'000);
  }
  if (state != kCopied) return false;
  *blocks = {slots_, header_->count};
  return true;
}

std::pair<uint64_t, uint64_t> BlockCopy::Range() const {
  if (header_ == nullptr) return {0, 0};
  auto begin = reinterpret_cast<uint64_t>(header_);
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
