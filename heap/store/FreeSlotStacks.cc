#include "heap/store/FreeSlotStacks.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace heapgraph {

bool FreeSlotStacks::Map(uint64_t shards, uint64_t slots_per_shard) {
  const uint64_t bytes = 2 * shards * slots_per_shard * sizeof(uint32_t);
  long r = syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == -1 || (r < 0 && r > -4096)) return false;
  entries_ = reinterpret_cast<uint32_t*>(r);
  slots_per_shard_ = slots_per_shard;
  bytes_ = bytes;
  return true;
}

void FreeSlotStacks::Unmap() {
  if (entries_ != nullptr) syscall(SYS_munmap, entries_, bytes_);
  entries_ = nullptr;
  slots_per_shard_ = 0;
  bytes_ = 0;
}

}  // namespace heapgraph
