// heap/: one file of a recording directory, mapped MAP_SHARED so that every store lands in the page
// cache and survives a SIGKILL of the process. Uses raw syscalls only (callable from hooks).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph {

class MappedFile {
 public:
  struct Range {
    uint64_t offset;
    uint64_t length;
  };

  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Creates `name` in the directory `dir_fd` (must not exist; no symlink is followed; mode 0600),
  // gives it `size` bytes (sparse) and maps it. Returns false with errno set on failure.
  bool Create(int dir_fd, const char* name, uint64_t size);

  // Makes sure [offset, offset + length) has disk blocks, so that stores into it cannot raise
  // SIGBUS on a full file system. False if the file system refused (ENOSPC, ...). File systems
  // without fallocate are accepted as they are.
  bool Reserve(uint64_t offset, uint64_t length);

  // Fork support: creates `name` in `dir_fd`, copies `ranges` of the current contents into it,
  // and maps the new file over the same addresses, so the child stops writing the parent's file.
  bool MoveTo(int dir_fd, const char* name, const Range* ranges, size_t range_count);

  // Flushes dirty pages to the file system (not needed for kill survival; for power loss).
  void Sync() const;

  void Unmap();

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_; }

 private:
  bool OpenNew(int dir_fd, const char* name, uint64_t size, int* fd_out);

  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  int fd_ = -1;
  bool fallocate_unsupported_ = false;
};

}  // namespace heapgraph
