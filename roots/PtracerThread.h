// roots/: a helper task that may ptrace the threads of this process.
//
// ptrace refuses a tracer in the tracee's own thread group, so the helper cannot be a pthread.
// It is created with clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED |
// CLONE_CHILD_CLEARTID, the cleared word being Running()'s) and exit signal 0
// on its own mmap'd stack (with a guard page): it shares memory, cwd and descriptors with the
// process but is a separate thread group, invisible in /proc/self/task, and sends no SIGCHLD.
//
// Invariants of the body that runs in the helper:
//  - it runs on the creating thread's TLS, so it must not call libc functions that touch errno or
//    TLS, and must not allocate (a stopped thread may hold the malloc lock): RawSyscall only;
//  - all asynchronous signals are blocked in it (inherited from the creating thread at clone);
//  - it dies with SIGKILL if the creating thread dies (PR_SET_PDEATHSIG), which makes the kernel
//    detach every tracee it still holds.
// The creating thread allows the helper to trace the process (PR_SET_PTRACER, needed under Yama
// ptrace_scope=1) before the body starts.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace heapgraph::roots {

class PtracerThread {
 public:
  using Body = int (*)(void* argument);
  static constexpr size_t kDefaultStackSize = 256 * 1024;

  explicit PtracerThread(size_t stack_size = kDefaultStackSize);
  ~PtracerThread();  // joins a helper that is still running
  PtracerThread(const PtracerThread&) = delete;
  PtracerThread& operator=(const PtracerThread&) = delete;

  // Maps the stack, clones the helper, grants it ptrace rights, then lets it run body(argument).
  // False (see error()) if the helper could not be started; body never runs then.
  bool Start(Body body, void* argument);
  // Waits until the helper has exited and reaps it. Returns its exit code (128 + signal if it was
  // killed), or -1 if none was started.
  int Join();
  // Non-blocking: reaps the helper if it has exited. True once it has.
  bool Exited();

  // False once the helper has exited (the kernel clears the word at exit: CLONE_CHILD_CLEARTID),
  // reaped or not. Allocation- and libc-free: another helper task may poll it, or wait for it
  // with RawSyscall::FutexWaitShared (the kernel's wake at exit is a shared one).
  bool Running() const { return running_.load(std::memory_order_acquire) != 0; }
  const std::atomic<uint32_t>* running_word() const { return &running_; }

  pid_t tid() const { return tid_; }
  // The helper's stack mapping (guard page included), 0, 0 before the first Start(). It stays
  // mapped until the next Start() or destruction.
  std::pair<uint64_t, uint64_t> StackRange() const {
    auto begin = reinterpret_cast<uint64_t>(stack_);
    return {begin, begin + mapped_bytes_};
  }
  const std::string& error() const { return error_; }

 private:
  static int Trampoline(void* self);
  void Reap(int status);
  void UnmapStack();

  size_t stack_size_;
  void* stack_ = nullptr;  // guard page, then stack_size_ bytes
  size_t mapped_bytes_ = 0;
  Body body_ = nullptr;
  void* argument_ = nullptr;
  pid_t tid_ = 0;
  pid_t parent_pid_ = 0;
  bool reaped_ = false;
  int exit_code_ = -1;
  std::atomic<uint32_t> go_{0};       // 0: wait for the parent's preparations; 1: run the body
  std::atomic<uint32_t> running_{0};  // 1 from Start() until the kernel clears it at exit
  std::string error_;
};

}  // namespace heapgraph::roots
