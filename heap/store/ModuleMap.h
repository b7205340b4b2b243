// heap/store/: the loaded-module map (path, build-id, load bias, PT_LOAD segments), kept in a
// MappedFile so that stacks in a recording can be turned into module + offset after the process is
// gone. Records are only appended or marked unloaded, never reused, so an address keeps meaning the
// module that was loaded when it was recorded.
// Modules are learned from the addresses the recorder stores (Learn: each stack with new frames)
// through LoadedObject, never through dl_iterate_phdr or dladdr: no call here waits for a lock of
// the dynamic loader, so the map is safe to update from an allocation hook that runs inside a
// dl_iterate_phdr callback or a dlopen constructor, and in a forked child whose parent's other
// thread held a loader lock at the fork. Never allocates. Invariant: a module holding one of the
// addresses passed to Learn has a loaded record describing that very load of the module.
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/platform/LoadedObject.h"
#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class ModuleMap {
 public:
  static constexpr uint32_t kDefaultCapacity = 2048;
  static constexpr uint32_t kMaxCapacity = 8192;

  bool Create(int dir_fd, const char* name, uint32_t capacity = kDefaultCapacity);
  // Fork support (MappedFile::CopyTo / CopyToMemory / Adopt); the copies require Lock().
  bool CopyTo(int dir_fd, const char* name) const;
  int CopyToMemory(const char* name) const;
  bool Adopt(int dir_fd, const char* name) { return file_.Adopt(dir_fd, name); }
  bool AdoptMemoryCopy(int fd) { return file_.AdoptMemoryCopy(fd); }
  void Lock();
  void Unlock();

  // For every address that lies in a loaded object (code, typically return addresses): appends a
  // record of that object unless this load of it has one, and marks unloaded the records it
  // replaces at the same addresses. Addresses in no object (heap, JIT code) are skipped.
  void Learn(const uintptr_t* addresses, uint32_t count);
  // Marks unloaded every loaded record whose module is no longer loaded (after a dlclose).
  void ForgetUnloaded();

  // The loaded module containing `address`, or null.
  const format::ModuleRecord* Find(uint64_t address) const;

  uint32_t count() const { return header_->count.load(std::memory_order_acquire); }
  const format::ModuleRecord& record(uint32_t i) const { return records_[i]; }

  const MappedFile& file() const { return file_; }
  // Bytes of the file with disk blocks: the header page and the records' pages so far.
  uint64_t ReservedBytes() const { return reserved_; }

 private:
  // Which load of an object a record describes (process memory, not in the file: a forked child
  // shares the parent's address space, so it inherits these with the records).
  struct Identity {
    const void* link_map;
    uintptr_t map_start;
  };

  bool IsKnown(const LoadedObject& object) const;
  void Append(const LoadedObject& object);
  bool ReserveRecord(uint32_t index);

  MappedFile file_;
  format::ModuleHeader* header_ = nullptr;
  format::ModuleRecord* records_ = nullptr;
  uint32_t capacity_ = 0;
  uint64_t reserved_ = 0;  // the file's first reserved_ bytes have disk blocks
  std::atomic<uint32_t> lock_{0};
  Identity identities_[kMaxCapacity] = {};
};

}  // namespace heapgraph
