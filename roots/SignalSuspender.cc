#include "roots/SignalSuspender.h"

#include <signal.h>
#include <ucontext.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstring>
#include <iterator>
#include <string_view>

#include "roots/RawSyscall.h"
#include "roots/SelfRegisters.h"
#include "roots/SynchronousSignals.h"
#include "roots/VectorState.h"

#if defined(__x86_64__)
#include <asm/prctl.h>
#endif

namespace heapgraph::roots {

// One per process: the handler can only find its state through a global, and a late signal may
// arrive after any SignalSuspender is gone, so this is never freed. Fields are seq_cst where the
// handler and ResumeAll() must agree on who saw what first (in_handler vs active).
struct SignalSuspender::Shared {
  std::atomic<uint32_t> busy{0};          // 1 while some SignalSuspender holds the world
  std::atomic<uint32_t> active{0};        // handlers may capture only while 1
  std::atomic<uint32_t> generation{0};    // the request number the handler must see
  std::atomic<uint32_t> acknowledged{0};  // futex: handlers that filled their slot
  std::atomic<uint32_t> released{0};      // futex: the last generation released
  std::atomic<uint32_t> in_handler{0};    // futex: handlers between entry and exit
  std::atomic<CaptureArena*> arena{nullptr};
  // acked_by_tid[tid] == generation once that thread's handler has filled its slot.
  std::atomic<std::atomic<uint32_t>*> acked_by_tid{nullptr};
  size_t acked_size = 0;
  pid_t pid = 0;
};

namespace {

// si_value of our requests: the magic in the upper half tells them from the program's own
// sigqueue() on the same signal, the generation in the lower half tells current from stale.
constexpr uint64_t kRequestMagic = 0x48475353ull << 32;  // "HGSS"
constexpr int kPollIntervalMs = 10;
constexpr std::chrono::milliseconds kGoneCheckInterval{20};
constexpr int kMaxSuspendPasses = 100;
// RunPasses()' failure when more threads were met than the attempt had slots for.
constexpr const char* kOutOfSlots = "more threads than the prepared slots";

SignalSuspender::Shared g_shared;
// The disposition each signal had before we installed our handler, for chaining foreign signals.
struct sigaction g_previous[_NSIG];
std::atomic<bool> g_installed[_NSIG];

// Copies with plain word loads: the source is a signal frame on the interrupted thread's stack,
// whose ASan shadow may still carry poison from frames that unwound abnormally.
__attribute__((no_sanitize("address"))) void CopyWords(void* to, const void* from, size_t bytes) {
  auto* out = static_cast<volatile uint64_t*>(to);
  const auto* in = static_cast<const volatile uint64_t*>(from);
  for (size_t i = 0; i < bytes / sizeof(uint64_t); ++i) out[i] = in[i];
}

#if defined(__x86_64__)
// For each struct user_regs_struct slot up to rsp, the ucontext greg that holds it (-1: none).
constexpr int kGregOfRegister[] = {REG_R15,           REG_R14, REG_R13,     REG_R12, REG_RBP,
                                   REG_RBX,           REG_R11, REG_R10,     REG_R9,  REG_R8,
                                   REG_RAX,           REG_RCX, REG_RDX,     REG_RSI, REG_RDI,
                                   -1 /* orig_rax */, REG_RIP, -1 /* cs */, REG_EFL, REG_RSP};
static_assert(std::size(kGregOfRegister) == ThreadInfo::kStackPointer + 1);

uint64_t ArchPrctlGet(int code) {
  uint64_t value = 0;
  RawSyscall::Call(SYS_arch_prctl, code, static_cast<long>(reinterpret_cast<uintptr_t>(&value)));
  return value;
}

void FillGeneralPurpose(const ucontext_t* uc, ThreadInfo* out) {
  const greg_t* g = uc->uc_mcontext.gregs;
  for (size_t i = 0; i < std::size(kGregOfRegister); ++i) {
    if (kGregOfRegister[i] >= 0) out->regs[i] = static_cast<uint64_t>(g[kGregOfRegister[i]]);
  }
  out->regs[15] = ~uint64_t{0};                                   // orig_rax: not in a syscall
  out->regs[17] = static_cast<uint64_t>(g[REG_CSGSFS]) & 0xffff;  // cs
  // The handler runs on the interrupted thread, so its own fs/gs bases are the thread's.
  out->regs[ThreadInfo::kFsBase] = ArchPrctlGet(ARCH_GET_FS);
  out->regs[ThreadInfo::kFsBase + 1] = ArchPrctlGet(ARCH_GET_GS);
}

// The FXSAVE image, extended to the full XSAVE area when the kernel says one follows it.
size_t FillVector(const ucontext_t* uc, std::span<uint8_t> buffer) {
  const auto* fpregs = reinterpret_cast<const uint8_t*>(uc->uc_mcontext.fpregs);
  if (fpregs == nullptr || buffer.size() < 512) return 0;
  constexpr size_t kSwBytesOffset = 464;  // struct _fpx_sw_bytes inside the FXSAVE image
  constexpr uint32_t kXstateMagic1 = 0x46505853;
  uint32_t sw[4] = {};  // magic1, extended_size, xfeatures (2 words)
  CopyWords(sw, fpregs + kSwBytesOffset, sizeof(sw));
  size_t size = 512;
  if (sw[0] == kXstateMagic1) {
    uint32_t xstate_size[2] = {};  // xstate_size follows xfeatures
    CopyWords(xstate_size, fpregs + kSwBytesOffset + 16, sizeof(xstate_size));
    size = std::min<size_t>(xstate_size[0] / 8 * 8, buffer.size());
  }
  CopyWords(buffer.data(), fpregs, size);
  VectorState::ZeroAbsentComponents(buffer.first(size));
  return size;
}
#elif defined(__aarch64__)
void FillGeneralPurpose(const ucontext_t* uc, ThreadInfo* out) {
  for (int i = 0; i < 31; ++i) out->regs[static_cast<size_t>(i)] = uc->uc_mcontext.regs[i];
  out->regs[ThreadInfo::kStackPointer] = uc->uc_mcontext.sp;
  out->regs[ThreadInfo::kInstructionPointer] = uc->uc_mcontext.pc;
  out->regs[33] = uc->uc_mcontext.pstate;
}

// Finds the fpsimd_context record in __reserved and stores it as struct user_fpsimd_state.
size_t FillVector(const ucontext_t* uc, std::span<uint8_t> buffer) {
  constexpr uint32_t kFpsimdMagic = 0x46508001;
  const auto* reserved = reinterpret_cast<const uint8_t*>(uc->uc_mcontext.__reserved);
  const size_t limit = sizeof(uc->uc_mcontext.__reserved);
  for (size_t offset = 0; offset + 8 <= limit;) {
    uint32_t head[2] = {};  // magic, size
    CopyWords(head, reserved + offset, sizeof(head));
    if (head[0] == 0 || head[1] < 8) break;
    if (head[0] == kFpsimdMagic && buffer.size() >= 528 && offset + 528 <= limit) {
      CopyWords(buffer.data(), reserved + offset + 16, 512);     // vregs
      CopyWords(buffer.data() + 512, reserved + offset + 8, 8);  // fpsr, fpcr
      return 528;
    }
    offset += head[1];
  }
  return 0;
}
#endif

bool IsOurRequest(const siginfo_t* info) {
  const auto value = reinterpret_cast<uint64_t>(info->si_value.sival_ptr);
  return info->si_code == SI_QUEUE && info->si_pid == g_shared.pid &&
         (value & ~uint64_t{0xffffffff}) == kRequestMagic;
}

void ChainToPrevious(int signal, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous[signal];
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
             previous.sa_handler != nullptr) {
    previous.sa_handler(signal);
  }
}

// Records this thread into a slot, acknowledges, then sleeps until the generation is released.
void CaptureAndPark(uint32_t generation, const ucontext_t* uc) {
  CaptureArena* arena = g_shared.arena.load(std::memory_order_acquire);
  const pid_t tid = RawSyscall::Gettid();
  if (ThreadInfo* slot = arena->Claim()) {
    slot->tid = tid;
    slot->is_main = tid == g_shared.pid;
    FillGeneralPurpose(uc, slot);
    slot->stack_pointer = static_cast<uintptr_t>(slot->regs[ThreadInfo::kStackPointer]);
    const std::span<uint8_t> buffer = arena->VectorBuffer(slot);
    slot->vector_bytes = buffer.first(FillVector(uc, buffer));
  }
  if (static_cast<size_t>(tid) < g_shared.acked_size) {
    g_shared.acked_by_tid.load(std::memory_order_acquire)[tid].store(generation,
                                                                     std::memory_order_release);
  }
  g_shared.acknowledged.fetch_add(1, std::memory_order_seq_cst);
  RawSyscall::FutexWake(&g_shared.acknowledged, 1);
  for (uint32_t seen = g_shared.released.load(); seen != generation;
       seen = g_shared.released.load()) {
    RawSyscall::FutexWait(&g_shared.released, seen, nullptr);
  }
}

void SuspendHandler(int signal, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (!IsOurRequest(info)) {
    ChainToPrevious(signal, info, context);
    errno = saved_errno;
    return;
  }
  // Announce ourselves before looking at `active`, so ResumeAll() either waits for us or we see
  // that it has already ended the suspension.
  g_shared.in_handler.fetch_add(1, std::memory_order_seq_cst);
  const auto generation =
      static_cast<uint32_t>(reinterpret_cast<uint64_t>(info->si_value.sival_ptr));
  if (g_shared.active.load(std::memory_order_seq_cst) == 1 &&
      g_shared.generation.load(std::memory_order_seq_cst) == generation) {
    CaptureAndPark(generation, static_cast<const ucontext_t*>(context));
  }
  if (g_shared.in_handler.fetch_sub(1, std::memory_order_seq_cst) == 1) {
    RawSyscall::FutexWake(&g_shared.in_handler, INT_MAX);
  }
  errno = saved_errno;
}

// Gone for sure: a thread whose state cannot be read is not assumed gone.
bool ThreadIsGone(const TaskList& tasks, pid_t tid) {
  if (RawSyscall::Tgkill(tasks.pid(), tid, 0) == -ESRCH) return true;
  const char state = tasks.ThreadState(tid);
  return state == 'Z' || state == 'X';
}

// Parses a hexadecimal number, with or without "0x", at the start of `text`.
bool ParseHex(std::string_view text, uint64_t* out) {
  if (text.starts_with("0x")) text.remove_prefix(2);
  uint64_t value = 0;
  size_t n = 0;
  for (; n < text.size() && n < 16 && std::isxdigit(static_cast<unsigned char>(text[n])); ++n) {
    const char c = text[n];
    value = value * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  *out = value;
  return n > 0;
}

// True if /proc/<pid>/task/<tid>/status lists `signal` in SigBlk.
bool SignalBlocked(const TaskList& tasks, pid_t tid, int signal) {
  char text[4096];
  const long n = tasks.ReadThreadFile(tid, "status", text);
  if (n <= 0) return false;
  const std::string_view status(text, static_cast<size_t>(n));
  const size_t at = status.find("SigBlk:");
  if (at == std::string_view::npos) return false;
  std::string_view rest = status.substr(at + 7);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  uint64_t mask = 0;
  return ParseHex(rest, &mask) && ((mask >> (signal - 1)) & 1) != 0;
}

// SP and IP of a thread sleeping in a system call: /proc/<pid>/task/<tid>/syscall reads
// "nr arg1 ... arg6 sp pc" then ("running" or "-1 sp pc" otherwise).
bool SyscallStackPointer(const TaskList& tasks, pid_t tid, uint64_t* sp, uint64_t* pc) {
  char text[256];
  const long n = tasks.ReadThreadFile(tid, "syscall", text);
  if (n <= 0 || text[0] < '0' || text[0] > '9') return false;
  std::string_view fields[9];
  std::string_view rest(text, static_cast<size_t>(n));
  size_t count = 0;
  while (count < 9 && !rest.empty()) {
    const size_t blank = rest.find_first_of(" \n");
    if (blank != 0) fields[count++] = rest.substr(0, blank);
    rest.remove_prefix(blank == std::string_view::npos ? rest.size() : blank + 1);
  }
  return count == 9 && ParseHex(fields[7], sp) && ParseHex(fields[8], pc) && *sp != 0;
}

// True once `tid`'s handler has filled its slot in the current suspension.
bool Acknowledged(pid_t tid) {
  if (static_cast<size_t>(tid) < g_shared.acked_size) {
    return g_shared.acked_by_tid.load()[tid].load(std::memory_order_acquire) ==
           g_shared.generation.load();
  }
  const std::span<const ThreadInfo> threads = g_shared.arena.load()->Threads();
  return std::any_of(threads.begin(), threads.end(),
                     [tid](const ThreadInfo& t) { return t.tid == tid; });
}

// A thread with the suspend signal blocked cannot run the handler. If it sleeps in a system call
// at the same SP and IP at two checks in a row, it is recorded from /proc with SP and IP only
// (see ThreadInfo::registers_complete). A single sighting is not enough: a thread briefly
// sleeping with signals blocked (glibc or ASan thread start-up) would run on and keep working.
bool RecordBlockedSleeper(const TaskList& tasks, pid_t tid, int signal, uint64_t* last_sp,
                          uint64_t* last_pc, CaptureArena* arena) {
  const char state = tasks.ThreadState(tid);
  uint64_t sp = 0, pc = 0;
  if ((state != 'S' && state != 'D') || !SignalBlocked(tasks, tid, signal) ||
      !SyscallStackPointer(tasks, tid, &sp, &pc)) {
    *last_sp = *last_pc = 0;
    return false;
  }
  // Our own handler also blocks the signal and sleeps (parked), but only after acknowledging:
  // a thread that took the signal between the checks above is found here.
  if (Acknowledged(tid)) return false;
  if (sp != *last_sp || pc != *last_pc) {
    *last_sp = sp;
    *last_pc = pc;
    return false;
  }
  ThreadInfo* slot = arena->Claim();
  if (slot == nullptr) return true;  // counted; SuspendAll() reports the overflow
  slot->tid = tid;
  slot->is_main = tid == tasks.pid();
  slot->registers_complete = false;
  slot->regs[ThreadInfo::kStackPointer] = sp;
  slot->regs[ThreadInfo::kInstructionPointer] = pc;
  slot->stack_pointer = static_cast<uintptr_t>(sp);
  return true;
}

}  // namespace

SignalSuspender::SignalSuspender() : SignalSuspender(Options()) {}

SignalSuspender::SignalSuspender(const Options& options)
    : options_(options), signal_(options.signal != 0 ? options.signal : SIGRTMIN + 7) {}

SignalSuspender::~SignalSuspender() {
  ResumeAll();
}

bool SignalSuspender::Prepare(size_t slots) {
  VectorState::LoadLayout();  // CPUID outside the handler (ZeroAbsentComponents)
  if (!arena_.Reserve(slots, VectorState::CaptureSize())) {
    error_ = "cannot map the capture arena for " + std::to_string(slots) + " threads";
    return false;
  }
  tids_.resize(slots);
  dirents_.resize(64 * 1024);
  requests_.clear();
  requests_.reserve(slots);
  if (!acked_by_tid_) {
    acked_size_ = TaskList::PidMax() + 1;
    acked_by_tid_.reset(new std::atomic<uint32_t>[acked_size_]());
  }
  return InstallHandler();
}

bool SignalSuspender::InstallHandler() {
  if (signal_ <= 0 || signal_ >= _NSIG) {
    error_ = "invalid suspend signal";
    return false;
  }
  // Installed once and kept: a request that timed out may still be pending in some thread, and
  // the default action of a real-time signal would kill the process.
  if (g_installed[signal_].load()) return true;
  struct sigaction action = {};
  action.sa_sigaction = &SuspendHandler;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&action.sa_mask);
  RemoveSynchronousSignals(&action.sa_mask);
  if (sigaction(signal_, &action, &g_previous[signal_]) != 0) {
    error_ = std::string("sigaction failed: ") + std::strerror(errno);
    return false;
  }
  g_installed[signal_].store(true);
  return true;
}

long SignalSuspender::SignalNewThreads(bool* found_new) {
  bool complete = false;
  const long listed = tasks_.ReadConsistent(tids_, dirents_, &complete);
  if (listed < 0) return listed;
  *found_new = !complete;  // a listing that may have skipped a thread calls for another pass
  const pid_t self = RawSyscall::Gettid();
  siginfo_t info = {};
  info.si_signo = signal_;
  info.si_code = SI_QUEUE;
  info.si_pid = tasks_.pid();
  info.si_uid = getuid();
  info.si_value.sival_ptr = reinterpret_cast<void*>(kRequestMagic | g_shared.generation.load());
  long sent = 0;
  for (pid_t tid : std::span<const pid_t>(tids_.data(), static_cast<size_t>(listed))) {
    if (tid == self || std::any_of(requests_.begin(), requests_.end(),
                                   [tid](const Request& r) { return r.tid == tid; })) {
      continue;  // already asked in this suspension (settled or not)
    }
    if (requests_.size() == requests_.capacity()) return -ENOBUFS;
    *found_new = true;
    requests_.push_back(Request{tid});
    const long r = RawSyscall::TgSigqueueinfo(tasks_.pid(), tid, signal_, &info);
    if (r == -ESRCH) {  // exited since the listing
      requests_.back().settled = true;
      continue;
    }
    if (r < 0) return r;
    ++sent;
  }
  return sent;
}

bool SignalSuspender::AllAcknowledged() const {
  return std::all_of(requests_.begin(), requests_.end(),
                     [](const Request& r) { return r.settled || Acknowledged(r.tid); });
}

long SignalSuspender::SettleUnresponsive() {
  long settled = 0;
  for (Request& r : requests_) {
    if (r.settled || Acknowledged(r.tid)) continue;
    r.settled = ThreadIsGone(tasks_, r.tid) ||
                RecordBlockedSleeper(tasks_, r.tid, signal_, &r.sleeper_sp, &r.sleeper_pc, &arena_);
    settled += r.settled ? 1 : 0;
  }
  return settled;
}

bool SignalSuspender::WaitForAcknowledgements(long* expected) {
  auto progress = std::chrono::steady_clock::now();  // the last new acknowledgement
  auto next_check = progress + kGoneCheckInterval;
  uint32_t seen = g_shared.acknowledged.load();
  for (;;) {
    // The counter is only a cheap first test: a thread recorded as a blocked sleeper may still
    // acknowledge later and push it past `expected`, so every tid is then checked one by one.
    const uint32_t acknowledged = g_shared.acknowledged.load();
    if (static_cast<long>(acknowledged) >= *expected && AllAcknowledged()) return true;
    if (acknowledged != seen) {
      seen = acknowledged;
      progress = std::chrono::steady_clock::now();
    }
    const timespec tick{0, kPollIntervalMs * 1000000L};
    RawSyscall::FutexWait(&g_shared.acknowledged, acknowledged, &tick);
    const auto now = std::chrono::steady_clock::now();
    if (now < next_check) continue;
    *expected -= SettleUnresponsive();
    // Reading /proc for every silent thread takes a while with thousands of them: spend at most
    // a fifth of the time on it, leaving the CPUs to the handlers.
    const auto checked = std::chrono::steady_clock::now();
    next_check = checked + std::max<std::chrono::steady_clock::duration>(kGoneCheckInterval,
                                                                         4 * (checked - now));
    if (now - progress >= std::chrono::milliseconds(options_.timeout_ms)) return false;
  }
}

bool SignalSuspender::SuspendAll() {
  if (suspended_) {
    error_ = "already suspended";
    return false;
  }
  error_.clear();
  regrown_ = 0;
  // Sized from the thread count now; grown and retried when threads started since then do not
  // fit (the failed attempt has resumed every thread: nothing allocates while they are held).
  size_t slots = options_.first_slots_for_testing != 0
                     ? options_.first_slots_for_testing
                     : CaptureArena::SlotsFor(tasks_.CountThreads());
  for (;;) {
    if (!Prepare(slots)) return false;
    uint32_t idle = 0;
    if (!g_shared.busy.compare_exchange_strong(idle, 1)) {
      error_ = "another signal suspension is in progress";
      return false;
    }
    Begin();
    int error_number = 0;
    const char* failure = RunPasses(&error_number);
    if (failure == nullptr) {
      suspended_ = true;
      return true;
    }
    WakeAndDrain();  // only now may error_ allocate
    if (failure == kOutOfSlots && regrown_ < CaptureArena::kMaxRegrowths) {
      ++regrown_;
      slots = CaptureArena::GrownSlots(slots, tasks_.CountThreads());
      continue;
    }
    error_ = failure;
    if (failure == kOutOfSlots) {
      error_ += " (" + std::to_string(slots) + " slots after " + std::to_string(regrown_) +
                " retries: threads kept being started)";
    }
    if (error_number != 0) error_ += std::string(": ") + std::strerror(error_number);
    return false;
  }
}

void SignalSuspender::Begin() {
  ThreadInfo* self = arena_.Claim();
  SelfRegisters::Capture(self, arena_.VectorBuffer(self));
  g_shared.pid = tasks_.pid();
  g_shared.arena.store(&arena_);
  g_shared.acked_size = acked_size_;
  g_shared.acked_by_tid.store(acked_by_tid_.get());
  g_shared.acknowledged.store(0);
  g_shared.generation.fetch_add(1);
  g_shared.active.store(1);
}

const char* SignalSuspender::RunPasses(int* error_number) {
  long expected = 0;
  for (int pass = 0; pass < kMaxSuspendPasses; ++pass) {
    bool found_new = false;
    const long sent = SignalNewThreads(&found_new);
    if (sent == -ENOBUFS) return kOutOfSlots;
    if (sent < 0) {
      *error_number = static_cast<int>(-sent);
      return "signalling threads failed";
    }
    expected += sent;
    if (!WaitForAcknowledgements(&expected)) {
      return "threads did not acknowledge the suspend signal in time";
    }
    if (!found_new) return arena_.overflowed() ? kOutOfSlots : nullptr;
  }
  return "threads kept appearing while suspending";
}

void SignalSuspender::WakeAndDrain() {
  g_shared.active.store(0, std::memory_order_seq_cst);
  g_shared.released.store(g_shared.generation.load(), std::memory_order_seq_cst);
  RawSyscall::FutexWake(&g_shared.released, INT_MAX);
  for (uint32_t n = g_shared.in_handler.load(); n != 0; n = g_shared.in_handler.load()) {
    RawSyscall::FutexWait(&g_shared.in_handler, n, nullptr);
  }
  g_shared.arena.store(nullptr);
  g_shared.acked_size = 0;
  g_shared.acked_by_tid.store(nullptr);
  g_shared.busy.store(0);
}

void SignalSuspender::ResumeAll() {
  if (!suspended_) return;
  WakeAndDrain();
  suspended_ = false;
}

}  // namespace heapgraph::roots
