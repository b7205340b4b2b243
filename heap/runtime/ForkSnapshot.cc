#include "heap/runtime/ForkSnapshot.h"

#include <time.h>
#include <unistd.h>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {
namespace {

uint64_t MonotonicNs() {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

void CloseIfOpen(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

}  // namespace

bool ForkSnapshot::Take(const Stores& stores) {
  Release();
  heap_fd_ = stores.heap->CopyToMemory(format::kHeapTreeFile);
  vm_fd_ = stores.vm->CopyToMemory(format::kVmTreeFile);
  modules_fd_ = stores.modules->CopyToMemory(format::kModuleFile);
  return heap_fd_ >= 0 && vm_fd_ >= 0 && modules_fd_ >= 0;
}

void ForkSnapshot::Release() {
  CloseIfOpen(&heap_fd_);
  CloseIfOpen(&vm_fd_);
  CloseIfOpen(&modules_fd_);
}

bool ForkSnapshot::AdoptInChild(const Stores& stores) {
  bool ok = heap_fd_ >= 0 && vm_fd_ >= 0 && modules_fd_ >= 0;
  // Each adoption takes its descriptor over (closed on failure); a failed one leaves the rest.
  ok = ok && stores.heap->AdoptMemoryCopy(heap_fd_);
  heap_fd_ = -1;
  ok = ok && stores.vm->AdoptMemoryCopy(vm_fd_);
  vm_fd_ = -1;
  ok = ok && stores.modules->AdoptMemoryCopy(modules_fd_);
  modules_fd_ = -1;
  Release();
  forked_ns_ = MonotonicNs();
  hooks_ = 0;
  return ok;
}

bool ForkSnapshot::DueToWrite() {
  return ++hooks_ >= kDeferHooks || MonotonicNs() - forked_ns_ >= kDeferNs;
}

bool ForkSnapshot::WriteDirectory(const Stores& stores, int dir_fd, int stacks_dir_fd) {
  stores.modules->Lock();
  stores.heap->LockAll();
  stores.vm->LockAll();
  // Copied with their locks held, mapped from the files with them held, released there.
  bool ok = stores.heap->CopyTo(dir_fd, format::kHeapTreeFile) &&
            stores.heap->Adopt(dir_fd, format::kHeapTreeFile) &&
            stores.vm->CopyTo(dir_fd, format::kVmTreeFile) &&
            stores.vm->Adopt(dir_fd, format::kVmTreeFile) &&
            stores.modules->CopyTo(dir_fd, format::kModuleFile) &&
            stores.modules->Adopt(dir_fd, format::kModuleFile) &&
            stores.stacks->LinkInto(stacks_dir_fd, dir_fd, format::kStackFile);
  stores.vm->UnlockAll();
  stores.heap->UnlockAll();
  stores.modules->Unlock();
  return ok;
}

}  // namespace heapgraph
