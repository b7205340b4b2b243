// scanner/types/: the bytes behind SnapshotMemory when the type readers run in a live process
// whose other threads keep running (the memory-pressure watcher's type refresh) instead of in a
// snapshot child. Every byte is copied with process_vm_readv, so a block freed and unmapped
// meanwhile, or a module unloaded, reads as false, never a fault; what a block held when it was
// read may be stale (types at a watermark are a best-effort snapshot). Reads are served from two
// windows of up to kWindow bytes each (one copy per window instead of one system call per word):
// a refresh reads blocks in address order, so one window follows the heap while the other holds
// the module data (vtables, typeinfo, descriptors) last read. No allocation after construction;
// one thread at a time. May include heap/, roots/ and scanner/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph::scanner::types {

class LiveMemory {
 public:
  static constexpr size_t kWindow = 64 * 1024;

  LiveMemory();
  ~LiveMemory();
  LiveMemory(const LiveMemory&) = delete;
  LiveMemory& operator=(const LiveMemory&) = delete;

  // Copies [address, address + length) of this process into `out`; false if any byte of it is
  // not mapped readable now.
  bool Read(uint64_t address, void* out, size_t length);

  // Copies read with a system call (window fills and direct reads), for tests and benchmarks.
  uint64_t copies() const { return copies_; }

 private:
  struct Window {
    uint64_t begin = 0;
    uint64_t length = 0;  // 0: empty
    unsigned char* bytes = nullptr;
    uint64_t used = 0;  // the read count when it was last used (the older one is refilled)
  };

  static bool Copy(uint64_t address, void* out, size_t length, size_t* got);
  bool Fill(Window& w, uint64_t address, size_t length);

  Window windows_[2];
  uint64_t reads_ = 0;
  uint64_t copies_ = 0;
};

}  // namespace heapgraph::scanner::types
