// tests/scanner: UnreadablePages in forked children of the test (it changes a process's memory
// and signal dispositions, as in a snapshot process): a PROT_NONE part of a block reads with its
// real contents, a guard page or a page past a file's end as zeros, each page counted once across
// the process and its clones; a fault anywhere else, or a signal sent by kill, still kills.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>

#include "scanner/UnreadablePages.h"

namespace heapgraph::scanner {
namespace {

using Blocks = std::vector<BlockRange, MmapAllocator<BlockRange>>;

const size_t kPageSize = static_cast<size_t>(sysconf(_SC_PAGESIZE));
constexpr int kMadvGuardInstall = 102;  // MADV_GUARD_INSTALL (Linux 6.13)

// Runs `body` in a forked child; its wait status. `body` returns the child's exit status.
int InChild(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return status;
}

// `pages` pages between two PROT_NONE pages (no merging with a neighbour).
char* Area(size_t pages) {
  void* p = mmap(nullptr, (pages + 2) * kPageSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  char* inner = static_cast<char*>(p) + kPageSize;
  if (mprotect(inner, pages * kPageSize, PROT_READ | PROT_WRITE) != 0) return nullptr;
  memset(inner, 0x7b, pages * kPageSize);
  return inner;
}

uint64_t Load(const char* at) {
  return *reinterpret_cast<const volatile uint64_t*>(at);
}

TEST(UnreadablePagesTest, AProtNonePartOfABlockReadsItsContentsCountedOnceAcrossClones) {
  int status = InChild([] {
    char* area = Area(8);
    if (area == nullptr) return 10;
    // The block: pages 1..6; pages 3 and 4 PROT_NONE (one mapping of their own).
    if (mprotect(area + 3 * kPageSize, 2 * kPageSize, PROT_NONE) != 0) return 11;
    roots::ProcessMappings mappings;
    if (!mappings.Read()) return 12;
    Blocks ranges;
    ranges.push_back({reinterpret_cast<uint64_t>(area + kPageSize), 6 * kPageSize});
    BlockIndex index(std::move(ranges));
    if (!UnreadablePages::Install(mappings, index)) return 13;
    pid_t clone = fork();  // reads first: the count is shared
    if (clone == 0) _exit(Load(area + 4 * kPageSize + 8) == 0x7b7b7b7b7b7b7b7bull ? 0 : 1);
    int clone_status = 0;
    waitpid(clone, &clone_status, 0);
    if (!WIFEXITED(clone_status) || WEXITSTATUS(clone_status) != 0) return 14;
    if (UnreadablePages::Count() != 2) return 15;  // both pages of the PROT_NONE part, once
    if (Load(area + 3 * kPageSize) != 0x7b7b7b7b7b7b7b7bull) return 16;
    if (UnreadablePages::Count() != 2) return 17;  // the same pages, made readable here too
    if (Load(area + 5 * kPageSize) != 0x7b7b7b7b7b7b7b7bull) return 18;  // the rest unchanged
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A guard page under a PROT_NONE part of a block: the part reads, the guard page as zeros.
TEST(UnreadablePagesTest, AGuardPageUnderAProtNonePartOfABlockReadsAsZeros) {
  int status = InChild([] {
    char* area = Area(8);
    if (area == nullptr) return 10;
    if (madvise(area + 4 * kPageSize, kPageSize, kMadvGuardInstall) != 0) return 77;  // before 6.13
    if (mprotect(area + 3 * kPageSize, 2 * kPageSize, PROT_NONE) != 0) return 11;
    roots::ProcessMappings mappings;
    if (!mappings.Read()) return 12;
    Blocks ranges;
    ranges.push_back({reinterpret_cast<uint64_t>(area), 8 * kPageSize});
    BlockIndex index(std::move(ranges));
    if (!UnreadablePages::Install(mappings, index)) return 13;
    if (Load(area + 3 * kPageSize + 16) != 0x7b7b7b7b7b7b7b7bull) return 14;
    if (Load(area + 4 * kPageSize + 16) != 0) return 15;
    return UnreadablePages::Count() == 2 ? 0 : 16;
  });
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "MADV_GUARD_INSTALL is not supported";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(UnreadablePagesTest, AGuardPageInAReadableMappingReadsAsZeros) {
  int status = InChild([] {
    char* area = Area(8);
    if (area == nullptr) return 10;
    if (madvise(area + 2 * kPageSize, kPageSize, kMadvGuardInstall) != 0) return 77;  // before 6.13
    roots::ProcessMappings mappings;
    if (!mappings.Read()) return 12;
    BlockIndex index(Blocks{});
    if (!UnreadablePages::Install(mappings, index)) return 13;
    if (Load(area + 2 * kPageSize + 128) != 0) return 14;
    if (Load(area + 3 * kPageSize) != 0x7b7b7b7b7b7b7b7bull) return 15;
    return UnreadablePages::Count() == 1 ? 0 : 16;
  });
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "MADV_GUARD_INSTALL is not supported";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(UnreadablePagesTest, PagesPastTheEndOfATruncatedFileReadAsZeros) {
  int status = InChild([] {
    char path[] = "/tmp/heapgraph-unreadable-test-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(4 * kPageSize)) != 0) return 10;
    auto* area = static_cast<char*>(
        mmap(nullptr, 4 * kPageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
    unlink(path);
    if (area == MAP_FAILED) return 11;
    area[0] = 1;
    if (ftruncate(fd, static_cast<off_t>(kPageSize)) != 0) return 12;
    roots::ProcessMappings mappings;
    if (!mappings.Read()) return 13;
    BlockIndex index(Blocks{});
    if (!UnreadablePages::Install(mappings, index)) return 14;
    if (Load(area + 2 * kPageSize) != 0 || Load(area + 3 * kPageSize + 8) != 0)
      return 15;  // SIGBUS
    if (area[0] != 1) return 16;
    return UnreadablePages::Count() == 2 ? 0 : 17;
  });
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Memory the snapshot never reads (here: mapped after the map was read, and address 0x10) is no
// program memory: its fault is not hidden.
TEST(UnreadablePagesTest, AFaultOutsideTheProgramsMemoryStillKills) {
  for (bool null_page : {false, true}) {
    int status = InChild([null_page] {
      roots::ProcessMappings mappings;
      if (!mappings.Read()) return 12;
      BlockIndex index(Blocks{});
      if (!UnreadablePages::Install(mappings, index)) return 13;
      void* later = mmap(nullptr, kPageSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (later == MAP_FAILED) return 14;
      const char* at = null_page ? reinterpret_cast<const char*>(uintptr_t{0x10})
                                 : static_cast<const char*>(later);
      return Load(at) == 0 ? 15 : 16;
    });
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), SIGSEGV);
  }
}

TEST(UnreadablePagesTest, ASignalSentByKillIsNotTakenForAFault) {
  int status = InChild([] {
    roots::ProcessMappings mappings;
    if (!mappings.Read()) return 12;
    BlockIndex index(Blocks{});
    if (!UnreadablePages::Install(mappings, index)) return 13;
    kill(getpid(), SIGBUS);
    return 14;
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGBUS);
}

}  // namespace
}  // namespace heapgraph::scanner
