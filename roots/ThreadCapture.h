// roots/: stop every thread of the current process and record its registers.
//
//   ThreadCapture capture;
//   if (!capture.StopAll()) { /* capture.error() */ }
//   for (const ThreadInfo& t : capture.threads()) { /* t.tid, t.regs, t.vector_bytes, ... */ }
//   capture.ReleaseAll();
//
// How (after LeakSanitizer's StopTheWorld and libmemunreachable's ThreadCapture): a PtracerThread
// helper PTRACE_SEIZEs and PTRACE_INTERRUPTs every tid in /proc/<pid>/task except the caller's,
// waits for each stop with waitpid(__WALL), and reads NT_PRSTATUS and NT_X86_XSTATE (NT_PRFPREG
// on aarch64). It lists the tasks again until an exact listing (TaskList::ReadConsistent) finds
// no new tid, so threads started during the stop are caught. With many threads (kParallelThreads)
// two helpers attach and detach in parallel, one per parity of the tid, and the main helper makes
// the final listing passes alone, so the "no new thread" proof is the same as with one. A thread
// that exits mid-attach is skipped. A signal the thread dequeued while being stopped
// (signal-delivery-stop) is remembered in ThreadInfo::pending_signal and handed back with
// PTRACE_DETACH; signals that arrive later stay queued in the kernel, so none is lost. Group-stops
// are left to the kernel (a job-control-stopped thread stays stopped). The calling thread's
// registers are taken in-process (SelfRegisters); it keeps running. When the caller is the only
// thread (a program's at-exit check), the caller and the helper share the caller's CPU until the
// helper is joined (CpuPin: no cross-CPU wake-up either way); a snapshot process gets the
// caller's CPU set back.
//
// If ptrace is denied (PTRACE_SEIZE of a live thread fails with EPERM: no CAP_SYS_PTRACE and not
// dumpable, Yama, an existing debugger; or EACCES/ENOSYS: an LSM or seccomp policy, or an
// emulator without ptrace), StopAll() falls back to SignalSuspender and notice() holds one
// line "ptrace denied: ...; falling back to signal suspension" (Options::method selects).
//
// CloneStoppedWorld() stops the world only for the capture and a snapshot: with ptrace, the helper
// clones the snapshot process itself right after the last thread's registers are read, then
// PTRACE_DETACHes every thread, and only then wakes the caller (two hand-offs between the caller
// and the helper instead of four; the threads run again before the caller does). The snapshot
// process is a fork-like clone (no CLONE_VM: its own copy of the whole address space) made with
// CLONE_PARENT, so the calling thread is its parent, and with the helper's exit signal, 0: it
// sends no SIGCHLD and must be reaped with waitpid(pid, &status, __WALL). It starts on its copy of
// the helper's stack (kHelperStackSize; BufferRanges() covers it, so a scan never takes it for a
// root) with the calling thread's TLS (the helper never sets its own) and signal mask. Everything
// it writes, its stack included, lands in its private copy, never in this process. If the helper's
// clone fails or the signal fallback holds the world, the calling thread clones itself while the
// world is stopped and then releases it.
// `not_copied` (heap/runtime/UnwinderMappings.h: memory the snapshot never reads, the unwinder's
// rule table) is left out of the helper's clone: the helper marks every registered range
// MADV_DONTFORK right before the clone and MADV_DOFORK right after it, before any thread runs
// again (a fork() of the program later copies them as usual). The snapshot's /proc/self/maps then
// lacks them. The caller's fallback clone copies them.
//
// Between StopAll() and ReleaseAll() the caller must not allocate, take locks other threads may
// hold, or fork() through glibc (its atfork handlers take malloc locks): a stopped thread may hold
// any of them. Everything StopAll() needs is allocated before it stops anything, sized from the
// live thread count; a stop that meets more threads releases them, grows and stops again
// (Options::first_slots_for_testing), so there is no thread limit.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "roots/CaptureArena.h"
#include "roots/CpuPin.h"
#include "roots/PtracerThread.h"
#include "roots/ScratchPages.h"
#include "roots/SignalSuspender.h"
#include "roots/ThreadInfo.h"

namespace heapgraph {
class UnwinderMappings;
}

namespace heapgraph::roots {

class ThreadCapture {
 public:
  enum class Method {
    kAuto,     // ptrace; signal suspension if ptrace is denied
    kPtrace,   // ptrace only: fail if denied
    kSignals,  // signal suspension only
  };
  struct Options {
    Method method = Method::kAuto;
    // No thread limit: before each stop, the thread slots and listing buffers are sized from the
    // live thread count (CaptureArena::SlotsFor); a stop that meets more threads than that (they
    // were started in between) releases every thread, grows (CaptureArena::GrownSlots) and stops
    // again, up to CaptureArena::kMaxRegrowths times (Stats::regrown). Test hook: the slots of the
    // first attempt (0: from the thread count), to make a stop run out of them.
    size_t first_slots_for_testing = 0;
    // Make the process dumpable for the duration (as LeakSanitizer does): a non-dumpable process
    // (after setuid, or PR_SET_DUMPABLE 0) cannot be ptraced without CAP_SYS_PTRACE.
    bool make_dumpable = true;
    int suspend_signal = 0;  // for the signal fallback; 0: SignalSuspender's default
    // The signal fallback's wait without any new acknowledgement; 0: SignalSuspender's default.
    int suspend_timeout_ms = 0;
    // Ptrace helper tasks: 0 picks two from kParallelThreads threads on (two CPUs or more, Yama
    // not restricting ptrace), else one; 1 or 2 forces that many.
    int helpers = 0;
    // Test hook: runs in the helper task between PTRACE_SEIZE and PTRACE_INTERRUPT of each
    // thread (raw system calls only there). Lets tests make a signal arrive in that window.
    void (*after_seize_for_testing)(pid_t tid, void* argument) = nullptr;
    void* after_seize_argument = nullptr;
  };

  ThreadCapture();
  explicit ThreadCapture(const Options& options);
  ~ThreadCapture();  // releases the world if still stopped
  ThreadCapture(const ThreadCapture&) = delete;
  ThreadCapture& operator=(const ThreadCapture&) = delete;

  // Stops every other thread and records every thread (the caller included, first, with
  // is_caller set). False on failure, with error(); nothing is stopped then.
  bool StopAll();
  // Resumes every stopped thread, re-delivering signals taken while stopping. Idempotent.
  void ReleaseAll();

  // Runs in the snapshot process and returns its exit status (or ends it with _exit()).
  using SnapshotBody = int (*)(void* argument);
  static constexpr size_t kHelperStackSize = 8u << 20;  // the snapshot body runs on a copy of it
  // Two helpers from this many threads on: below it, starting and synchronizing the second
  // helper costs more than it saves.
  static constexpr long kParallelThreads = 256;
  // StopAll(), a snapshot process running body(argument) in a copy of the stopped world (threads()
  // as captured, every thread's memory as it was while stopped), ReleaseAll() (see above). Returns
  // the snapshot's pid; 0 if the world could not be stopped (error()); -errno if it was stopped and
  // released but no snapshot process could be created. Same rules as StopAll() for the caller.
  // `not_copied` (optional): memory the snapshot never reads, left out of its copy (see above).
  pid_t CloneStoppedWorld(SnapshotBody body, void* argument,
                          const UnwinderMappings* not_copied = nullptr);

  // The snapshot's work done in place, without a snapshot process: `in_place->body(argument)`
  // runs in this process's own memory while every thread is stopped, and the threads run again
  // only when it returns (LeakSanitizer's way: no copy-on-write faults for the program's threads
  // afterwards, at the price of a longer stop). It runs in the ptrace helper, on the helper's stack
  // (BufferRanges()), with the calling thread's TLS, with signal handlers of its own (the helper
  // shares no handler table with the program) and the same rules as the snapshot body: raw system
  // calls, no host malloc. If it returns kNeedsCopy, CloneStoppedWorld goes on as above (the
  // world is still stopped) and returns the snapshot's pid; else no snapshot process is made,
  // in_place->status holds what the body returned, in_place->ran is true and the result is 0.
  // Under signal suspension (no ptrace helper) the body is not run: a snapshot process is made.
  static constexpr int kNeedsCopy = -1;
  struct InPlace {
    SnapshotBody body = nullptr;
    int status = 0;
    bool ran = false;
  };
  pid_t CloneStoppedWorld(SnapshotBody body, void* argument, const UnwinderMappings* not_copied,
                          InPlace* in_place);

  // Work the calling thread does while the world is being stopped: `work(argument)` runs once, on
  // the calling thread, after the ptrace helper started stopping the threads and before the caller
  // waits for it (under signal suspension, which has no helper: once the world is stopped, before
  // the caller clones the snapshot). The helper may clone the snapshot process, and release the
  // world, before the work ends: what it makes must reach the snapshot through shared memory that
  // the snapshot waits for (scanner/BlockCopy). Same rules as the stopped world: no allocation, no
  // lock another thread may hold. `ran` says whether it ran (it may have even when the world
  // could not be stopped in the end). Not with an in-place body (the helper would run it beside
  // the work).
  struct Overlap {
    void (*work)(void* argument) = nullptr;
    void* argument = nullptr;
    bool ran = false;
  };
  pid_t CloneStoppedWorld(SnapshotBody body, void* argument, const UnwinderMappings* not_copied,
                          InPlace* in_place, Overlap* overlap);

  bool stopped() const { return stopped_; }
  std::span<const ThreadInfo> threads() const;
  // Which mechanism holds the world: kPtrace or kSignals (meaningful while stopped()).
  Method method_used() const { return method_used_; }
  const std::string& error() const { return error_; }
  // A non-fatal remark from the last StopAll(), e.g. the ptrace-denied fallback line.
  const std::string& notice() const { return notice_; }

  // What the ptrace helper counted during the last StopAll(): listing passes (the last one
  // finds nothing new) and threads that exited while being attached.
  // The *_ms: the main helper's clock, set once the world is released (0 under signal
  // suspension). threads_stopped_ms runs from its first PTRACE_SEIZE to the last PTRACE_DETACH:
  // attach_ms (every thread stopped and recorded), then in_place_ms and snapshot_clone_ms
  // (CloneStoppedWorld() only), then until the detaching starts, then detach_ms.
  struct Stats {
    int passes = 0;  // the main helper's
    int exited_during_attach = 0;
    int helpers = 0;  // ptrace helper tasks used
    int regrown = 0;  // stops that ran out of slots and were retried with larger buffers
    double threads_stopped_ms = 0;
    double attach_ms = 0;
    double snapshot_clone_ms = 0;
    double in_place_ms = 0;  // the in-place body (CloneStoppedWorld with InPlace), world stopped
    double not_copied_advice_ms = 0;  // of snapshot_clone_ms: marking and unmarking not_copied
    double detach_ms = 0;
  };
  Stats stats() const { return stats_; }

  // The address ranges of the buffers StopAll() prepared (task listings, the seen-tid table) and
  // of the ptrace helper's stack: memory of the scan's own that a leak scan must not treat as a
  // root. The capture arena is not among them (its mapping holds nothing else; see threads()).
  std::array<std::pair<uint64_t, uint64_t>, 7> BufferRanges() const;

  struct HelperState;  // shared with the helper task; defined in ThreadCapture.cc

 private:
  // `threads`: the process's thread count, read once per attempt (it sizes `slots` too).
  bool Prepare(size_t slots, long threads);
  // StopWithPtrace() failed because it met more threads than Prepare() made room for (started
  // since the count): the world is released, a retry with more slots may succeed.
  bool RanOutOfSlots() const;
  int HelperCount(long threads) const;
  void StopSecondHelper();
  bool StopWithPtrace();
  pid_t CloneFromCaller(SnapshotBody body, void* argument);
  bool StopWithSignals();
  bool WaitForHelper();
  void RunOverlap();
  void JoinHelper();
  std::string DescribeHelperFailure() const;
  void RestoreDumpable();

  Options options_;
  CaptureArena arena_;
  // Buffers the helper works in, sized by Prepare() before anything is stopped.
  std::vector<pid_t> tids_;              // /proc/<pid>/task listing
  std::vector<pid_t> pending_;           // tids seized in the current pass
  ScratchPages dirents_;                 // getdents64 scratch
  ScratchPages seen_;                    // seen_[tid]: captured or skipped in this StopAll()
  size_t seen_ids_ = 0;                  // thread ids seen_ covers: pid_max + 1
  bool seen_written_ = false;            // seen_ was handed to a stop since it last read zeros
  std::vector<uint8_t> vector_scratch_;  // one thread's NT_X86_XSTATE before it gets a slot
  std::unique_ptr<HelperState> state_;
  std::unique_ptr<PtracerThread> helper_;
  std::unique_ptr<PtracerThread> second_;  // the second helper, for many threads
  std::unique_ptr<SignalSuspender> suspender_;
  bool stopped_ = false;
  SnapshotBody snapshot_body_ = nullptr;  // set for the duration of CloneStoppedWorld()
  void* snapshot_argument_ = nullptr;
  const UnwinderMappings* not_copied_ = nullptr;
  SnapshotBody in_place_body_ = nullptr;
  Overlap* overlap_ = nullptr;  // set for the duration of CloneStoppedWorld()
  int saved_dumpable_ = -1;
  long prepared_threads_ = 0;  // the thread count Prepare() sized the buffers for
  // The caller and a lone helper on one CPU while the caller alone is stopped (CpuPin).
  CpuPin pin_;
  Method method_used_ = Method::kPtrace;
  Stats stats_;
  std::string error_;
  std::string notice_;
};

}  // namespace heapgraph::roots
