// heap/store/: the loaded-module map (path, build-id, load bias, PT_LOAD segments), kept in a
// MappedFile so that stacks in a recording can be turned into module + offset after the process is
// gone. Records are only appended or marked unloaded, never reused, so an address keeps meaning the
// module that was loaded when it was recorded. Uses dl_iterate_phdr; never allocates.
#pragma once

#include <link.h>

#include <atomic>
#include <cstdint>

#include "heap/store/MappedFile.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class ModuleMap {
 public:
  static constexpr uint32_t kDefaultCapacity = 2048;

  bool Create(int dir_fd, const char* name, uint32_t capacity = kDefaultCapacity);
  // Fork support (MappedFile::CopyTo / Adopt); CopyTo requires Lock().
  bool CopyTo(int dir_fd, const char* name) const;
  bool Adopt(int dir_fd, const char* name) { return file_.Adopt(dir_fd, name); }
  void Lock();
  void Unlock();

  // Re-reads the loader's list: appends new modules, marks vanished ones unloaded. Cheap when
  // nothing changed since the last call (the loader's add/remove counters are compared first).
  void Refresh();

  // The loaded module containing `address`, or null.
  const format::ModuleRecord* Find(uint64_t address) const;

  uint32_t count() const { return header_->count.load(std::memory_order_acquire); }
  const format::ModuleRecord& record(uint32_t i) const { return records_[i]; }

  const MappedFile& file() const { return file_; }

 private:
  struct Visit;
  static int OnModule(dl_phdr_info* info, size_t size, void* data);

  MappedFile file_;
  format::ModuleHeader* header_ = nullptr;
  format::ModuleRecord* records_ = nullptr;
  uint32_t capacity_ = 0;
  std::atomic<uint32_t> lock_{0};
  unsigned long long last_adds_ = ~0ull;
  unsigned long long last_subs_ = ~0ull;
};

}  // namespace heapgraph
