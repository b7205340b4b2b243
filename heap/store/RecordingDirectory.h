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

  // Opens (creating as needed) `root` ("" = $TMPDIR/heapgraph-<uid> or /tmp/heapgraph-<uid>) and
  // creates this process's directory in it. On failure returns false and fills `error` with a
  // one-line reason.
  bool Create(const char* root, char* error, size_t error_size);

  // Fork support, parent side: an empty directory "<pid>-fork-<n>" next to this one, for the
  // child to claim. The staging object shares this one's root descriptor.
  bool CreateForkStaging(RecordingDirectory* staging) const;
  // Fork support, child side: renames a staging directory to this process's own name.
  bool ClaimForCurrentProcess();
  // Closes the directory descriptor (the parent's copy of a staging directory).
  void CloseDirectory();

  // Parses a recording directory's name: "<pid>-<start ticks>", decimal, pid > 0, with the
  // ".<n>" a claim that found its name taken appends (ClaimForCurrentProcess). False for anything
  // else, a fork's unclaimed staging directory "<pid>-fork-<n>" included. No allocation.
  static bool ParseName(const char* name, uint32_t* pid, uint64_t* ticks);

  int fd() const { return fd_; }
  const char* path() const { return path_; }
  const char* name() const { return name_; }  // "<pid>-<ticks>" inside the root
  int root_fd() const { return root_fd_; }

 private:
  static constexpr size_t kMaxName = 64;

  bool OpenRoot(const char* root, char* error, size_t error_size);
  // mkdirat + openat of `name` in the root; false (errno set) if it exists or cannot be made.
  bool MakeDirectory(const char* name);
  void SetName(const char* name);

  int root_fd_ = -1;
  int fd_ = -1;
  char root_path_[kMaxPath] = "";  // ends with '/'
  char name_[kMaxName] = "";
  char path_[kMaxPath] = "";
};

}  // namespace heapgraph
