// heap/store/: the per-process recording directory <root>/<pid>-<start ticks>/. Created without
// following symlinks, mode 0700, inside a root that must belong to the current user and not be
// writable by others (unless it is a sticky directory such as /tmp, where only our own subdirectory
// is used). Uses libc syscalls only (callable from the first allocation hook).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph {

class RecordingDirectory {
 public:
  static constexpr size_t kMaxPath = 600;
  // Spares: directories of pruned runs that DumpRetention parked for reuse, as kSparePrefix + a
  // slot number below kSpareSlots, holding only parked files (MappedFile::kReusePrefix). A new
  // recording takes one over by renaming it (no inode allocated for the directory nor its files),
  // which on a file system that frees inodes slowly (ext4 without a journal skips recently
  // deleted inodes one by one) is much cheaper than deleting and creating them again.
  static constexpr char kSparePrefix[] = ".spare.";
  static constexpr uint32_t kSpareSlots = 4;

  // Opens (creating as needed) `root` ("" = $TMPDIR/heapgraph-<uid> or /tmp/heapgraph-<uid>) and
  // creates this process's directory in it. On failure returns false and fills `error` with a
  // one-line reason.
  bool Create(const char* root, char* error, size_t error_size);

  // Fork support, child side: this process's own empty directory "<pid>-<ticks>" in the root of
  // `this` (the directory it inherited from its parent), which `child` then names; it shares this
  // one's root descriptor. False (errno set) when it cannot be made.
  bool CreateForForkedChild(RecordingDirectory* child) const;
  // Closes the directory descriptor (a forked child's copy of its parent's directory).
  void CloseDirectory();

  // Parses a recording directory's name: "<pid>-<start ticks>", decimal, pid > 0, with the
  // ".<n>" appended when the name was taken (a pid reused within one clock tick, or a forked
  // child's recording before the program it exec'd). False for anything else (the
  // "<pid>-fork-<n>" staging directories of older versions included). No allocation.
  static bool ParseName(const char* name, uint32_t* pid, uint64_t* ticks);
  // mkdir -p of a root, mode 0700 for the components it creates; false (errno set) on failure.
  // No allocation.
  static bool MakeRoot(const char* path);

  int fd() const { return fd_; }
  const char* path() const { return path_; }
  const char* name() const { return name_; }  // "<pid>-<ticks>" inside the root
  int root_fd() const { return root_fd_; }

 private:
  static constexpr size_t kMaxName = 64;

  bool OpenRoot(const char* root, char* error, size_t error_size);
  // mkdirat + openat of `name` in the root; false (errno set) if it exists or cannot be made.
  bool MakeDirectory(const char* name);
  // Makes "<pid>-<ticks>[.<n>]" for the current process in the open root, taking over a spare
  // when there is one; false (errno set).
  bool MakeOwnDirectory();
  // Renames a spare to `name` and opens it; false when no spare could be taken.
  bool ClaimSpare(const char* name);
  void SetName(const char* name);

  int root_fd_ = -1;
  int fd_ = -1;
  char root_path_[kMaxPath] = "";  // ends with '/'
  char name_[kMaxName] = "";
  char path_[kMaxPath] = "";
};

}  // namespace heapgraph
