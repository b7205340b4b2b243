// tests/programs: the stack oracle (libhg_stack_oracle.so), a test-only malloc interposer preloaded
// BEFORE libheapgraph.so (LD_PRELOAD=libhg_stack_oracle.so:libheapgraph.so). Its malloc, calloc,
// realloc, posix_memalign, aligned_alloc and memalign are the entry points the program calls; one
// call in HG_ORACLE_EVERY (default 16) is sampled: before forwarding to the next definition
// (libheapgraph.so's, found with dlsym(RTLD_NEXT)) it takes a full reference unwind with libgcc's
// DWARF unwinder (_Unwind_Backtrace: an unwinder independent of libunwind, no trace cache), then
// publishes (returned block, reference frames) into the file <HG_ORACLE_FILE>.<pid>
// (StackOracle.h), up to HG_ORACLE_SAMPLES (default 12000) samples. A sampled block is never
// freed: the oracle's free drops it and its realloc copies it into a new block, so it stays live in
// the recording and its address is never reused. The oracle's own frames are left out of the
// reference; the recorder sees exactly one of them (the return address of the oracle's call into
// libheapgraph.so's function) on top of the program's frames.
//
// Inside the host: no malloc of its own (the file is mapped; early dlsym allocations come from a
// static arena), a thread-local guard against recursion (the unwinder may allocate); a forked
// child samples into <HG_ORACLE_FILE>.<child pid>.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unwind.h>

// libgcc's FDE lookup (unwind-dw2-fde.h, not installed).
struct dwarf_eh_bases {
  void* tbase;
  void* dbase;
  void* func;
};
extern "C" const void* _Unwind_Find_FDE(void* pc, dwarf_eh_bases* bases);

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "StackOracle.h"

namespace {

using MallocFn = void* (*)(size_t);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);
using FreeFn = void (*)(void*);
using PosixMemalignFn = int (*)(void**, size_t, size_t);
using AlignedFn = void* (*)(size_t, size_t);
using UsableFn = size_t (*)(void*);

MallocFn next_malloc;
CallocFn next_calloc;
ReallocFn next_realloc;
FreeFn next_free;
PosixMemalignFn next_posix_memalign;
AlignedFn next_aligned_alloc;
AlignedFn next_memalign;
UsableFn next_usable_size;

__thread bool t_busy __attribute__((tls_model("initial-exec")));
std::atomic<int> g_resolving{0};

// Allocations made while dlsym resolves the next definitions: never freed.
alignas(64) char g_arena[64 * 1024];
std::atomic<size_t> g_arena_used{0};

bool InArena(const void* p) {
  auto* c = static_cast<const char*>(p);
  return c >= g_arena && c < g_arena + sizeof(g_arena);
}

void* ArenaAlloc(size_t size) {
  size_t rounded = (size + 63) & ~size_t{63};
  size_t at = g_arena_used.fetch_add(rounded);
  if (at + rounded > sizeof(g_arena)) return nullptr;
  return g_arena + at;  // zero: static storage, never reused
}

// The oracle's own object, whose frames are left out of the reference.
uintptr_t g_self_begin;
uintptr_t g_self_end;
// The object of the next malloc (libheapgraph.so), whose own allocations are flagged.
uintptr_t g_next_begin;
uintptr_t g_next_end;

// Sampled addresses, open addressing in an anonymous mapping (free() asks it on every call).
constexpr size_t kSetSlots = size_t{1} << 17;
std::atomic<uint64_t>* g_set;

hgoracle::Header* g_header;
hgoracle::Sample* g_samples;
std::atomic<bool> g_sampling{false};

void* RawMap(size_t length, int fd) {
  long r = syscall(SYS_mmap, nullptr, length, PROT_READ | PROT_WRITE,
                   fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED, fd, 0);
  return r < 0 && r > -4096 ? nullptr : reinterpret_cast<void*>(r);
}

uint32_t EnvNumber(const char* name, uint32_t fallback) {
  const char* text = getenv(name);
  if (text == nullptr || *text == 0) return fallback;
  unsigned long value = strtoul(text, nullptr, 10);
  return value == 0 ? fallback : static_cast<uint32_t>(value);
}

void OpenFile();

// A forked child samples into a file of its own (<HG_ORACLE_FILE>.<child pid>); the set of
// sampled blocks, inherited, still keeps the parent's samples from being freed.
void ReopenInChild() {
  g_sampling.store(false);
  OpenFile();
}

// The output file <HG_ORACLE_FILE>.<pid>, mapped shared; no sampling without it.
void OpenFile() {
  const char* prefix = getenv("HG_ORACLE_FILE");
  if (prefix == nullptr || *prefix == 0) return;
  char path[4096];
  snprintf(path, sizeof(path), "%s.%d", prefix, static_cast<int>(getpid()));
  uint32_t capacity = EnvNumber("HG_ORACLE_SAMPLES", 12000);
  size_t length = sizeof(hgoracle::Header) + size_t{capacity} * sizeof(hgoracle::Sample);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  void* map = ftruncate(fd, static_cast<off_t>(length)) == 0 ? RawMap(length, fd) : nullptr;
  close(fd);
  if (g_set == nullptr) {
    g_set = static_cast<std::atomic<uint64_t>*>(RawMap(kSetSlots * sizeof(uint64_t), -1));
  }
  if (map == nullptr || g_set == nullptr) return;
  g_header = static_cast<hgoracle::Header*>(map);
  memcpy(g_header->magic, hgoracle::kMagic, sizeof(g_header->magic));
  g_header->capacity = capacity;
  g_header->sample_size = sizeof(hgoracle::Sample);
  g_header->every = EnvNumber("HG_ORACLE_EVERY", 16);
  g_samples = reinterpret_cast<hgoracle::Sample*>(g_header + 1);
  static bool registered = false;
  if (!registered) pthread_atfork(nullptr, nullptr, &ReopenInChild);
  registered = true;
  g_sampling.store(true);
}

void FindObject(void* address, uintptr_t* begin, uintptr_t* end) {
  struct dl_find_object found;
  if (_dl_find_object(address, &found) == 0) {
    *begin = reinterpret_cast<uintptr_t>(found.dlfo_map_start);
    *end = reinterpret_cast<uintptr_t>(found.dlfo_map_end);
  }
}

// Resolves the next definitions once; allocations dlsym makes meanwhile come from the arena.
__attribute__((noinline)) void Resolve() {
  if (g_resolving.exchange(1) != 0) return;
  next_malloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "malloc"));
  next_calloc = reinterpret_cast<CallocFn>(dlsym(RTLD_NEXT, "calloc"));
  next_realloc = reinterpret_cast<ReallocFn>(dlsym(RTLD_NEXT, "realloc"));
  next_posix_memalign = reinterpret_cast<PosixMemalignFn>(dlsym(RTLD_NEXT, "posix_memalign"));
  next_aligned_alloc = reinterpret_cast<AlignedFn>(dlsym(RTLD_NEXT, "aligned_alloc"));
  next_memalign = reinterpret_cast<AlignedFn>(dlsym(RTLD_NEXT, "memalign"));
  next_usable_size = reinterpret_cast<UsableFn>(dlsym(RTLD_NEXT, "malloc_usable_size"));
  next_free = reinterpret_cast<FreeFn>(dlsym(RTLD_NEXT, "free"));  // last: Ready() tests it
  FindObject(reinterpret_cast<void*>(&FindObject), &g_self_begin, &g_self_end);
  FindObject(reinterpret_cast<void*>(next_malloc), &g_next_begin, &g_next_end);
  OpenFile();
}

bool Ready() {
  if (next_free == nullptr) Resolve();
  return next_free != nullptr;
}

struct Walk {
  hgoracle::Sample* sample;
  bool skipping = true;
  uintptr_t last_lookup = 0;  // where the last frame's FDE is looked up
};

_Unwind_Reason_Code Collect(_Unwind_Context* context, void* arg) {
  auto* walk = static_cast<Walk*>(arg);
  uintptr_t ip = _Unwind_GetIP(context);
  // libgcc reports the frame past the outermost one (_start, clone3: return address undefined)
  // with IP 0: the stack ends there.
  if (ip == 0) return _URC_END_OF_STACK;
  if (walk->skipping && ip >= g_self_begin && ip < g_self_end) return _URC_NO_REASON;
  walk->skipping = false;
  hgoracle::Sample* sample = walk->sample;
  if (sample->depth == hgoracle::kFrames) {
    sample->more = 1;
    return _URC_END_OF_STACK;
  }
  sample->frames[sample->depth++] = ip;
  if (ip >= g_next_begin && ip < g_next_end) sample->next_library = 1;
  int before_instruction = 0;  // 1 for a frame interrupted by a signal: its IP is the instruction
  _Unwind_GetIPInfo(context, &before_instruction);
  walk->last_lookup = before_instruction != 0 ? ip : ip - 1;
  return _URC_NO_REASON;
}

void Remember(uint64_t address) {
  uint64_t slot = (address >> 4) * 0x9e3779b97f4a7c15ull >> 47;
  for (size_t probe = 0; probe < kSetSlots; ++probe) {
    std::atomic<uint64_t>& entry = g_set[(slot + probe) & (kSetSlots - 1)];
    uint64_t expected = 0;
    if (entry.compare_exchange_strong(expected, address) || expected == address) return;
  }
}

bool Sampled(const void* p) {
  if (g_set == nullptr || p == nullptr) return false;
  auto address = reinterpret_cast<uint64_t>(p);
  uint64_t slot = (address >> 4) * 0x9e3779b97f4a7c15ull >> 47;
  for (size_t probe = 0; probe < kSetSlots; ++probe) {
    uint64_t entry = g_set[(slot + probe) & (kSetSlots - 1)].load(std::memory_order_acquire);
    if (entry == address) return true;
    if (entry == 0) return false;
  }
  return false;
}

// A sample for this call, its reference stack taken; null when the call is not sampled.
__attribute__((noinline)) hgoracle::Sample* Begin(uint32_t function) {
  if (!g_sampling.load(std::memory_order_relaxed) || t_busy) return nullptr;
  auto* calls = reinterpret_cast<std::atomic<uint64_t>*>(&g_header->calls);
  if (calls->fetch_add(1, std::memory_order_relaxed) % g_header->every != 0) return nullptr;
  auto* claimed = reinterpret_cast<std::atomic<uint32_t>*>(&g_header->claimed);
  uint32_t index = claimed->fetch_add(1);
  if (index >= g_header->capacity) return nullptr;
  hgoracle::Sample* sample = &g_samples[index];
  sample->function = function;
  t_busy = true;
  Walk walk{sample};
  _Unwind_Backtrace(&Collect, &walk);
  dwarf_eh_bases bases;
  sample->unwind_info_ends =
      sample->depth != 0 && sample->more == 0 &&
      _Unwind_Find_FDE(reinterpret_cast<void*>(walk.last_lookup), &bases) == nullptr;
  t_busy = false;
  return sample;
}

void Publish(hgoracle::Sample* sample, void* block) {
  if (sample == nullptr || block == nullptr) return;
  Remember(reinterpret_cast<uint64_t>(block));
  reinterpret_cast<std::atomic<uint64_t>*>(&sample->address)
      ->store(reinterpret_cast<uint64_t>(block), std::memory_order_release);
}

// aligned_alloc and memalign: inlined into each, which so keeps exactly one oracle frame.
__attribute__((always_inline)) inline void* SampledAligned(AlignedFn* next, uint32_t function,
                                                           size_t alignment, size_t size) {
  if (!Ready()) return nullptr;
  hgoracle::Sample* sample = Begin(function);
  void* p = (*next)(alignment, size);
  Publish(sample, p);
  return p;
}

}  // namespace

#define HG_ORACLE_ENTRY extern "C" __attribute__((visibility("default"), noinline))

HG_ORACLE_ENTRY void* malloc(size_t size) {
  if (!Ready()) return ArenaAlloc(size);
  hgoracle::Sample* sample = Begin(1);
  void* p = next_malloc(size);
  Publish(sample, p);
  return p;
}

HG_ORACLE_ENTRY void* calloc(size_t count, size_t size) {
  if (!Ready()) return ArenaAlloc(count * size);
  hgoracle::Sample* sample = Begin(2);
  void* p = next_calloc(count, size);
  Publish(sample, p);
  return p;
}

HG_ORACLE_ENTRY void free(void* p) {
  if (p == nullptr || InArena(p) || Sampled(p) || !Ready()) return;
  next_free(p);
}

HG_ORACLE_ENTRY void* realloc(void* old, size_t size) {
  if (!Ready()) return ArenaAlloc(size);
  hgoracle::Sample* sample = Begin(3);
  void* p;
  if (InArena(old) || Sampled(old)) {  // a block that must stay: copied, never given back
    size_t old_size = InArena(old) ? 0 : next_usable_size(old);
    p = next_malloc(size);
    if (p != nullptr) memcpy(p, old, old_size < size ? old_size : size);
  } else {
    p = next_realloc(old, size);
  }
  Publish(sample, p);
  return p;
}

HG_ORACLE_ENTRY int posix_memalign(void** out, size_t alignment, size_t size) {
  if (!Ready()) return 12;  // ENOMEM
  hgoracle::Sample* sample = Begin(4);
  int r = next_posix_memalign(out, alignment, size);
  Publish(sample, r == 0 ? *out : nullptr);
  return r;
}

HG_ORACLE_ENTRY void* aligned_alloc(size_t alignment, size_t size) {
  return SampledAligned(&next_aligned_alloc, 5, alignment, size);
}

HG_ORACLE_ENTRY void* memalign(size_t alignment, size_t size) {
  return SampledAligned(&next_memalign, 6, alignment, size);
}

HG_ORACLE_ENTRY size_t malloc_usable_size(void* p) {
  if (InArena(p)) return 0;
  return Ready() ? next_usable_size(p) : 0;
}
