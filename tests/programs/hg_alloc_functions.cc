// tests/programs: calls every interposed allocation function once or twice and prints
// "<name> <address> [value...]" for each result (InterposerFunctionsTest holds the expectations).
// Phase 1 allocates every block, phase 2 releases the ones that must be gone; after phase 2
// nothing allocates, so a released address cannot be handed out again before the test looks.
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <new>

#include "ProgramSupport.h"

// glibc's own free, which the recorder never sees (as a free it misses: a signal handler freeing
// while its thread is inside a hook).
extern "C" void __libc_free(void* address);

namespace {

using hgprog::Keep;
using hgprog::PrintAddress;

constexpr size_t kPage = 4096;
// Blocks whose every usable byte the program writes (malloc_usable_size must leave the recorder's
// tag out), then frees: the recorder must still find and remove each.
constexpr size_t kFilledSizes[] = {1, 16, 24, 40, 1000, 5000, 70000, 200000};
constexpr size_t kFilled = sizeof(kFilledSizes) / sizeof(kFilledSizes[0]);

// Inputs of phase 2, allocated in phase 1.
struct Pending {
  void* move_source;
  void* array_source;
  void* overflow_keep;
  void* zero_source;
  void* freed;
  void* freed_zero;
  int* deleted;
  int* deleted_array;
  void* filled[kFilled + 1];  // the last one from memalign
  void* missed;               // a block at the address of a free the recorder missed
};

__attribute__((noinline)) void* GrowInPlace() {
  for (int attempt = 0; attempt < 32; ++attempt) {
    void* p = malloc(5000);
    Keep(p);
    void* q = realloc(p, 6000);
    Keep(q);
    if (q == p) return q;
  }
  return nullptr;
}

// The recorded block at `missed_first` is freed behind the recorder's back; glibc's tcache hands
// the same chunk to the next malloc of that size, whose record must replace the stale one.
__attribute__((noinline)) void* MissAFree() {
  void* p = malloc(40);
  PrintAddress("missed_first", p);
  __libc_free(p);
  void* q = malloc(40);
  PrintAddress("missed_again", q);
  return q;
}

__attribute__((noinline)) void AllocateBasics() {
  void* p = malloc(100);
  Keep(p);
  PrintAddress("malloc", p);
  p = calloc(7, 13);
  Keep(p);
  PrintAddress("calloc", p);
  p = realloc(nullptr, 300);
  Keep(p);
  PrintAddress("realloc_null", p);
  p = GrowInPlace();
  PrintAddress("realloc_grow", p);
  p = reallocarray(nullptr, 10, 12);
  Keep(p);
  PrintAddress("reallocarray_null", p);
  p = malloc(0);
  Keep(p);
  PrintAddress("malloc0", p);
  p = malloc(1000);
  Keep(p);
  printf("usable %zu\n", malloc_usable_size(p));
}

__attribute__((noinline)) void AllocateAligned() {
  void* p = memalign(256, 100);
  Keep(p);
  PrintAddress("memalign", p);
  p = nullptr;
  int r = posix_memalign(&p, 64, 100);
  Keep(p);
  printf("posix_memalign_result %d\n", r);
  PrintAddress("posix_memalign", p);
  p = aligned_alloc(128, 256);
  Keep(p);
  PrintAddress("aligned_alloc", p);
  p = valloc(100);
  Keep(p);
  PrintAddress("valloc", p);
  p = pvalloc(100);
  Keep(p);
  PrintAddress("pvalloc", p);
}

// Alignments that are not powers of two (or, for posix_memalign, not multiples of a pointer).
__attribute__((noinline)) void TryBadAlignments() {
  void* untouched = &untouched;
  void* out = untouched;
  int r3 = posix_memalign(&out, 3, 100);
  int r4 = posix_memalign(&out, 4, 100);
  printf("posix_memalign_einval %d %d %d\n", r3, r4, out == untouched ? 1 : 0);
  volatile size_t three = 3;  // volatile: compilers reject a constant bad alignment
  errno = 0;
  void* p = aligned_alloc(three, 16);
  printf("aligned_alloc_einval %d %d\n", p == nullptr ? 1 : 0, errno);
}

__attribute__((noinline)) void AllocateWithNew() {
  auto* object = new long[6];  // 48 bytes
  Keep(object);
  PrintAddress("new_array", object);
  auto* single = new double(1.5);
  Keep(single);
  PrintAddress("new", single);
}

__attribute__((noinline)) Pending AllocatePending() {
  Pending p;
  p.move_source = malloc(64);
  void* blocker = malloc(64);  // the move source cannot grow in place
  Keep(blocker);
  p.array_source = malloc(10);
  void* blocker2 = malloc(10);
  Keep(blocker2);
  p.overflow_keep = malloc(64);
  p.zero_source = malloc(50);
  p.freed = malloc(77);
  p.freed_zero = malloc(0);
  p.deleted = new int(7);
  p.deleted_array = new int[10];
  p.missed = MissAFree();
  Keep(p.missed);
  for (size_t i = 0; i <= kFilled; ++i) {
    void* q = i < kFilled ? malloc(kFilledSizes[i]) : memalign(64, 24);
    size_t usable = malloc_usable_size(q);
    printf("usable_%zu %zu\n", i < kFilled ? kFilledSizes[i] : size_t{1024}, usable);
    memset(q, 0xff, usable);
    Keep(q);
    p.filled[i] = q;
  }
  for (void* q :
       {p.move_source, p.array_source, p.overflow_keep, p.zero_source, p.freed, p.freed_zero,
        static_cast<void*>(p.deleted), static_cast<void*>(p.deleted_array)}) {
    Keep(q);
  }
  return p;
}

__attribute__((noinline)) void ReleaseByRealloc(const Pending& p) {
  PrintAddress("realloc_move_old", p.move_source);
  void* moved = realloc(p.move_source, 100000);
  Keep(moved);
  PrintAddress("realloc_move", moved);
  PrintAddress("reallocarray_grow_old", p.array_source);
  void* grown = reallocarray(p.array_source, 20, 12);
  Keep(grown);
  PrintAddress("reallocarray_grow", grown);
  volatile size_t huge = SIZE_MAX / 2;  // volatile: the compiler must not see the overflow
  errno = 0;
  void* overflow = reallocarray(p.overflow_keep, huge, 3);
  printf("reallocarray_overflow %d %d\n", overflow == nullptr ? 1 : 0, errno);
  PrintAddress("reallocarray_overflow_keep", p.overflow_keep);
  errno = 0;
  void* failed = realloc(p.overflow_keep, huge);  // too large: fails, the block stays valid
  printf("realloc_fail %d %d\n", failed == nullptr ? 1 : 0, errno);
  errno = 0;
  failed = calloc(huge, 4);
  printf("calloc_overflow %d %d\n", failed == nullptr ? 1 : 0, errno);
  errno = 0;
  overflow = reallocarray(nullptr, huge, 8);
  printf("reallocarray_null_overflow %d %d\n", overflow == nullptr ? 1 : 0, errno);
  PrintAddress("realloc_zero_old", p.zero_source);
  void* zero = realloc(p.zero_source, 0);
  Keep(zero);
  PrintAddress("realloc_zero_result", zero);
}

__attribute__((noinline)) void ReleaseByFree(const Pending& p) {
  PrintAddress("freed", p.freed);
  errno = 1234;
  free(p.freed);
  printf("free_errno %d\n", errno);
  PrintAddress("freed_zero", p.freed_zero);
  free(p.freed_zero);
  PrintAddress("deleted", p.deleted);
  delete p.deleted;
  PrintAddress("deleted_array", p.deleted_array);
  delete[] p.deleted_array;
  free(p.missed);
  for (size_t i = 0; i <= kFilled; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "filled_%zu", i < kFilled ? kFilledSizes[i] : size_t{1024});
    PrintAddress(name, p.filled[i]);
    free(p.filled[i]);
  }
}

__attribute__((noinline)) void* MapAnonymous(size_t pages) {
  void* p =
      mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

__attribute__((noinline)) void MapFile() {
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  void* p = mmap(nullptr, kPage, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  PrintAddress("file_mmap", p == MAP_FAILED ? nullptr : p);
}

// Leaves three live anonymous mappings: whole, cut in the middle, partly moved by mremap. The cut
// leaves an enclosed 8-page hole that no later mapping fits in; the mremap comes last.
__attribute__((noinline)) void MapRegions() {
  MapFile();
  PrintAddress("mmap", MapAnonymous(16));
  auto* cut = static_cast<char*>(MapAnonymous(16));
  munmap(cut + 4 * kPage, 8 * kPage);
  PrintAddress("munmap_middle", cut);
  // The first 4 pages move: the other 6, still mapped, keep them from growing in place.
  auto* split = static_cast<char*>(MapAnonymous(10));
  void* moved = mremap(split, 4 * kPage, 32 * kPage, MREMAP_MAYMOVE);
  PrintAddress("mremap_old", split);
  PrintAddress("mremap", moved == MAP_FAILED ? nullptr : moved);
}

}  // namespace

int main() {
  hgprog::LineBufferedStdout();
  AllocateBasics();
  AllocateAligned();
  TryBadAlignments();
  AllocateWithNew();
  Pending pending = AllocatePending();
  MapRegions();
  ReleaseByRealloc(pending);
  ReleaseByFree(pending);
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  return 0;
}
