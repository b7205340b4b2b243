// heap/store/: one file of a recording directory, mapped MAP_SHARED so that every store lands in
// the page cache and survives a SIGKILL of the process. Uses raw syscalls only (callable from
// hooks).
#pragma once

#include <cstddef>
#include <cstdint>

#include "heap/platform/HighDescriptor.h"

struct stat;

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

  // A file parked for reuse in a recording directory taken over from a pruned run
  // (RecordingDirectory's spares): kReusePrefix + its name, empty, regular, one link.
  static constexpr char kReusePrefix[] = ".reuse.";

  // Creates `name` in the directory `dir_fd` (must not exist; no symlink is followed; mode 0600),
  // gives it `size` bytes (sparse) and maps it. A parked kReusePrefix + `name` in the directory is
  // renamed to `name` and used instead of a new file (no inode allocated). Returns false with
  // errno set on failure.
  bool Create(int dir_fd, const char* name, uint64_t size);

  // Makes sure [offset, offset + length) has disk blocks, so that stores into it cannot raise
  // SIGBUS on a full file system. False if the file system refused (ENOSPC, ...). File systems
  // without fallocate, and a descriptor the host closed or reused, are accepted as they are
  // (the mapping keeps working; only the reservation is skipped).
  bool Reserve(uint64_t offset, uint64_t length);

  // Writes a new file `name` in `dir_fd` of the same size holding `ranges` of the current
  // contents (the rest stays sparse), with those ranges reserved.
  bool CopyTo(int dir_fd, const char* name, const Range* ranges, size_t range_count) const;
  // Fork support, parent side: the same copy in an anonymous memory file (memfd, close-on-exec:
  // no directory entry, no inode on disk, gone when the last descriptor and mapping are). Returns
  // its descriptor, or -1 (errno set).
  int CopyToMemory(const char* name, const Range* ranges, size_t range_count) const;
  // Maps the existing file `name` in `dir_fd` (made by CopyTo) over the same addresses, so this
  // process stops writing the file it mapped before (a forked child: the one it shares with its
  // parent; a child writing its own directory: its memory copy).
  bool Adopt(int dir_fd, const char* name);
  // The same for an open descriptor of a file of this size (taken over: closed on failure).
  bool AdoptDescriptor(int fd);
  // Fork support, child side: the same for a memory copy (CopyToMemory's), which takes over this
  // file's descriptor number (HighDescriptor::TakeOver) in four system calls: no host code ran
  // since the fork, so nothing but the size is checked, and a memory file needs no read-ahead
  // advice. Taken over: closed on failure.
  bool AdoptMemoryCopy(int fd);

  // Flushes dirty pages to the file system (not needed for kill survival; for power loss).
  void Sync() const;

  void Unmap();

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_.fd(); }
  // fd() if it is still this file's (the host may have closed and reused the number), else -1.
  int OwnFd() const { return fd_.StillOurs() ? fd_.fd() : -1; }

 private:
  static bool OpenNew(int dir_fd, const char* name, uint64_t size, int* fd_out);
  // The parked kReusePrefix + `name`, renamed to `name` and opened when it is empty, regular and
  // has one link; else -1 (and a bad parked file is removed).
  static int TakeParked(int dir_fd, const char* name);
  // Maps `fd`, a file of this size (its stat in `st`), over the same addresses; false (fd closed)
  // when it has another size or cannot be mapped.
  bool MapOver(int fd, struct stat* st);
  // Writes `ranges` of the mapping into `fd` at the same offsets; `reserve`: fallocate them first.
  bool CopyRanges(int fd, const Range* ranges, size_t range_count, bool reserve) const;
  void AdviseRandom() const;

  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  // Held at a high number and checked before each fallocate: a host that closes and reuses low
  // descriptors (closefrom(3)) never gets heapgraph's reservations.
  HighDescriptor fd_;
  bool fallocate_unsupported_ = false;
};

}  // namespace heapgraph
