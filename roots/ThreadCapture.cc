#include "roots/ThreadCapture.h"

#include <elf.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "heap/runtime/UnwinderMappings.h"
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

// Memory shared by the calling thread and the helper tasks. The helpers write everything but
// `phase` before publishing kStopped, kFailed or kReleased (release); the caller reads it after
// observing that phase (acquire). While the helpers run, the caller touches nothing else here.
//
// With two helpers (many threads, see ThreadCapture.h), each first attaches the tids of its own
// parity (tid % 2 == index) in listing passes of its own, so they never touch the same thread or
// the same seen[] byte. The main helper (0) then waits for the second to report kSecondAttached
// and makes the final passes alone over every tid: a complete listing with nothing new proves no
// running thread is left to start another. seen[tid] holds 1 + the index of the helper that
// seized tid; only that helper may wait for it or detach it.
struct ThreadCapture::HelperState {
  // kReleased: the helper cloned the snapshot process and detached every thread (it is exiting).
  enum Phase : uint32_t { kAttaching, kStopped, kFailed, kReleasing, kReleased };
  // The second helper's progress and the main helper's command to it (futex word `second`).
  enum Second : uint32_t { kSecondAttaching, kSecondAttached, kSecondDetach };

  // One helper task's buffers and counts.
  struct Worker {
    uint8_t index = 0;                  // 0: the main helper; 1: the second
    pid_t parity = -1;                  // attach only tids with tid % 2 == parity; -1: every tid
    std::span<pid_t> tids;              // listing buffer
    std::span<char> dirents;            // getdents64 buffer
    std::span<pid_t> pending;           // tids seized in the current pass, not yet waited for
    std::span<uint8_t> vector_scratch;  // NT_X86_XSTATE lands here before a slot is claimed
    int passes = 0;
    int exited_during_attach = 0;
  };

  std::atomic<uint32_t> phase{kAttaching};  // futex word
  std::atomic<uint32_t> second{kSecondAttaching};
  const PtracerThread* second_helper = nullptr;  // null: one helper does everything
  Worker workers[2];
  pid_t caller_tid = 0;
  TaskList tasks;
  std::span<uint8_t> seen;  // seen[tid]: 1 + the seizing helper's index, or 1 if skipped
  CaptureArena* arena = nullptr;
  void (*after_seize)(pid_t, void*) = nullptr;
  void* after_seize_argument = nullptr;
  // Set by CloneStoppedWorld(): the helper clones the snapshot process once every thread is
  // stopped and recorded. snapshot_pid is its pid, or -errno if the clone failed (the helper then
  // publishes kStopped and the caller clones instead).
  ThreadCapture::SnapshotBody snapshot_body = nullptr;
  void* snapshot_argument = nullptr;
  long snapshot_pid = 0;
  // Ranges the snapshot does not get (MADV_DONTFORK around the helper's clone); may be null.
  const UnwinderMappings* not_copied = nullptr;
  // Set by CloneStoppedWorld() with InPlace: run by the helper before any clone, world stopped;
  // in_place_ran once it returned something else than kNeedsCopy (its status in in_place_status).
  ThreadCapture::SnapshotBody in_place_body = nullptr;
  int in_place_status = 0;
  bool in_place_ran = false;
  uint64_t caller_signal_mask = 0;  // the snapshot's mask (the helper blocks asynchronous signals)
  const CpuPin* pin = nullptr;      // the caller's CPU pin: a snapshot process gets its set back

  // The first failure, claimed through `failed`; the caller turns it into a message once the
  // helpers have stopped writing.
  std::atomic<bool> failed{false};
  const char* failed_step = nullptr;
  pid_t failed_tid = 0;
  int failed_errno = 0;
  bool denied = false;  // PTRACE_SEIZE of a live thread refused (EPERM, EACCES, ENOSYS)

  int64_t seize_started_ns = 0;  // before the first PTRACE_SEIZE
  int64_t attached_ns = 0;       // every thread stopped and recorded
  int64_t in_place_ns = 0;       // the in-place body's duration (0: not run)
  int64_t cloned_ns = 0;         // the snapshot process cloned (0: none)
  int64_t advice_ns = 0;         // of the clone step: the MADV_DONTFORK and MADV_DOFORK calls
  int64_t detaching_ns = 0;      // before the first PTRACE_DETACH
  int64_t released_ns = 0;       // after the last PTRACE_DETACH
};

namespace {

using State = ThreadCapture::HelperState;
using Worker = ThreadCapture::HelperState::Worker;

constexpr int kMaxCapturePasses = 100;
constexpr size_t kDirentBytes = 64 * 1024;

// ---- Helper task side: raw system calls only, no allocation, no errno. ----------------------

enum class Outcome { kCaptured, kGone, kFailed };

void Fail(State* s, const char* step, pid_t tid, long result, bool denied = false) {
  if (s->failed.exchange(true, std::memory_order_acq_rel)) return;  // keep the first failure
  s->failed_step = step;
  s->failed_tid = tid;
  s->failed_errno = static_cast<int>(-result);
  s->denied = denied;
}

bool Failed(const State* s) {
  return s->failed.load(std::memory_order_acquire);
}

// Marks tid as this worker's; true if it was seen before (by either helper).
bool Seen(State* s, const Worker* w, pid_t tid) {
  const auto index = static_cast<size_t>(tid);
  if (index >= s->seen.size()) return false;
  const bool seen = s->seen[index] != 0;
  if (!seen) s->seen[index] = static_cast<uint8_t>(1 + w->index);
  return seen;
}

bool Owns(const State* s, const Worker* w, pid_t tid) {
  const auto index = static_cast<size_t>(tid);
  const uint8_t owner = index < s->seen.size() ? s->seen[index] : 1;
  return owner == 1 + w->index;
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
    Fail(s, "PTRACE_SEIZE", tid, r, r == -EPERM || r == -EACCES || r == -ENOSYS);
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
Outcome WaitForStop(Worker* w, pid_t tid, int* resume_signal) {
  for (;;) {
    int status = 0;
    const long r = RawSyscall::Wait4(tid, &status, __WALL);
    if (r == -EINTR) continue;
    if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
      ++w->exited_during_attach;
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
Outcome Record(State* s, Worker* w, pid_t tid, int resume_signal) {
  ThreadInfo info;
  size_t gp_size = sizeof(info.regs);
  long r = GetRegset(tid, NT_PRSTATUS, info.regs.data(), &gp_size);
  if (r == -ESRCH) return Outcome::kGone;  // killed (SIGKILL) while stopped
  if (r < 0) {
    Fail(s, "PTRACE_GETREGSET(NT_PRSTATUS)", tid, r);
    return Outcome::kFailed;
  }
  size_t vector_size = w->vector_scratch.size();
#if defined(__x86_64__)
  r = GetRegset(tid, NT_X86_XSTATE, w->vector_scratch.data(), &vector_size);
  if (r < 0 && r != -ESRCH) {  // no XSAVE: the FXSAVE image has xmm0-15
    vector_size = std::min<size_t>(512, w->vector_scratch.size());
    r = GetRegset(tid, NT_PRFPREG, w->vector_scratch.data(), &vector_size);
  }
#else
  r = GetRegset(tid, NT_PRFPREG, w->vector_scratch.data(), &vector_size);
#endif
  if (r < 0) vector_size = 0;
  ThreadInfo* slot = s->arena->Claim();
  if (slot == nullptr) {
    Fail(s, "claiming a slot (more threads than prepared for)", tid, -ENOBUFS);
    return Outcome::kFailed;
  }
  *slot = info;
  slot->tid = tid;
  slot->is_main = tid == s->tasks.pid();
  slot->pending_signal = resume_signal;
  slot->stack_pointer = static_cast<uintptr_t>(info.regs[ThreadInfo::kStackPointer]);
  const std::span<uint8_t> buffer = s->arena->VectorBuffer(slot);
  vector_size = std::min(vector_size, buffer.size());
  std::memcpy(buffer.data(), w->vector_scratch.data(), vector_size);
  slot->vector_bytes = buffer.first(vector_size);
  return Outcome::kCaptured;
}

void Detach(pid_t tid, int signal) {
  RawSyscall::Ptrace(PTRACE_DETACH, tid, 0, static_cast<uintptr_t>(signal));
}

// Seizes every listed tid of the worker's parity not seen before; returns how many are pending,
// or -1 on failure. *complete is false when the listing may have missed a thread.
long SeizeNewThreads(State* s, Worker* w, bool* complete) {
  const long listed = s->tasks.ReadConsistent(w->tids, w->dirents, complete);
  if (listed < 0) {
    Fail(s, "listing /proc/<pid>/task", 0, listed);
    return -1;
  }
  long pending = 0;
  for (pid_t tid : w->tids.first(static_cast<size_t>(listed))) {
    if (tid == s->caller_tid || (w->parity >= 0 && tid % 2 != w->parity)) continue;
    if (Seen(s, w, tid)) continue;
    const Outcome outcome = Seize(s, tid);
    if (outcome == Outcome::kFailed) break;
    if (outcome == Outcome::kCaptured) w->pending[static_cast<size_t>(pending++)] = tid;
  }
  return pending;
}

// Waits for each pending tid and records it; after a failure, only waits and detaches.
void CollectPending(State* s, Worker* w, long pending) {
  for (pid_t tid : w->pending.first(static_cast<size_t>(pending))) {
    int resume_signal = 0;
    if (WaitForStop(w, tid, &resume_signal) != Outcome::kCaptured) continue;
    if (Failed(s) || Record(s, w, tid, resume_signal) == Outcome::kFailed) {
      Detach(tid, resume_signal);
    }
  }
}

bool AttachAll(State* s, Worker* w) {
  for (int pass = 1; pass <= kMaxCapturePasses; ++pass) {
    ++w->passes;
    bool complete = false;
    const long pending = SeizeNewThreads(s, w, &complete);
    if (pending > 0) CollectPending(s, w, pending);
    if (Failed(s) || pending < 0) return false;
    // A complete listing with nothing new: every thread is stopped and none can start another
    // (for a worker with a parity: none of that parity is left running).
    if (pending == 0 && complete) return true;
  }
  Fail(s, "attaching (threads kept appearing)", 0, -EAGAIN);
  return false;
}

void DetachOwned(const State* s, const Worker* w) {
  for (const ThreadInfo& t : s->arena->Threads()) {
    if (!t.is_caller && Owns(s, w, t.tid)) Detach(t.tid, t.pending_signal);
  }
}

void Signal(std::atomic<uint32_t>* word, uint32_t value) {
  word->store(value, std::memory_order_release);
  RawSyscall::FutexWake(word, INT_MAX);
}

// Waits while `second` holds `value`; false if the second helper exited first (the kernel then
// detached its tracees).
bool WaitForSecond(State* s, uint32_t value) {
  const timespec tick{0, 10 * 1000000L};
  while (s->second.load(std::memory_order_acquire) == value) {
    if (!s->second_helper->Running()) return s->second.load(std::memory_order_acquire) != value;
    RawSyscall::FutexWait(&s->second, value, &tick);  // the tick notices the helper's death
  }
  return true;
}

// Both helpers detach their own threads at once; returns once every thread is detached.
void DetachEveryThread(State* s) {
  s->detaching_ns = RawSyscall::MonotonicNs();
  if (s->second_helper != nullptr) Signal(&s->second, State::kSecondDetach);
  DetachOwned(s, &s->workers[0]);
  if (s->second_helper != nullptr) {
    while (s->second_helper->Running()) {  // it exits right after its last detach
      RawSyscall::FutexWaitShared(s->second_helper->running_word(), 1, nullptr);
    }
  }
  s->released_ns = RawSyscall::MonotonicNs();
}

int SecondHelperMain(void* argument) {
  auto* s = static_cast<State*>(argument);
  AttachAll(s, &s->workers[1]);  // a failure is in s
  Signal(&s->second, State::kSecondAttached);
  while (s->second.load(std::memory_order_acquire) == State::kSecondAttached) {
    RawSyscall::FutexWait(&s->second, State::kSecondAttached, nullptr);
  }
  DetachOwned(s, &s->workers[1]);
  return 0;
}

bool AttachEveryThread(State* s) {
  s->seize_started_ns = RawSyscall::MonotonicNs();
  Worker* main = &s->workers[0];
  const bool attached = AttachAll(s, main);
  if (s->second_helper == nullptr) return attached;
  if (!WaitForSecond(s, State::kSecondAttaching)) {
    Fail(s, "the second ptrace helper task died while stopping threads", 0, -ECHILD);
  }
  if (!attached || Failed(s)) return false;
  main->parity = -1;  // the final passes: every tid, by this helper alone
  return AttachAll(s, main);
}

bool AttachEveryThreadTimed(State* s) {
  const bool attached = AttachEveryThread(s);
  s->attached_ns = RawSyscall::MonotonicNs();
  return attached;
}

void Publish(State* s, uint32_t phase) {
  Signal(&s->phase, phase);
}

// Runs in a snapshot process and ends it. Not [[noreturn]]: under ASan a call to a noreturn
// function makes it unpoison "the stack", which it cannot find on the helper's stack (a warning).
void RunSnapshot(ThreadCapture::SnapshotBody body, void* argument) {
  const int status = body(argument);
  for (;;) RawSyscall::Call(SYS_exit_group, status);
}

// Marks (MADV_DONTFORK) or unmarks (MADV_DOFORK) every range of s->not_copied. Invariant: the
// registry cannot change in between (every thread that could map or unmap is stopped, the caller
// waits for the helper), so DOFORK undoes exactly what DONTFORK did. Failures are ignored: a
// range the call could not mark is merely copied.
void AdviseNotCopied(const State* s, int advice) {
  if (s->not_copied == nullptr) return;
  s->not_copied->ForEach([advice](uint64_t begin, uint64_t end) {
    RawSyscall::Call(SYS_madvise, static_cast<long>(begin), static_cast<long>(end - begin), advice);
  });
}

// The snapshot process, cloned while every thread is stopped. Invariant: without CLONE_VM the
// child owns a copy of the whole address space, so it may run on (its copy of) this helper stack
// and write anywhere without touching the parent; CLONE_PARENT makes the calling thread its
// parent (the helper exits before the snapshot is reaped), and it inherits the helper's exit
// signal, 0. The child keeps the helper's registers, hence the calling thread's TLS.
bool CloneSnapshot(State* s) {
  AdviseNotCopied(s, MADV_DONTFORK);
  const int64_t advised = RawSyscall::MonotonicNs();
  const long pid = RawSyscall::CloneProcess(CLONE_PARENT);
  if (pid == 0) {
    RawSyscall::SetSignalMask(&s->caller_signal_mask);
    if (s->pin != nullptr) s->pin->RestoreIn();
    RunSnapshot(s->snapshot_body, s->snapshot_argument);
  }
  const int64_t cloned = RawSyscall::MonotonicNs();
  AdviseNotCopied(s, MADV_DOFORK);  // before any thread runs again, the clone failed or not
  s->advice_ns = advised - s->attached_ns + RawSyscall::MonotonicNs() - cloned;
  s->snapshot_pid = pid;
  s->cloned_ns = RawSyscall::MonotonicNs();
  return pid > 0;
}

// The in-place body, if any, in this helper task while every thread is stopped. True when it did
// the snapshot's work (no snapshot process is needed).
bool RunInPlace(State* s) {
  if (s->in_place_body == nullptr) return false;
  const int64_t started = RawSyscall::MonotonicNs();
  const int status = s->in_place_body(s->snapshot_argument);
  s->in_place_ns = RawSyscall::MonotonicNs() - started;
  if (status == ThreadCapture::kNeedsCopy) return false;
  s->in_place_status = status;
  s->in_place_ran = true;
  return true;
}

int HelperMain(void* argument) {
  auto* s = static_cast<State*>(argument);
  if (!AttachEveryThreadTimed(s)) {
    DetachEveryThread(s);
    Publish(s, State::kFailed);
    return 1;
  }
  // Detach before waking the caller: the threads run again without waiting for it to be
  // scheduled.
  if (s->snapshot_body != nullptr && (RunInPlace(s) || CloneSnapshot(s))) {
    DetachEveryThread(s);
    Publish(s, State::kReleased);
    return 0;
  }
  Publish(s, State::kStopped);
  for (uint32_t phase = s->phase.load(std::memory_order_acquire); phase != State::kReleasing;
       phase = s->phase.load(std::memory_order_acquire)) {
    RawSyscall::FutexWait(&s->phase, phase, nullptr);
  }
  DetachEveryThread(s);
  return 0;
}

// ---- Calling thread side. ---------------------------------------------------------------------

}  // namespace

ThreadCapture::ThreadCapture() : ThreadCapture(Options()) {}

ThreadCapture::ThreadCapture(const Options& options) : options_(options) {}

ThreadCapture::~ThreadCapture() {
  ReleaseAll();
  pin_.Unpin();
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
  // Sized from the thread count now; grown and retried when threads started since then do not
  // fit (the failed stop has released every thread: nothing allocates while the world is
  // stopped).
  long threads = TaskList().CountThreads();
  size_t slots = options_.first_slots_for_testing != 0 ? options_.first_slots_for_testing
                                                       : CaptureArena::SlotsFor(threads);
  for (int regrown = 0;; ++regrown) {
    if (!Prepare(slots, threads)) return false;
    const bool stopped = StopWithPtrace();
    stats_.regrown = regrown;
    if (stopped) return true;
    if (!RanOutOfSlots()) break;
    if (regrown == CaptureArena::kMaxRegrowths) {
      error_ =
          "stopping threads failed: threads kept being started faster than the capture "
          "could grow (" +
          std::to_string(slots) + " slots after " + std::to_string(CaptureArena::kMaxRegrowths) +
          " retries)";
      return false;
    }
    threads = TaskList().CountThreads();
    slots = CaptureArena::GrownSlots(slots, threads);
    error_.clear();
  }
  if (!state_->denied || options_.method != Method::kAuto) return false;
  notice_ = error_ + "; falling back to signal suspension";
  error_.clear();
  return StopWithSignals();
}

bool ThreadCapture::Prepare(size_t slots, long threads) {
  const size_t vector_size = VectorState::CaptureSize();
  // Other threads' vector registers are scanned with the XSAVE layout: read it (CPUID) now, not
  // in the helper while they are stopped. A program whose only thread is the caller needs none.
  if (threads != 1) VectorState::LoadLayout();
  prepared_threads_ = threads;
  if (!arena_.Reserve(slots, vector_size)) {
    error_ = "cannot map the capture arena for " + std::to_string(slots) + " threads";
    return false;
  }
  const int helpers = HelperCount(threads);
  // Each helper gets its own part of every buffer (the second one's only with two helpers).
  tids_.resize(2 * slots);
  pending_.resize(2 * slots);
  vector_scratch_.resize(2 * vector_size);
  if (seen_ids_ == 0) seen_ids_ = TaskList::PidMax() + 1;
  if (!dirents_.Reserve(2 * kDirentBytes) || !seen_.Reserve(seen_ids_)) {
    error_ = "cannot map the thread listing buffers";
    return false;
  }
  if (seen_written_) seen_.Zero();  // the ids the last stop met
  seen_written_ = true;
  if (!helper_) helper_ = std::make_unique<PtracerThread>(kHelperStackSize);
  if (helpers > 1 && !second_) second_ = std::make_unique<PtracerThread>();
  state_ = std::make_unique<HelperState>();
  state_->caller_tid = RawSyscall::Gettid();
  state_->pin = &pin_;
  for (uint8_t i = 0; i < 2; ++i) {
    HelperState::Worker& w = state_->workers[i];
    w.index = i;
    w.parity = helpers > 1 ? i : -1;
    w.tids = std::span(tids_).subspan(i * slots, slots);
    w.pending = std::span(pending_).subspan(i * slots, slots);
    w.dirents = std::span(reinterpret_cast<char*>(dirents_.bytes().data()) + i * kDirentBytes,
                          kDirentBytes);
    w.vector_scratch = std::span(vector_scratch_).subspan(i * vector_size, vector_size);
  }
  state_->second_helper = helpers > 1 ? second_.get() : nullptr;
  state_->seen = seen_.bytes().first(seen_ids_);
  state_->arena = &arena_;
  state_->after_seize = options_.after_seize_for_testing;
  state_->after_seize_argument = options_.after_seize_argument;
  state_->snapshot_body = snapshot_body_;
  state_->snapshot_argument = snapshot_argument_;
  state_->not_copied = not_copied_;
  state_->in_place_body = in_place_body_;
  state_->in_place_ran = false;
  state_->in_place_ns = 0;
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  std::memcpy(&state_->caller_signal_mask, &mask, sizeof(state_->caller_signal_mask));
  if (options_.make_dumpable) {
    saved_dumpable_ = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (saved_dumpable_ != 1) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  }
  return true;
}

bool ThreadCapture::RanOutOfSlots() const {
  return state_ != nullptr && state_->failed.load(std::memory_order_acquire) &&
         state_->failed_errno == ENOBUFS;
}

// Two helpers for many threads on two CPUs or more, unless Yama restricts ptrace (it keeps one
// PR_SET_PTRACER exception per process, so only one helper could be named).
int ThreadCapture::HelperCount(long threads) const {
  if (options_.helpers == 1 || options_.helpers == 2) return options_.helpers;
  // The thread count first: below kParallelThreads (nearly every check) nothing else is read.
  if (threads < kParallelThreads) return 1;
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return 1;
  if (FILE* yama = std::fopen("/proc/sys/kernel/yama/ptrace_scope", "re")) {
    int scope = 0;
    const bool read = std::fscanf(yama, "%d", &scope) == 1;
    std::fclose(yama);
    if (!read || scope != 0) return 1;
  }
  return 2;
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
  // The second helper first: the main one reads second_helper as soon as it starts.
  if (state_->second_helper != nullptr && !second_->Start(&SecondHelperMain, state_.get())) {
    state_->second_helper = nullptr;  // one helper does it all
    state_->workers[0].parity = -1;
  }
  // The caller alone, with no work of its own to overlap with the helper's: the helper works
  // while the caller waits, never beside it (CpuPin).
  const bool overlaps = overlap_ != nullptr && !overlap_->ran;
  if (state_->second_helper == nullptr && prepared_threads_ == 1 && !overlaps) pin_.Pin();
  if (!helper_->Start(&HelperMain, state_.get())) {
    pin_.Unpin();
    error_ = helper_->error();
    StopSecondHelper();
    RestoreDumpable();
    return false;
  }
  RunOverlap();  // while the helper stops the threads (and clones)
  const bool stopped = WaitForHelper();
  const HelperState::Worker* workers = state_->workers;
  stats_.passes = workers[0].passes;
  stats_.exited_during_attach = workers[0].exited_during_attach + workers[1].exited_during_attach;
  stats_.helpers = state_->second_helper != nullptr ? 2 : 1;
  if (!stopped) {
    helper_->Join();
    pin_.Unpin();
    StopSecondHelper();
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
  pin_.Unpin();
  if (state_->second_helper != nullptr) second_->Join();
  const HelperState& s = *state_;
  auto ms = [](int64_t from, int64_t to) { return static_cast<double>(to - from) / 1e6; };
  stats_.threads_stopped_ms = ms(s.seize_started_ns, s.released_ns);
  stats_.attach_ms = ms(s.seize_started_ns, s.attached_ns);
  stats_.in_place_ms = static_cast<double>(s.in_place_ns) / 1e6;
  stats_.snapshot_clone_ms = s.cloned_ns != 0 ? ms(s.attached_ns + s.in_place_ns, s.cloned_ns) : 0;
  stats_.not_copied_advice_ms = static_cast<double>(s.advice_ns) / 1e6;
  stats_.detach_ms = ms(s.detaching_ns, s.released_ns);
  RestoreDumpable();
}

// Only when the main helper failed to start or died: the kernel detaches the tracees of a helper
// that dies.
void ThreadCapture::StopSecondHelper() {
  if (state_->second_helper == nullptr) return;
  if (!second_->Exited()) kill(second_->tid(), SIGKILL);
  second_->Join();
}

void ThreadCapture::RunOverlap() {
  if (overlap_ == nullptr || overlap_->ran) return;
  overlap_->work(overlap_->argument);
  overlap_->ran = true;
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
    // Exited() first: the helper publishes its last phase before it exits (kReleased).
    if (helper_->Exited() && state_->phase.load(std::memory_order_acquire) == phase) {
      error_ = "the ptrace helper task died while stopping threads (status " +
               std::to_string(helper_->Join()) + ")";
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
    if (options_.suspend_timeout_ms > 0) options.timeout_ms = options_.suspend_timeout_ms;
    options.first_slots_for_testing = options_.first_slots_for_testing;
    suspender_ = std::make_unique<SignalSuspender>(options);
  }
  const bool suspended = suspender_->SuspendAll();
  stats_.regrown = suspender_->regrown();
  if (!suspended) {
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

std::array<std::pair<uint64_t, uint64_t>, 7> ThreadCapture::BufferRanges() const {
  constexpr std::pair<uint64_t, uint64_t> kNone{0, 0};
  return {Range(tids_),
          Range(pending_),
          dirents_.range(),
          seen_.range(),
          Range(vector_scratch_),
          helper_ ? helper_->StackRange() : kNone,
          second_ ? second_->StackRange() : kNone};
}

pid_t ThreadCapture::CloneStoppedWorld(SnapshotBody body, void* argument,
                                       const UnwinderMappings* not_copied) {
  return CloneStoppedWorld(body, argument, not_copied, nullptr);
}

pid_t ThreadCapture::CloneStoppedWorld(SnapshotBody body, void* argument,
                                       const UnwinderMappings* not_copied, InPlace* in_place) {
  return CloneStoppedWorld(body, argument, not_copied, in_place, nullptr);
}

pid_t ThreadCapture::CloneStoppedWorld(SnapshotBody body, void* argument,
                                       const UnwinderMappings* not_copied, InPlace* in_place,
                                       Overlap* overlap) {
  snapshot_body_ = body;
  snapshot_argument_ = argument;
  not_copied_ = not_copied;
  in_place_body_ = in_place != nullptr ? in_place->body : nullptr;
  if (in_place != nullptr) in_place->ran = false;
  overlap_ = overlap;
  if (overlap_ != nullptr) overlap_->ran = false;
  const bool stopped = StopAll();
  if (stopped) RunOverlap();  // signal suspension: before the caller clones
  snapshot_body_ = nullptr;
  snapshot_argument_ = nullptr;
  not_copied_ = nullptr;
  in_place_body_ = nullptr;
  overlap_ = nullptr;
  if (!stopped) return 0;
  if (!stopped_) {  // the helper did it all
    if (in_place != nullptr && state_->in_place_ran) {
      in_place->ran = true;
      in_place->status = state_->in_place_status;
      return 0;
    }
    return static_cast<pid_t>(state_->snapshot_pid);
  }
  const pid_t pid = CloneFromCaller(body, argument);
  ReleaseAll();
  return pid;
}

// The snapshot process when the helper could not clone it or signals hold the world: a
// fork-like clone of the calling thread, on its copy of this stack, with exit signal 0 too.
pid_t ThreadCapture::CloneFromCaller(SnapshotBody body, void* argument) {
  const long pid = RawSyscall::CloneProcess(0);
  if (pid == 0) {
    pin_.RestoreIn();
    RunSnapshot(body, argument);
  }
  return static_cast<pid_t>(pid);
}

}  // namespace heapgraph::roots
