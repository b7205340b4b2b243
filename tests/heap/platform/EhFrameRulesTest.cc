// tests/heap: EhFrameRules against libgcc's DWARF unwinder (_Unwind_Backtrace) on real frames of
// this binary, libstdc++ and glibc: for every frame of a live stack, the rule of its return
// address turns the callee's CFA (the frame's stack pointer) and rbp into the CFA libgcc computes,
// finds the next return address at CFA - 8 and the caller's rbp where libgcc finds it. Frames
// kept by rbp (alloca), the outermost frame of a thread (kEnd), a signal frame and code without
// an FDE (kNotSimple) give what the contract says.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unwind.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "heap/platform/EhFrameRules.h"

namespace heapgraph {
namespace {

struct Frame {
  uintptr_t ip;
  uintptr_t cfa;
  uintptr_t rbp;
  bool signal_frame;
};

std::vector<Frame> LibgccFrames() {
  std::vector<Frame> frames;
  _Unwind_Backtrace(
      [](_Unwind_Context* context, void* data) {
        int before = 0;
        uintptr_t ip = _Unwind_GetIPInfo(context, &before);
        if (ip == 0) return _URC_END_OF_STACK;  // past the outermost frame
        static_cast<std::vector<Frame>*>(data)->push_back(
            {ip, _Unwind_GetCFA(context), _Unwind_GetGR(context, 6), before != 0});
        return _URC_NO_REASON;
      },
      &frames);
  return frames;
}

// In libgcc's callback for frame i, _Unwind_GetCFA gives the CFA of the frame below (its callee),
// which is frame i's stack pointer, and _Unwind_GetGR frame i's registers. So frame i's rule must
// turn frames[i].cfa and frames[i].rbp into frames[i + 1].cfa, with frames[i + 1].ip at CFA - 8
// and frames[i + 1].rbp where the rule says. Only frames still live (stack pointer at or above
// `live_from`) are read. Returns how many frames were kSimple.
int ExpectRulesAgree(const std::vector<Frame>& frames, uintptr_t live_from) {
  int simple = 0;
  for (size_t i = 0; i + 1 < frames.size(); ++i) {
    const Frame& frame = frames[i];
    const Frame& caller = frames[i + 1];
    if (frame.signal_frame || frame.cfa < live_from)
      continue;  // interrupted, not calling: its rule is at ip, not ip - 1
    UnwindRule rule = EhFrameRules::Find(frame.ip - 1);
    if (rule.kind != UnwindRule::kSimple) continue;
    ++simple;
    uintptr_t cfa = (rule.cfa_from_rbp ? frame.rbp : frame.cfa) + rule.cfa_offset;
    EXPECT_EQ(cfa, caller.cfa) << "frame " << i;
    EXPECT_EQ(reinterpret_cast<const uintptr_t*>(cfa)[-1], caller.ip) << "frame " << i;
    if (rule.rbp_saved) {
      EXPECT_EQ(*reinterpret_cast<const uintptr_t*>(cfa + rule.rbp_offset), caller.rbp)
          << "frame " << i;
    } else {
      EXPECT_EQ(frame.rbp, caller.rbp) << "frame " << i;
    }
  }
  return simple;
}

// libgcc's frames, and how many of them had kSimple rules that agree, checked while the
// frames from the caller of the leaf on are live.
struct Checked {
  std::vector<Frame> frames;
  int simple = 0;
};

__attribute__((noinline)) Checked Leaf() {
  volatile char marker = 0;
  Checked checked;
  checked.frames = LibgccFrames();
  checked.simple = ExpectRulesAgree(checked.frames, reinterpret_cast<uintptr_t>(&marker));
  return checked;
}

// Keeps its frame by rbp: alloca of a run-time size.
__attribute__((noinline)) Checked WithAlloca(int n) {
  auto* scratch = static_cast<volatile char*>(__builtin_alloca(static_cast<size_t>(n) + 16));
  scratch[0] = 0;
  Checked checked = Leaf();
  asm volatile("" ::: "memory");
  return checked;
}

__attribute__((noinline)) Checked Chain(int depth) {
  Checked checked = depth == 0 ? WithAlloca(7) : Chain(depth - 1);
  asm volatile("" ::: "memory");
  return checked;
}

TEST(EhFrameRulesTest, RulesGiveLibgccsFramesOnARealStack) {
  Checked checked = Chain(6);
  ASSERT_GT(checked.frames.size(), 10u);
  EXPECT_GT(checked.simple, 8);
}

TEST(EhFrameRulesTest, AnAllocaFrameIsKeptByRbp) {
  Checked checked = WithAlloca(100);
  auto it = std::find_if(checked.frames.begin(), checked.frames.end(), [](const Frame& f) {
    UnwindRule rule = EhFrameRules::Find(f.ip - 1);
    return rule.kind == UnwindRule::kSimple && rule.cfa_from_rbp;
  });
  EXPECT_NE(it, checked.frames.end());
  EXPECT_GT(checked.simple, 3);
}

// Frames through libstdc++ (std::function's invoker) and glibc (the thread's start).
TEST(EhFrameRulesTest, RulesAgreeThroughLibstdcxxAndAThreadsOutermostFrameEnds) {
  Checked checked;
  std::thread thread([&] {
    std::function<void()> call = [&] { checked = Chain(3); };
    call();
  });
  thread.join();
  const std::vector<Frame>& frames = checked.frames;
  ASSERT_GT(frames.size(), 6u);
  EXPECT_GT(checked.simple, 5);
  // libgcc stops after the thread's outermost frame (clone3's child: return address undefined).
  EXPECT_EQ(EhFrameRules::Find(frames.back().ip - 1).kind, UnwindRule::kEnd);
}

std::vector<Frame> signal_frames;
// What the trampoline's rule names, read while the signal frame is still on the stack.
UnwindRule trampoline_rule;
uintptr_t named_words[3];  // rip, rsp, rbp of the interrupted frame, by trampoline_rule

void Handler(int) {
  signal_frames = LibgccFrames();
  auto interrupted = std::find_if(signal_frames.begin(), signal_frames.end(),
                                  [](const Frame& f) { return f.signal_frame; });
  if (interrupted == signal_frames.end() || interrupted == signal_frames.begin()) return;
  const Frame& trampoline = *(interrupted - 1);  // its cfa: the trampoline frame's stack pointer
  trampoline_rule = EhFrameRules::Find(trampoline.ip - 1);
  for (int i = 0; i < 3; ++i) {
    named_words[i] =
        reinterpret_cast<const uintptr_t*>(trampoline.cfa)[trampoline_rule.signal_words[i]];
  }
}

// The kernel's return trampoline (glibc's __restore_rt, 'S' FDE) is not simple; its rule names
// the words above its stack pointer that hold the interrupted frame's rip, rsp and rbp: the
// kernel's ucontext, and they hold what libgcc's complete step gives.
TEST(EhFrameRulesTest, ASignalFrameIsNotSimpleAndNamesItsRegistersWords) {
  struct sigaction action {};
  action.sa_handler = Handler;
  ASSERT_EQ(sigaction(SIGUSR1, &action, nullptr), 0);
  raise(SIGUSR1);
  signal(SIGUSR1, SIG_DFL);
  // libgcc marks the interrupted frame; the frame before it is the kernel's return trampoline.
  auto interrupted = std::find_if(signal_frames.begin(), signal_frames.end(),
                                  [](const Frame& f) { return f.signal_frame; });
  ASSERT_NE(interrupted, signal_frames.end());
  ASSERT_NE(interrupted, signal_frames.begin());
  auto trampoline = interrupted - 1;
  EXPECT_EQ(EhFrameRules::Find(trampoline->ip).kind, UnwindRule::kNotSimple);
  EXPECT_EQ(trampoline_rule.kind, UnwindRule::kNotSimple);
  ASSERT_TRUE(trampoline_rule.signal_frame);
  EXPECT_FALSE(trampoline_rule.no_fde);
  constexpr size_t kGregs = offsetof(ucontext_t, uc_mcontext.gregs);
  EXPECT_EQ(trampoline_rule.signal_words[0] * 8u, kGregs + REG_RIP * 8u);
  EXPECT_EQ(trampoline_rule.signal_words[1] * 8u, kGregs + REG_RSP * 8u);
  EXPECT_EQ(trampoline_rule.signal_words[2] * 8u, kGregs + REG_RBP * 8u);
  EXPECT_EQ(named_words[0], interrupted->ip);
  EXPECT_EQ(named_words[1], interrupted->cfa);
  EXPECT_EQ(named_words[2], interrupted->rbp);
  // An ordinary frame's rule is no signal frame.
  EXPECT_FALSE(EhFrameRules::Find(reinterpret_cast<uintptr_t>(&LibgccFrames)).signal_frame);
}

TEST(EhFrameRulesTest, CodeWithoutAnObjectOrFdeIsNotSimple) {
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  EXPECT_EQ(EhFrameRules::Find(reinterpret_cast<uintptr_t>(page) + 16).kind,
            UnwindRule::kNotSimple);
  munmap(page, 4096);
  EXPECT_EQ(EhFrameRules::Find(0).kind, UnwindRule::kNotSimple);
  EXPECT_EQ(EhFrameRules::Find(~uintptr_t{0}).kind, UnwindRule::kNotSimple);
  uintptr_t begin = 1, end = 1;
  EXPECT_FALSE(EhFrameRules::FunctionRange(0, &begin, &end));
  EXPECT_EQ(begin, 1u);
}

// A function's FDE covers what its dynamic symbol does (dladdr1's start and st_size), from any
// address inside it: glibc's, and one of this binary (not exported: its FDE starts at its entry).
TEST(EhFrameRulesTest, FunctionRangeIsTheSymbolsCode) {
  const auto own = reinterpret_cast<uintptr_t>(&LibgccFrames);
  uintptr_t own_begin = 0, own_end = 0;
  ASSERT_TRUE(EhFrameRules::FunctionRange(own + 1, &own_begin, &own_end));
  EXPECT_EQ(own_begin, own);
  EXPECT_GT(own_end, own + 1);
  for (void* function :
       {dlsym(RTLD_DEFAULT, "exit"), dlsym(RTLD_DEFAULT, "qsort"), dlsym(RTLD_DEFAULT, "strtol")}) {
    ASSERT_NE(function, nullptr);
    Dl_info info;
    void* entry = nullptr;
    ASSERT_NE(dladdr1(function, &info, &entry, RTLD_DL_SYMENT), 0);
    const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
    ASSERT_NE(symbol, nullptr);
    const auto start = reinterpret_cast<uintptr_t>(info.dli_saddr);
    for (uintptr_t pc : {start, start + symbol->st_size / 2, start + symbol->st_size - 1}) {
      uintptr_t begin = 0, end = 0;
      ASSERT_TRUE(EhFrameRules::FunctionRange(pc, &begin, &end)) << info.dli_sname;
      EXPECT_EQ(begin, start) << info.dli_sname;
      EXPECT_EQ(end, start + symbol->st_size) << info.dli_sname;
    }
  }
}

}  // namespace
}  // namespace heapgraph
