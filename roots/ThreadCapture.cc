#include "roots/ThreadCapture.h"

#include <elf.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "roots/RawSyscall.h"
#include "roots/SelfRegisters.h"
#include "roots/VectorState.h"

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif
#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

namespace heapgraph::roots {

// Memory shared by the calling thread and the helper task. The helper writes everything but
// `phase` before publishing kStopped or kFailed (release); the caller reads it after observing
// that phase (acquire). While the helper runs, the caller touches nothing else here.
struct ThreadCapture::HelperState {
  // kReleased: the helper cloned the snapshot process and detached every thread (it is exiting).
  enum Phase : uint32_t { kAttaching, kStopped, kFailed, kReleasing, kReleased };

  std::atomic<uint32_t> phase{kAttaching};  // futex word
  pid_t caller_tid = 0;
  TaskList tasks;
  std::span<pid_t> tids;              // listing buffer
  std::span<char> dirents;            // getdents64 buffer
  std::span<uint8_t> seen;            // seen[tid] = 1: captured or skipped in this stop
  std::span<pid_t> pending;           // tids seized in the current pass, not yet waited for
  std::span<uint8_t> vector_scratch;  // NT_X86_XSTATE lands here before a slot is claimed
  CaptureArena* arena = nullptr;
  void (*after_seize)(pid_t, void*) = nullptr;
  void* after_seize_argument = nullptr;
  // Set by CloneStoppedWorld(): the helper clones the snapshot process once every thread is
  // stopped and recorded. snapshot_pid is its pid, or -errno if the clone failed (the helper then
  // publishes kStopped and the caller clones instead).
  ThreadCapture::SnapshotBody snapshot_body = nullptr;
  void* snapshot_argument = nullptr;
  long snapshot_pid = 0;
  uint64_t caller_signal_mask = 0;  // the snapshot's mask (the helper blocks asynchronous signals)

  // The first failure; the caller turns it into a message once the helper has stopped writing.
  const char* failed_step = nullptr;
  pid_t failed_tid = 0;
  int failed_errno = 0;
  bool denied = false;  // PTRACE_SEIZE of a live thread refused (EPERM, EACCES, ENOSYS)

  int passes = 0;
  int exited_during_attach = 0;
  int64_t seize_started_ns = 0;  // before the first PTRACE_SEIZE
  int64_t released_ns = 0;       // after the last PTRACE_DETACH
};

namespace {

using State = ThreadCapture::HelperState;

constexpr int kMaxPasses = 100;
constexpr size_t kDirentBytes = 64 * 1024;

// ---- Helper task side: raw system calls only, no allocation, no errno. ----------------------

enum class Outcome { kCaptured, kGone, kFailed };

void Fail(State* s, const char* step, pid_t tid, long result) {
  if (s->failed_step != nullptr) return;  // keep the first failure
  s->failed_step = step;
  s->failed_tid = tid;
  s->failed_errno = static_cast<int>(-result);
}

bool Seen(State* s, pid_t tid) {
  const auto index = static_cast<size_t>(tid);
  if (index >= s->seen.size()) return false;
  const bool seen = s->seen[index] != 0;
  s->seen[index] = 1;
  return seen;
}

// A thread we may not seize could be one that is exiting (the kernel answers EPERM for zombies
// too) or an exited main thread; only a live thread's EPERM means ptrace is denied.
bool IsDeadOrZombie(const State* s, pid_t tid) {
  if (RawSyscall::Tgkill(s->tasks.pid(), tid, 0) == -ESRCH) return true;
  const char state = s->tasks.ThreadState(tid);
  return state == 'Z' || state == 'X';
}

Outcome Seize(State* s, pid_t tid) {
  long r = RawSyscall::Ptrace(PTRACE_SEIZE, tid, 0, 0);
  if (r == -ESRCH || (r == -EPERM && IsDeadOrZombie(s, tid))) return Outcome::kGone;
  if (r < 0) {
    s->denied = r == -EPERM || r == -EACCES || r == -ENOSYS;
    Fail(s, "PTRACE_SEIZE", tid, r);
    return Outcome::kFailed;
  }
  if (s->after_seize != nullptr) s->after_seize(tid, s->after_seize_argument);
  // ESRCH here means the thread died after the seize; WaitForStop() will see that.
  RawSyscall::Ptrace(PTRACE_INTERRUPT, tid, 0, 0);
  return Outcome::kCaptured;
}

// Waits for the seized `tid` to stop. Returns the signal to re-deliver through *resume_signal:
// a signal-delivery-stop means the thread dequeued that signal, which is lost unless handed back
// on detach. PTRACE_EVENT_STOP (our interrupt, or a group-stop) carries nothing to re-deliver.
Outcome WaitForStop(State* s, pid_t tid, int* resume_signal) {
  for (;;) {
    int status = 0;
    const long r = RawSyscall::Wait4(tid, &status, __WALL);
    if (r == -EINTR) continue;
    if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
      ++s->exited_during_attach;
      return Outcome::kGone;
    }
    if (!WIFSTOPPED(status)) continue;
    const bool event_stop = (status >> 16) == PTRACE_EVENT_STOP;
    *resume_signal = event_stop ? 0 : WSTOPSIG(status);
    return Outcome::kCaptured;
  }
}

long GetRegset(pid_t tid, uintptr_t type, void* buffer, size_t* size) {
  iovec io{buffer, *size};
  const long r = RawSyscall::Ptrace(PTRACE_GETREGSET, tid, type, reinterpret_cast<uintptr_t>(&io));
  if (r >= 0) *size = io.iov_len;
  return r;
}

// Reads the stopped thread's registers into a claimed slot.
Outcome Record(State* s, pid_t tid, int resume_signal) {
  ThreadInfo info;
  size_t gp_size = sizeof(info.regs);
  long r = GetRegset(tid, NT_PRSTATUS, info.regs.data(), &gp_size);
  if (r == -ESRCH) return Outcome::kGone;  // killed (SIGKILL) while stopped
  if (r < 0) {
    Fail(s, "PTRACE_GETREGSET(NT_PRSTATUS)", tid, r);
    return Outcome::kFailed;
  }
  size_t vector_size = s->vector_scratch.size();
#if defined(__x86_64__)
  r = GetRegset(tid, NT_X86_XSTATE, s->vector_scratch.data(), &vector_size);
  if (r < 0 && r != -ESRCH) {  // no XSAVE: the FXSAVE image has xmm0-15
    vector_size = std::min<size_t>(512, s->vector_scratch.size());
    r = GetRegset(tid, NT_PRFPREG, s->vector_scratch.data(), &vector_size);
  }
#else
  r = GetRegset(tid, NT_PRFPREG, s->vector_scratch.data(), &vector_size);
#endif
  if (r < 0) vector_size = 0;
  ThreadInfo* slot = s->arena->Claim();
  if (slot == nullptr) {
    Fail(s, "claiming a slot (more threads than max_threads)", tid, -ENOBUFS);
    return Outcome::kFailed;
  }
  *slot = info;
  slot->tid = tid;
  slot->pending_signal = resume_signal;
  slot->stack_pointer = static_cast<uintptr_t>(info.regs[ThreadInfo::kStackPointer]);
  const std::span<uint8_t> buffer = s->arena->VectorBuffer(slot);
  vector_size = std::min(vector_size, buffer.size());
  std::memcpy(buffer.data(), s->vector_scratch.data(), vector_size);
  slot->vector_bytes = buffer.first(vector_size);
  return Outcome::kCaptured;
}

void Detach(pid_t tid, int signal) {
  RawSyscall::Ptrace(PTRACE_DETACH, tid, 0, static_cast<uintptr_t>(signal));
}

// Seizes every listed tid not seen before; returns how many are pending, or -1 on failure.
// *complete is false when the listing may have missed a thread (another pass is needed).
long SeizeNewThreads(State* s, bool* complete) {
  const long listed = s->tasks.ReadConsistent(s->tids, s->dirents, complete);
  if (listed < 0) {
    Fail(s, "listing /proc/<pid>/task", 0, listed);
    return -1;
  }
  long pending = 0;
  for (pid_t tid : s->tids.first(static_cast<size_t>(listed))) {
    if (tid == s->caller_tid || Seen(s, tid)) continue;
    const Outcome outcome = Seize(s, tid);
    if (outcome == Outcome::kFailed) break;
    if (outcome == Outcome::kCaptured) s->pending[static_cast<size_t>(pending++)] = tid;
  }
  return pending;
}

// Waits for each pending tid and records it; after a failure, only waits and detaches.
void CollectPending(State* s, long pending) {
  for (pid_t tid : s->pending.first(static_cast<size_t>(pending))) {
    int resume_signal = 0;
    if (WaitForStop(s, tid, &resume_signal) != Outcome::kCaptured) continue;
    if (s->failed_step != nullptr || Record(s, tid, resume_signal) == Outcome::kFailed) {
      Detach(tid, resume_signal);
    }
  }
}

bool AttachAll(State* s) {
  s->seize_started_ns = RawSyscall::MonotonicNs();
  for (s->passes = 1; s->passes <= kMaxPasses; ++s->passes) {
    bool complete = false;
    const long pending = SeizeNewThreads(s, &complete);
    if (pending > 0) CollectPending(s, pending);
    if (s->failed_step != nullptr || pending < 0) return false;
    // A complete listing with nothing new: every thread is stopped and none can start another.
    if (pending == 0 && complete) return true;
  }
  Fail(s, "attaching (threads kept appearing)", 0, -EAGAIN);
  return false;
}

void DetachAll(State* s) {
  for (const ThreadInfo& t : s->arena->Threads()) {
    if (!t.is_caller) Detach(t.tid, t.pending_signal);
  }
  s->released_ns = RawSyscall::MonotonicNs();
}

void Publish(State* s, uint32_t phase) {
  s->phase.store(phase, std::memory_order_release);
  RawSyscall::FutexWake(&s->phase, INT_MAX);
}

// Runs in a snapshot process. Ends it if the body returns.
[[noreturn]] void RunSnapshot(ThreadCapture::SnapshotBody body, void* argument) {
  body(argument);
  RawSyscall::ExitGroup(127);
}

// The snapshot process, cloned while every thread is stopped. Invariant: without CLONE_VM the
// child owns a copy of the whole address space, so it may run on (its copy of) this helper stack
// and write anywhere without touching the parent; CLONE_PARENT makes the calling thread its
// parent (the helper exits before the snapshot is reaped), and it inherits the helper's exit
// signal, 0. The child keeps the helper's registers, hence the calling thread's TLS.
bool CloneSnapshot(State* s) {
  const long pid = RawSyscall::CloneProcess(CLONE_PARENT);
  if (pid == 0) {
    RawSyscall::SetSignalMask(&s->caller_signal_mask);
    RunSnapshot(s->snapshot_body, s->snapshot_argument);
  }
  s->snapshot_pid = pid;
  return pid > 0;
}

int HelperMain(void* argument) {
  auto* s = static_cast<State*>(argument);
  if (!AttachAll(s)) {
    DetachAll(s);
    Publish(s, State::kFailed);
    return 1;
  }
  // Detach before waking the caller: the threads run again without waiting for it to be
  // scheduled.
  if (s->snapshot_body != nullptr && CloneSnapshot(s)) {
    DetachAll(s);
    Publish(s, State::kReleased);
    return 0;
  }
  Publish(s, State::kStopped);
  for (uint32_t phase = s->phase.load(std::memory_order_acquire); phase != State::kReleasing;
       phase = s->phase.load(std::memory_order_acquire)) {
    RawSyscall::FutexWait(&s->phase, phase, nullptr);
  }
  DetachAll(s);
  return 0;
}

// ---- Calling thread side. ---------------------------------------------------------------------

}  // namespace

ThreadCapture::ThreadCapture() : ThreadCapture(Options()) {}

ThreadCapture::ThreadCapture(const Options& options) : options_(options) {}

ThreadCapture::~ThreadCapture() {
  ReleaseAll();
}

std::span<const ThreadInfo> ThreadCapture::threads() const {
  if (method_used_ == Method::kSignals && suspender_) return suspender_->threads();
  return arena_.Threads();
}

bool ThreadCapture::StopAll() {
  if (stopped_) {
    error_ = "the world is already stopped";
    return false;
  }
  error_.clear();
  notice_.clear();
  stats_ = Stats();
  if (options_.method == Method::kSignals) return StopWithSignals();
  if (!Prepare()) return false;
  if (StopWithPtrace()) return true;
  if (!state_->denied || options_.method != Method::kAuto) return false;
  notice_ = error_ + "; falling back to signal suspension";
  error_.clear();
  return StopWithSignals();
}

bool ThreadCapture::Prepare() {
  const size_t vector_size = VectorState::CaptureSize();
  if (!arena_.Reserve(options_.max_threads + 1, vector_size)) {
    error_ = "cannot map the capture arena";
    return false;
  }
  tids_.resize(options_.max_threads + 1);
  pending_.resize(options_.max_threads + 1);
  dirents_.resize(kDirentBytes);
  vector_scratch_.resize(vector_size);
  if (seen_.empty()) seen_.resize(TaskList::PidMax() + 1);
  std::fill(seen_.begin(), seen_.end(), 0);
  if (!helper_) helper_ = std::make_unique<PtracerThread>(kHelperStackSize);
  state_ = std::make_unique<HelperState>();
  state_->caller_tid = RawSyscall::Gettid();
  state_->tids = tids_;
  state_->dirents = dirents_;
  state_->seen = seen_;
  state_->pending = pending_;
  state_->vector_scratch = vector_scratch_;
  state_->arena = &arena_;
  state_->after_seize = options_.after_seize_for_testing;
  state_->after_seize_argument = options_.after_seize_argument;
  state_->snapshot_body = snapshot_body_;
  state_->snapshot_argument = snapshot_argument_;
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  std::memcpy(&state_->caller_signal_mask, &mask, sizeof(state_->caller_signal_mask));
  if (options_.make_dumpable) {
    saved_dumpable_ = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (saved_dumpable_ != 1) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  }
  return true;
}

void ThreadCapture::RestoreDumpable() {
  if (saved_dumpable_ >= 0 && saved_dumpable_ != 1) {
    prctl(PR_SET_DUMPABLE, static_cast<unsigned long>(saved_dumpable_), 0, 0, 0);
  }
  saved_dumpable_ = -1;
}

bool ThreadCapture::StopWithPtrace() {
  method_used_ = Method::kPtrace;  // before the helper starts: a snapshot it clones reads threads()
  ThreadInfo* self = arena_.Claim();
  SelfRegisters::Capture(self, arena_.VectorBuffer(self));
  if (!helper_->Start(&HelperMain, state_.get())) {
    error_ = helper_->error();
    RestoreDumpable();
    return false;
  }
  const bool stopped = WaitForHelper();
  stats_.passes = state_->passes;
  stats_.exited_during_attach = state_->exited_during_attach;
  if (!stopped) {
    helper_->Join();
    RestoreDumpable();
    return false;
  }
  if (state_->phase.load(std::memory_order_acquire) == HelperState::kReleased) {
    JoinHelper();  // it has cloned the snapshot and detached every thread
    return true;
  }
  stopped_ = true;
  return true;
}

void ThreadCapture::JoinHelper() {
  helper_->Join();
  stats_.threads_stopped_ms =
      static_cast<double>(state_->released_ns - state_->seize_started_ns) / 1e6;
  RestoreDumpable();
}

bool ThreadCapture::WaitForHelper() {
  for (;;) {
    const uint32_t phase = state_->phase.load(std::memory_order_acquire);
    if (phase == HelperState::kStopped || phase == HelperState::kReleased) return true;
    if (phase == HelperState::kFailed) {
      error_ = DescribeHelperFailure();
      return false;
    }
    const timespec tick{0, 20 * 1000000L};
    RawSyscall::FutexWait(&state_->phase, phase, &tick);
    if (state_->phase.load(std::memory_order_acquire) == phase && helper_->Exited()) {
      error_ = "the ptrace helper task died while stopping threads";
      return false;
    }
  }
}

std::string ThreadCapture::DescribeHelperFailure() const {
  const HelperState& s = *state_;
  std::string message = s.denied ? "ptrace denied: " : "stopping threads failed: ";
  message += s.failed_step != nullptr ? s.failed_step : "unknown step";
  if (s.failed_tid != 0) message += " of thread " + std::to_string(s.failed_tid);
  message += ": ";
  message += std::strerror(s.failed_errno);
  return message;
}

bool ThreadCapture::StopWithSignals() {
  if (!suspender_) {
    SignalSuspender::Options options;
    options.signal = options_.suspend_signal;
    options.max_threads = options_.max_threads;
    suspender_ = std::make_unique<SignalSuspender>(options);
  }
  if (!suspender_->SuspendAll()) {
    error_ = suspender_->error();
    return false;
  }
  method_used_ = Method::kSignals;
  stopped_ = true;
  return true;
}

void ThreadCapture::ReleaseAll() {
  if (!stopped_) return;
  if (method_used_ == Method::kSignals) {
    suspender_->ResumeAll();
  } else {
    Publish(state_.get(), HelperState::kReleasing);
    JoinHelper();
  }
  stopped_ = false;
}

namespace {

template <typename T>
std::pair<uint64_t, uint64_t> Range(const std::vector<T>& v) {
  auto begin = reinterpret_cast<uint64_t>(v.data());
  return {begin, begin + v.capacity() * sizeof(T)};
}

}  // namespace

std::array<std::pair<uint64_t, uint64_t>, 6> ThreadCapture::BufferRanges() const {
  std::pair<uint64_t, uint64_t> helper_stack =
      helper_ ? helper_->StackRange() : std::pair<uint64_t, uint64_t>{0, 0};
  return {Range(tids_), Range(pending_),        Range(dirents_),
          Range(seen_), Range(vector_scratch_), helper_stack};
}

pid_t ThreadCapture::CloneStoppedWorld(SnapshotBody body, void* argument) {
  snapshot_body_ = body;
  snapshot_argument_ = argument;
  const bool stopped = StopAll();
  snapshot_body_ = nullptr;
  snapshot_argument_ = nullptr;
  if (!stopped) return 0;
  if (!stopped_) return static_cast<pid_t>(state_->snapshot_pid);  // the helper did it all
  const pid_t pid = CloneFromCaller(body, argument);
  ReleaseAll();
  return pid;
}

// The snapshot process when the helper could not clone it or signals hold the world: a
// fork-like clone of the calling thread, on its copy of this stack, with exit signal 0 too.
pid_t ThreadCapture::CloneFromCaller(SnapshotBody body, void* argument) {
  const long pid = RawSyscall::CloneProcess(0);
  if (pid == 0) RunSnapshot(body, argument);
  return static_cast<pid_t>(pid);
}

bool ThreadCapture::RunWhileStopped(const std::function<void(std::span<const ThreadInfo>)>& work) {
  if (!StopAll()) return false;
  work(threads());
  ReleaseAll();
  return true;
}

}  // namespace heapgraph::roots
