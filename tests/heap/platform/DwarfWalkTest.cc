// tests/heap: DwarfWalk against libgcc's DWARF unwinder (_Unwind_Backtrace) from the same frame: on
// a plain stack, through a frame kept by rbp, on another thread, from a signal handler (through
// glibc's signal frame into the interrupted code), from a handler on an alternate signal stack;
// the stack pointers it gives are libgcc's CFAs. Code without an FDE: rbp == 0 ends the walk, a
// frame pointer into a protected page ends it without a fault, a frame-pointer chain is followed
// to the code's caller.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unwind.h>

#include <cstring>
#include <initializer_list>
#include <thread>
#include <vector>

#include "heap/platform/DwarfWalk.h"
#include "heap/platform/EhFrameRules.h"
#include "tests/CallChain.h"

namespace heapgraph {
namespace {

struct Frames {
  std::vector<uintptr_t> ips;
  std::vector<uintptr_t> sps;
};

Frames Libgcc() {
  Frames frames;
  _Unwind_Backtrace(
      [](_Unwind_Context* context, void* data) {
        int before = 0;
        uintptr_t ip = _Unwind_GetIPInfo(context, &before);
        if (ip == 0) return _URC_END_OF_STACK;
        auto* f = static_cast<Frames*>(data);
        f->ips.push_back(ip);
        f->sps.push_back(_Unwind_GetCFA(context));  // the CFA of the frame below: this one's sp
        return _URC_NO_REASON;
      },
      &frames);
  return frames;
}

struct Both {
  Frames walked;
  Frames libgcc;
};

// Both walks from one frame; their first frames differ (two calls), the callers' must not.
__attribute__((noinline)) Both WalkBoth() {
  Both both;
  FrameRegisters registers;
  HeapgraphCaptureCallerRegisters(&registers);
  uintptr_t ips[256], sps[256];
  int n = DwarfWalk::Walk(registers, ips, sps, 256);
  both.walked.ips.assign(ips, ips + n);
  both.walked.sps.assign(sps, sps + n);
  both.libgcc = Libgcc();
  asm volatile("" ::: "memory");
  return both;
}

// The walk's frames from its second on are libgcc's from the same return address on, with the
// same stack pointers.
void ExpectSameCallers(const Both& both) {
  const Frames& w = both.walked;
  const Frames& r = both.libgcc;
  ASSERT_GE(w.ips.size(), 2u);
  size_t start = 0;
  while (start < r.ips.size() && r.ips[start] != w.ips[1]) ++start;
  ASSERT_LT(start, r.ips.size()) << "libgcc lacks the caller's return address";
  EXPECT_EQ(std::vector<uintptr_t>(w.ips.begin() + 1, w.ips.end()),
            std::vector<uintptr_t>(r.ips.begin() + start, r.ips.end()));
  // libgcc's CFA in frame i's callback is frame i's stack pointer; its first frame's is the
  // callback's caller's, so compare from the second frame each.
  for (size_t i = 2, j = start + 1; i < w.sps.size() && j < r.sps.size(); ++i, ++j) {
    EXPECT_EQ(w.sps[i], r.sps[j]) << "frame " << i;
  }
}

Both Chain(int depth) {
  return testing_chain::Chain<&WalkBoth>(depth);
}

Both ThroughAlloca(int n) {
  return testing_chain::ThroughAlloca<&WalkBoth>(n);
}

TEST(DwarfWalkTest, GivesLibgccsFramesAndStackPointers) {
  for (int depth : {0, 4, 30}) ExpectSameCallers(Chain(depth));
  ExpectSameCallers(ThroughAlloca(33));
}

TEST(DwarfWalkTest, AThreadsWalkEndsAtItsOutermostFrame) {
  Both both;
  std::thread thread([&] { both = Chain(3); });
  thread.join();
  ExpectSameCallers(both);
  EXPECT_EQ(EhFrameRules::Find(both.walked.ips.back() - 1).kind, UnwindRule::kEnd);
}

Both in_handler;

void WalkInHandler(int) {
  in_handler = Chain(2);
}

__attribute__((noinline)) void Interrupted(bool alternate) {
  struct sigaction action {};
  action.sa_handler = WalkInHandler;
  action.sa_flags = alternate ? SA_ONSTACK : 0;
  ASSERT_EQ(sigaction(SIGUSR2, &action, nullptr), 0);
  in_handler = {};
  raise(SIGUSR2);
  signal(SIGUSR2, SIG_DFL);
}

TEST(DwarfWalkTest, CrossesASignalFrameIntoTheInterruptedCode) {
  Interrupted(false);
  ExpectSameCallers(in_handler);
  // The walk went on past the handler: into raise and up to this test.
  const auto here = reinterpret_cast<uintptr_t>(&Interrupted);
  uintptr_t begin = 0, end = 0;
  ASSERT_TRUE(EhFrameRules::FunctionRange(here, &begin, &end));
  bool reached = false;
  for (uintptr_t ip : in_handler.walked.ips) reached = reached || (ip > begin && ip <= end);
  EXPECT_TRUE(reached);
}

TEST(DwarfWalkTest, CrossesFromAnAlternateSignalStack) {
  static char area[64 * 1024];
  stack_t alternate{};
  alternate.ss_sp = area;
  alternate.ss_size = sizeof(area);
  stack_t old{};
  ASSERT_EQ(sigaltstack(&alternate, &old), 0);
  Interrupted(true);
  sigaltstack(&old, nullptr);
  const auto first_sp = in_handler.walked.sps.front();
  EXPECT_GE(first_sp, reinterpret_cast<uintptr_t>(area));
  EXPECT_LT(first_sp, reinterpret_cast<uintptr_t>(area) + sizeof(area));
  ExpectSameCallers(in_handler);
  EXPECT_GT(in_handler.walked.ips.size(), 8u);
}

// Code without unwind information in an executable anonymous page ("JIT code"): calls rdi, the
// C++ function that walks, with rbp set as each test needs.
class JitCode {
 public:
  explicit JitCode(const std::vector<uint8_t>& code) {
    page_ = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memcpy(page_, code.data(), code.size());
    mprotect(page_, 4096, PROT_READ | PROT_EXEC);
  }
  ~JitCode() { munmap(page_, 4096); }
  void Call(void (*function)()) { reinterpret_cast<void (*)(void (*)())>(page_)(function); }
  bool Holds(uintptr_t ip) const {
    auto begin = reinterpret_cast<uintptr_t>(page_);
    return ip > begin && ip <= begin + 4096;
  }

 private:
  void* page_;
};

Frames jit_walk;

__attribute__((noinline)) void WalkFromJit() {
  FrameRegisters registers;
  HeapgraphCaptureCallerRegisters(&registers);
  uintptr_t ips[256];
  jit_walk.ips.assign(ips, ips + DwarfWalk::Walk(registers, ips, nullptr, 256));
}

// push rbp; <set rbp>; call *rdi; pop rbp; ret
// (Built up by push_back: GCC 12 at -O2 took inserting into the one-byte vector for a write out
// of its bounds, -Warray-bounds, and failed the default build.)
std::vector<uint8_t> Jit(const std::vector<uint8_t>& set_rbp) {
  std::vector<uint8_t> code;
  code.reserve(set_rbp.size() + 5);
  code.push_back(0x55);
  for (uint8_t byte : set_rbp) code.push_back(byte);
  for (uint8_t byte : std::initializer_list<uint8_t>{0xff, 0xd7, 0x5d, 0xc3}) code.push_back(byte);
  return code;
}

TEST(DwarfWalkTest, CodeWithoutAnFdeAndRbpZeroEndsTheWalk) {
  JitCode jit(Jit({0x31, 0xed}));  // xor ebp, ebp
  jit.Call(&WalkFromJit);
  ASSERT_FALSE(jit_walk.ips.empty());
  EXPECT_TRUE(jit.Holds(jit_walk.ips.back()));
}

// On a stack of its own whose top page is PROT_NONE, the JIT code points rbp into that page: above
// the stack pointer, inside the walk's window, so only the checked read stands between the walk
// and a fault.
ucontext_t jit_context, test_context;
char* jit_stack = nullptr;
JitCode* jit_code = nullptr;

void RunJitOnItsStack() {
  jit_code->Call(&WalkFromJit);
}

TEST(DwarfWalkTest, AFramePointerIntoAProtectedPageEndsTheWalk) {
  constexpr size_t kStack = 256 * 1024, kPage = 4096;
  jit_stack = static_cast<char*>(
      mmap(nullptr, kStack + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(jit_stack, MAP_FAILED);
  ASSERT_EQ(mprotect(jit_stack + kStack, kPage, PROT_NONE), 0);
  std::vector<uint8_t> set = {0x48, 0xbd};  // movabs rbp, <the protected page>
  const auto address = reinterpret_cast<uintptr_t>(jit_stack + kStack + 64);
  for (int i = 0; i < 8; ++i) set.push_back(static_cast<uint8_t>(address >> (8 * i)));
  JitCode jit(Jit(set));
  jit_code = &jit;
  jit_walk = {};
  ASSERT_EQ(getcontext(&jit_context), 0);
  jit_context.uc_stack.ss_sp = jit_stack;
  jit_context.uc_stack.ss_size = kStack;
  jit_context.uc_link = &test_context;
  makecontext(&jit_context, &RunJitOnItsStack, 0);
  ASSERT_EQ(swapcontext(&test_context, &jit_context), 0);
  munmap(jit_stack, kStack + kPage);
  ASSERT_FALSE(jit_walk.ips.empty());
  EXPECT_TRUE(jit.Holds(jit_walk.ips.back()));
}

TEST(DwarfWalkTest, AFramePointerChainLeadsPastCodeWithoutAnFde) {
  JitCode jit(Jit({0x48, 0x89, 0xe5}));  // mov rbp, rsp
  jit.Call(&WalkFromJit);
  size_t at = 0;
  while (at < jit_walk.ips.size() && !jit.Holds(jit_walk.ips[at])) ++at;
  ASSERT_LT(at + 1, jit_walk.ips.size()) << "the walk ended at the JIT frame";
  // The next frame is the test body that called the page.
  uintptr_t begin = 0, end = 0;
  ASSERT_TRUE(EhFrameRules::FunctionRange(jit_walk.ips[at + 1] - 1, &begin, &end));
  EXPECT_GT(jit_walk.ips.size(), at + 3);
}

}  // namespace
}  // namespace heapgraph
