// heap/runtime/: the threads' stack caches (the hash of a stack's frames → its id in the stack
// table, direct-mapped), kept out of static TLS. Inside the thread's static-TLS state a 16 KiB
// cache cost every thread four page faults when it started, since glibc zeroes a new thread's
// static TLS and ld.so the main thread's: threads that never allocate (heapgraph's own session
// thread, the main thread of a /bin/true) paid them too (docs/performance.md, session 36).
// The caches are slots of one region reserved by the first Take (MAP_NORESERVE: a page is backed
// when a thread first writes it) and published to an UnwinderMappings registry, since they hold
// hashes and stack ids, never a pointer of the program's: a leak scan leaves them out of its roots.
// A slot is handed out from a lock-free stack of returned slots, else past the highest slot ever
// taken. An entry stays valid for any thread of the process (stack ids are never reused), so a
// returned cache is handed out again as it is: a new thread of a pool starts warm.
// No malloc and no lock: usable inside the hooks and in a forked child (a slot that one of the
// parent's other threads held is lost there). Full region or failed mmap: Take returns nullptr.
#pragma once

#include <atomic>
#include <cstdint>

namespace heapgraph {

class UnwinderMappings;

class StackCachePool {
 public:
  struct Entry {
    uint64_t hash;
    uint32_t id;  // 0: empty
  };
  static constexpr uint32_t kEntries = 1024;  // per cache, 16 KiB
  static constexpr uint32_t kSlots = 16384;   // caches in the region (256 MiB of address space)

  // Where Take publishes the region when it reserves it (null: nowhere). Set before any Take.
  void PublishTo(UnwinderMappings* registry) { registry_ = registry; }

  // A cache of kEntries entries for the calling thread: zero-filled, or as its last thread left
  // it. nullptr when the region is full or cannot be reserved.
  Entry* Take();
  // Gives back a cache that Take returned (its thread is exiting).
  void Give(Entry* cache);

 private:
  static constexpr uint64_t kCacheBytes = kEntries * sizeof(Entry);
  static constexpr uint64_t kRegionBytes = kSlots * kCacheBytes;

  Entry* Reserve();
  Entry* Cache(uint32_t slot) const {
    return region_.load(std::memory_order_acquire) + slot * kEntries;
  }

  UnwinderMappings* registry_ = nullptr;
  std::atomic<Entry*> region_{nullptr};
  std::atomic<uint32_t> next_unused_{0};
  // The returned slots: (pops << 32) | (1 + top slot), the low half 0 when empty; the count of
  // pops makes a pop's compare-and-swap fail when the stack changed under it (ABA).
  std::atomic<uint64_t> returned_{0};
  std::atomic<uint32_t> next_[kSlots] = {};  // 1 + the slot below in the stack, 0: none
};

}  // namespace heapgraph
