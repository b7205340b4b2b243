// tests/heap: ForkSnapshot with a real fork: the child records into memory copies of exactly the
// parent's state at the fork (its stores never reach the parent's files, nor the parent's its
// copies), writes its own directory from them with the stack table linked (copied when the
// parent's name for it is gone), and its later stores reach that directory. DueToWrite
// turns true after kDeferHooks hooks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "heap/runtime/ForkSnapshot.h"
#include "heap/store/PersistedFormat.h"
#include "reader/RecordingReader.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

BlockRecord MallocBlock(uint64_t address, uint64_t size) {
  BlockRecord b;
  b.address = address;
  b.size = size;
  b.function = format::AllocFunction::kMalloc;
  return b;
}

bool Has(const RecordingReader& reader, uint64_t address, uint64_t size) {
  for (const LiveBlock& block : reader.blocks()) {
    if (block.address == address) return block.size == size;
  }
  return false;
}

struct Recording {
  LiveAllocationTree heap;
  VmRegionTree vm;
  ModuleMap modules;
  StackStore stacks;

  bool Create(int dir_fd) {
    return heap.Create(dir_fd, format::kHeapTreeFile, 4, 12) &&
           vm.Create(dir_fd, format::kVmTreeFile, 1, 10) &&
           modules.Create(dir_fd, format::kModuleFile) &&
           stacks.Create(dir_fd, format::kStackFile, 12, 8);
  }
  ForkSnapshot::Stores Stores() { return {&heap, &vm, &modules, &stacks}; }
  void LockAll() {
    modules.Lock();
    heap.LockAll();
    vm.LockAll();
  }
  void UnlockAll() {
    vm.UnlockAll();
    heap.UnlockAll();
    modules.Unlock();
  }
};

// Child side; returns its exit code (0: every step held).
int Child(Recording& r, ForkSnapshot& snapshot, int own_dir_fd, int parent_dir_fd,
          bool unlink_parents_stacks) {
  if (!snapshot.AdoptInChild(r.Stores())) return 10;
  r.modules.Unlock();
  r.heap.ReleaseCopiedLocks();
  r.vm.ReleaseCopiedLocks();
  if (!r.heap.Insert(MallocBlock(0x2000, 22))) return 11;  // into the memory copy
  if (!r.heap.Remove(0x1000, nullptr)) return 12;
  uintptr_t frames[2] = {0x1234, 0x5678};
  if (r.stacks.Intern(frames, 2) == 0) return 13;
  if (unlink_parents_stacks && unlinkat(parent_dir_fd, format::kStackFile, 0) != 0) return 14;
  if (!ForkSnapshot::WriteDirectory(r.Stores(), own_dir_fd, parent_dir_fd)) return 15;
  if (!r.heap.Insert(MallocBlock(0x3000, 33))) return 16;  // into the child's own file
  return 0;
}

void RunFork(bool unlink_parents_stacks) {
  TempDir parent_dir, child_dir;
  Recording r;
  ASSERT_TRUE(r.Create(parent_dir.fd()));
  ASSERT_TRUE(r.heap.Insert(MallocBlock(0x1000, 11)));
  ForkSnapshot snapshot;
  r.LockAll();
  ASSERT_TRUE(snapshot.Take(r.Stores()));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(Child(r, snapshot, child_dir.fd(), parent_dir.fd(), unlink_parents_stacks));
  snapshot.Release();
  r.UnlockAll();
  ASSERT_TRUE(r.heap.Insert(MallocBlock(0x4000, 44)));  // the parent's, after the fork
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status)) << status;
  ASSERT_EQ(0, WEXITSTATUS(status)) << "child step failed";

  if (!unlink_parents_stacks) {  // else the parent's directory has no stack table to read
    RecordingReader parent(parent_dir.path());
    EXPECT_TRUE(Has(parent, 0x1000, 11)) << "the child's free reached the parent";
    EXPECT_TRUE(Has(parent, 0x4000, 44));
    EXPECT_FALSE(Has(parent, 0x2000, 22)) << "the child's block reached the parent";
    EXPECT_FALSE(Has(parent, 0x3000, 33));
  }

  RecordingReader child(child_dir.path());
  EXPECT_FALSE(Has(child, 0x1000, 11));
  EXPECT_TRUE(Has(child, 0x2000, 22)) << "recorded in the memory copy, written out";
  EXPECT_TRUE(Has(child, 0x3000, 33)) << "recorded after the directory was written";
  EXPECT_FALSE(Has(child, 0x4000, 44)) << "the parent's block after the fork";
  struct stat stacks;
  ASSERT_EQ(0, fstatat(child_dir.fd(), format::kStackFile, &stacks, 0));
  struct stat shared;
  ASSERT_EQ(0, fstat(r.stacks.file().fd(), &shared));
  if (unlink_parents_stacks) {
    EXPECT_NE(shared.st_ino, stacks.st_ino) << "no name to link: a copy";
    EXPECT_EQ(shared.st_size, stacks.st_size);
    RecordingReader copy(child_dir.path());
    EXPECT_EQ(r.stacks.node_count(), copy.stack_stats().node_count);
  } else {
    EXPECT_EQ(shared.st_ino, stacks.st_ino) << "the stack table is linked, not copied";
  }
  for (const char* name : {format::kHeapTreeFile, format::kVmTreeFile, format::kModuleFile}) {
    struct stat st;
    EXPECT_EQ(0, fstatat(child_dir.fd(), name, &st, 0)) << name;
  }
}

TEST(ForkSnapshotTest, ChildRecordsIntoItsCopyThenWritesItsOwnDirectory) {
  RunFork(false);
}

TEST(ForkSnapshotTest, StackTableIsCopiedWhenItHasNoNameLeft) {
  RunFork(true);
}

TEST(ForkSnapshotTest, ReleaseWithoutTakeAndAdoptWithoutCopiesFail) {
  TempDir dir;
  Recording r;
  ASSERT_TRUE(r.Create(dir.fd()));
  ForkSnapshot snapshot;
  snapshot.Release();
  EXPECT_FALSE(snapshot.AdoptInChild(r.Stores()));
  ASSERT_TRUE(r.heap.Insert(MallocBlock(0x1000, 11))) << "the stores are still usable";
}

TEST(ForkSnapshotTest, DueToWriteAfterEnoughHooks) {
  TempDir dir;
  Recording r;
  ASSERT_TRUE(r.Create(dir.fd()));
  ForkSnapshot snapshot;
  r.LockAll();
  ASSERT_TRUE(snapshot.Take(r.Stores()));
  ASSERT_TRUE(snapshot.AdoptInChild(r.Stores()));  // in this process: the clock starts
  r.modules.Unlock();
  r.heap.ReleaseCopiedLocks();
  r.vm.ReleaseCopiedLocks();
  uint32_t hooks = 1;
  while (!snapshot.DueToWrite() && hooks < ForkSnapshot::kDeferHooks) ++hooks;
  EXPECT_LE(hooks, ForkSnapshot::kDeferHooks);
}

}  // namespace
}  // namespace heapgraph
