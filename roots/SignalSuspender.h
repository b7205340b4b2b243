// roots/: stop every thread of the current process with a signal, for when ptrace is denied.
//
// In the style of the Boehm GC's pthread_stop_world: SuspendAll() sends a real-time signal (with
// rt_tgsigqueueinfo, carrying a generation number) to every tid in /proc/self/task but the
// caller's. Each thread's handler copies its interrupted registers from the ucontext (GP regs in
// NT_PRSTATUS order, the FXSAVE/XSAVE area from the signal frame) into a pre-allocated
// CaptureArena slot, acknowledges, and sleeps on a futex until ResumeAll(). The task list is read
// again until no new tid appears. Threads that exit before acknowledging are dropped.
//
// Invariants:
//  - one suspension per process at a time (the handler finds its state through one global);
//  - the handler runs with every signal blocked, so signals sent during the stop stay queued and
//    are delivered after ResumeAll(); it never allocates and uses raw system calls only;
//  - a signal carrying a stale generation (a late delivery after a timed-out suspension) is
//    ignored by the handler, which returns at once;
//  - the handler's own frame lies below the interrupted SP (the kernel also skips the 128-byte
//    red zone on x86-64), so the stack above SP - red zone is exactly the interrupted thread's.
// A thread that has the signal blocked cannot be suspended. If it sleeps in a system call (an
// exiting thread inside glibc waiting for a lock a suspended thread holds, a thread parked in
// sigwait), it is recorded from /proc/<pid>/task/<tid>/syscall with SP and IP only and
// registers_complete = false; it sleeps but is not truly suspended.
// Limitations: a thread that has the signal blocked and keeps running, or sleeps uninterruptibly
// for longer than the timeout, makes SuspendAll() fail; threads that are themselves in a signal
// handler are stopped inside it (their SP is the handler's).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "roots/CaptureArena.h"
#include "roots/TaskList.h"
#include "roots/ThreadInfo.h"

namespace heapgraph::roots {

class SignalSuspender {
 public:
  struct Options {
    int signal = 0;  // 0: SIGRTMIN + 7
    // No thread limit: slots are sized before each suspension from the live thread count, and
    // a suspension that meets more threads (started in between) resumes them all, grows and
    // suspends again (CaptureArena::SlotsFor, GrownSlots; regrown()). Test hook: the slots of
    // the first attempt (0: from the thread count).
    size_t first_slots_for_testing = 0;
    // How long a listing pass may go without any new acknowledgement (not the pass's whole time:
    // 10,000 threads on two busy CPUs took longer than this to run their handlers).
    int timeout_ms = 5000;
  };

  SignalSuspender();
  explicit SignalSuspender(const Options& options);
  ~SignalSuspender();  // resumes threads that are still suspended
  SignalSuspender(const SignalSuspender&) = delete;
  SignalSuspender& operator=(const SignalSuspender&) = delete;

  // Suspends every other thread and records every thread (the caller first, is_caller set).
  // False with error() on failure; nothing is suspended then.
  bool SuspendAll();
  // Wakes every suspended thread and waits until each has left the handler. Idempotent.
  void ResumeAll();

  bool suspended() const { return suspended_; }
  std::span<const ThreadInfo> threads() const { return arena_.Threads(); }
  const std::string& error() const { return error_; }
  int signal() const { return signal_; }
  // Attempts of the last SuspendAll() that ran out of slots and were retried with more.
  int regrown() const { return regrown_; }

  struct Shared;  // state the handler reaches through a global; defined in SignalSuspender.cc

 private:
  bool Prepare(size_t slots);
  bool InstallHandler();
  // Publishes this suspension to the handler and records the calling thread.
  void Begin();
  // Signals and waits, pass after pass, until a pass finds no new thread. Returns nullptr on
  // success, else a static failure description (and maybe an errno). Never allocates.
  const char* RunPasses(int* error_number);
  // Sends the signal to listed tids not yet signalled; returns how many were sent, or -errno.
  // *found_new: some tid was new, or the listing may have missed one.
  long SignalNewThreads(bool* found_new);
  // Settles requests whose thread is gone, or sleeps with the signal blocked (recorded with SP
  // and IP only); returns how many it settled.
  long SettleUnresponsive();
  // Waits until `*expected` handlers have acknowledged, lowering it for signalled threads that
  // exited first. False when none acknowledged for timeout_ms.
  bool WaitForAcknowledgements(long* expected);
  bool AllAcknowledged() const;
  void WakeAndDrain();

  Options options_;
  int signal_;
  CaptureArena arena_;
  TaskList tasks_;
  std::vector<pid_t> tids_;
  std::vector<char> dirents_;
  // One per thread sent a request in this SuspendAll(). Reserved to the slots before anything
  // is suspended, so push_back never allocates while threads are suspended.
  struct Request {
    pid_t tid = 0;
    bool settled = false;  // gone, or recorded as a blocked sleeper: no acknowledgement due
    // Where it was last seen sleeping in a system call with the signal blocked (0: it was not).
    // Only a thread seen there twice in a row is recorded as a blocked sleeper.
    uint64_t sleeper_sp = 0;
    uint64_t sleeper_pc = 0;
  };
  std::vector<Request> requests_;
  // Indexed by tid: the generation whose request that thread acknowledged. pid_max + 1 entries.
  std::unique_ptr<std::atomic<uint32_t>[]> acked_by_tid_;
  size_t acked_size_ = 0;
  bool suspended_ = false;
  int regrown_ = 0;
  std::string error_;
};

}  // namespace heapgraph::roots
