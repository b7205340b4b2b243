#include "scanner/UnreadablePages.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>

#include "roots/RawSyscall.h"

// glibc's own name for sigaction: libheapgraph.so interposes sigaction (heap/runtime/
// SessionInterposer.cc), and that hook is for the program's handlers.
extern "C" int __sigaction(int signal, const struct sigaction* action, struct sigaction* old);

namespace heapgraph::scanner::UnreadablePages {
namespace {

using roots::ProcessMappings;
namespace RawSyscall = roots::RawSyscall;

constexpr size_t kSlotBits = 13;
constexpr size_t kSlots = size_t{1} << kSlotBits;  // pages remembered, open addressing
constexpr size_t kProbes = 32;

// Shared with the clones made after Install (MAP_SHARED): the count and the pages counted.
struct Shared {
  uint64_t count;
  uint64_t pages[kSlots];  // page addresses; 0: empty
};

// Only addresses of the snapshot's own objects and mappings, never a block's: this variable is
// in a root (libheapgraph_scan.so's .bss).
struct State {
  const ProcessMappings* mappings = nullptr;
  const BlockIndex* blocks = nullptr;
  Shared* shared = nullptr;
  uint64_t page_size = 4096;
};
State g_state;

// True the first time any of the processes sharing `shared` meets `page` (or when the table is
// too crowded to tell).
bool FirstTime(Shared* shared, uint64_t page, uint64_t page_size) {
  uint64_t hash = (page / page_size) * 0x9E3779B97F4A7C15ull;
  size_t slot = static_cast<size_t>(hash >> (64 - kSlotBits));
  for (size_t i = 0; i < kProbes; ++i) {
    uint64_t* cell = &shared->pages[(slot + i) & (kSlots - 1)];
    uint64_t seen = __atomic_load_n(cell, __ATOMIC_ACQUIRE);
    if (seen == 0) {
      if (__atomic_compare_exchange_n(cell, &seen, page, false, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE)) {
        return true;
      }
    }
    if (seen == page) return false;
  }
  return true;
}

// Maps fresh zero pages over [begin, end) of this process. Readable and writable: the access that
// faulted cannot fault there again.
bool Replace(uint64_t begin, uint64_t end) {
  long r = RawSyscall::Call(SYS_mmap, static_cast<long>(begin), static_cast<long>(end - begin),
                            PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  return r == static_cast<long>(begin);
}

// Whether 8 bytes at `address` read now, asked without faulting.
bool ReadsNow(uint64_t address) {
  uint64_t word;
  return RawSyscall::ReadOwnMemory(address & ~uint64_t{7}, &word, sizeof(word));
}

// Makes the memory around `address` readable if it is the program's memory that the scan reads:
// a block, or a private readable mapping; [*begin, *end) is what changed. False if it is not, or
// cannot be made readable.
bool ReadableAround(uint64_t address, uint64_t* begin, uint64_t* end) {
  const State& s = g_state;
  const uint64_t page = address & ~(s.page_size - 1);
  const ProcessMappings::Mapping* m = s.mappings->Find(address);
  const uint32_t block = s.blocks->Find(address);
  if (block != BlockIndex::kNotFound && m != nullptr && !m->readable) {
    // A PROT_NONE part of the block: all of it at once, within the block. Its protection lifted
    // in this copy, its real contents are scanned; where they still cannot be read (a guard page
    // under it), zeros.
    const BlockRange& b = s.blocks->block(block);
    *begin = std::max<uint64_t>(m->start, b.begin & ~(s.page_size - 1));
    *end = std::min<uint64_t>(m->end, (b.begin + b.size + s.page_size - 1) & ~(s.page_size - 1));
    if (*begin >= *end) return false;
    long r = RawSyscall::Call(SYS_mprotect, static_cast<long>(*begin),
                              static_cast<long>(*end - *begin), PROT_READ);
    if (r == 0 && ReadsNow(address)) return true;
    *begin = page;
    *end = page + s.page_size;
    return Replace(*begin, *end);
  }
  // A guard page, a page past the end of a file, a page unmapped inside a block: one page.
  bool ours = block != BlockIndex::kNotFound || (m != nullptr && m->readable && !m->shared);
  if (!ours) return false;
  *begin = page;
  *end = page + s.page_size;
  if (Replace(*begin, *end)) return true;
  // A hugetlb mapping splits only at its own page size.
  for (uint64_t huge : {uint64_t{2} << 20, uint64_t{1} << 30}) {
    *begin = address & ~(huge - 1);
    *end = *begin + huge;
    if (m != nullptr && *begin >= m->start && *end <= m->end && Replace(*begin, *end)) return true;
  }
  return false;
}

// Not ours: the default action. A fault repeats when the handler returns; a sent signal, blocked
// while the handler runs, is delivered then.
void TakeDefaultAction(int signal, const siginfo_t* info) {
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  __sigaction(signal, &default_action, nullptr);
  if (info == nullptr || info->si_code <= 0) {
    RawSyscall::Tgkill(RawSyscall::Getpid(), RawSyscall::Gettid(), signal);
  }
}

void Handle(int signal, siginfo_t* info, void*) {
  uint64_t begin = 0, end = 0;
  // si_code > 0: raised by the kernel for a fault (not sent by kill or tgkill).
  if (info != nullptr && info->si_code > 0 && g_state.shared != nullptr &&
      ReadableAround(reinterpret_cast<uint64_t>(info->si_addr), &begin, &end)) {
    uint64_t fresh = 0;
    for (uint64_t page = begin; page < end; page += g_state.page_size) {
      fresh += FirstTime(g_state.shared, page, g_state.page_size) ? 1 : 0;
    }
    __atomic_fetch_add(&g_state.shared->count, fresh, __ATOMIC_RELAXED);
    return;  // the load runs again
  }
  TakeDefaultAction(signal, info);
}

sigjmp_buf* g_jump = nullptr;  // InstallJump's target

void Jump(int signal, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code > 0 && g_jump != nullptr) siglongjmp(*g_jump, 1);
  TakeDefaultAction(signal, info);
}

// Unblocks SIGSEGV and SIGBUS: a fault whose signal is blocked kills outright (the snapshot runs
// with the mask of the thread that asked for the check, the ptrace helper with most signals
// blocked).
void UnblockFaults() {
  uint64_t mask = (uint64_t{1} << (SIGSEGV - 1)) | (uint64_t{1} << (SIGBUS - 1));
  RawSyscall::Call(SYS_rt_sigprocmask, SIG_UNBLOCK, reinterpret_cast<long>(&mask), 0, sizeof(mask));
}

bool SetHandlers(void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction action = {};
  action.sa_sigaction = handler;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (__sigaction(SIGSEGV, &action, nullptr) != 0 || __sigaction(SIGBUS, &action, nullptr) != 0) {
    return false;
  }
  UnblockFaults();
  return true;
}

}  // namespace

bool InstallJump(sigjmp_buf* jump) {
  g_jump = jump;
  return SetHandlers(&Jump);
}

bool Install(const ProcessMappings& mappings, const BlockIndex& blocks) {
  long mapped = RawSyscall::Call(SYS_mmap, 0, sizeof(Shared), PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (RawSyscall::Failed(mapped)) return false;
  g_state.mappings = &mappings;
  g_state.blocks = &blocks;
  g_state.page_size = static_cast<uint64_t>(getpagesize());
  g_state.shared = reinterpret_cast<Shared*>(mapped);
  return SetHandlers(&Handle);
}

uint64_t Count() {
  return g_state.shared == nullptr ? 0 : __atomic_load_n(&g_state.shared->count, __ATOMIC_RELAXED);
}

}  // namespace heapgraph::scanner::UnreadablePages
