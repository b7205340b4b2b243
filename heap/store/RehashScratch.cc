#include "heap/store/RehashScratch.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heap/store/ShardLock.h"

namespace heapgraph {

bool RehashScratch::Map(uint64_t slots) {
  uint64_t bytes = slots * sizeof(format::HashSlot);
  long r = syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == -1 || (r < 0 && r > -4096)) return false;
  slots_ = reinterpret_cast<format::HashSlot*>(r);
  capacity_ = slots;
  return true;
}

void RehashScratch::Unmap() {
  if (slots_ != nullptr) syscall(SYS_munmap, slots_, capacity_ * sizeof(format::HashSlot));
  slots_ = nullptr;
  capacity_ = 0;
}

format::HashSlot* RehashScratch::Acquire(uint64_t slots) {
  if (slots_ == nullptr || slots > capacity_) return nullptr;
  LockShard(lock_);
  return slots_;
}

void RehashScratch::Release(uint64_t slots) {
  uint64_t bytes = slots * sizeof(format::HashSlot);
  bytes = (bytes + format::kPageSize - 1) / format::kPageSize * format::kPageSize;
  // The first kKeptBytes stay: the next growth would fault them in again (a growing heap rehashes
  // every 1/8: a 1M-block heap's 64 shards each use ≤ 0.5 MiB of scratch at a time).
  if (bytes > kKeptBytes) {
    syscall(SYS_madvise, reinterpret_cast<char*>(slots_) + kKeptBytes, bytes - kKeptBytes,
            MADV_DONTNEED);
  }
  UnlockShard(lock_);
}

}  // namespace heapgraph
