// heap/runtime/: what a recorded fork hands its child, and when the child writes its own
// recording directory. The parent, with every recorder lock held, copies the live-block trees and
// the module map into anonymous memory files (MappedFile::CopyToMemory: no directory entry, no
// inode on disk); the child maps them over its inherited mappings of the parent's files before it
// touches any lock word, so from its first hook it records into its own copy of exactly the heap
// it inherited. The child writes its directory (WriteDirectory: trees, modules, a hard link to the
// shared stack table) only once it turns out to live: at its first hook kDeferNs after the fork or
// after kDeferHooks hooks, before it starts a thread, and before anything reads or names its
// recording (a check, heapgraph_recording_dir, exit). A child that calls exec first (a shell
// running a command) leaves nothing behind: its memory files close with the exec. The price: a
// child killed (SIGKILL, a crash) within its first kDeferNs leaves no recording.
// Invariant: until WriteDirectory the child never writes its parent's files (trees, modules; the
// session is not written either, only its shared sequence counter, so sequence numbers stay unique
// across both). Libc syscalls only; never allocates.
#pragma once

#include <cstdint>

#include "heap/store/LiveAllocationTree.h"
#include "heap/store/ModuleMap.h"
#include "heap/store/StackStore.h"
#include "heap/store/VmRegionTree.h"

namespace heapgraph {

class ForkSnapshot {
 public:
  static constexpr uint64_t kDeferNs = 20'000'000;  // 20 ms: a shell's child execs well before
  static constexpr uint32_t kDeferHooks = 4096;

  struct Stores {
    LiveAllocationTree* heap;
    VmRegionTree* vm;
    ModuleMap* modules;
    StackStore* stacks;
  };

  // Parent, before fork, with every lock of `stores` held. False when a copy failed (the child
  // then records nothing).
  bool Take(const Stores& stores);
  // Parent, after fork: closes its descriptors of the copies (the child holds its own).
  void Release();
  // Child, after fork, single-threaded: maps the copies (their locks are held: the copy was
  // taken under them; MappedFile::AdoptMemoryCopy) and starts the clock of DueToWrite. False: the
  // child still maps some of its parent's files and must never write them.
  bool AdoptInChild(const Stores& stores);
  // Child, on each hook before its directory exists: true once it has lived long enough.
  bool DueToWrite();
  // Child, single-threaded: writes the copies into its new directory `dir_fd` and maps them from
  // there; links the stack table from `stacks_dir_fd` (the parent's directory). False on failure
  // (the process keeps its memory copies mapped).
  static bool WriteDirectory(const Stores& stores, int dir_fd, int stacks_dir_fd);

 private:
  int heap_fd_ = -1;
  int vm_fd_ = -1;
  int modules_fd_ = -1;
  uint64_t forked_ns_ = 0;
  uint32_t hooks_ = 0;
};

}  // namespace heapgraph
