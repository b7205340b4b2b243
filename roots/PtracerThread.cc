#include "roots/PtracerThread.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "roots/RawSyscall.h"
#include "roots/SynchronousSignals.h"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif

namespace heapgraph::roots {
namespace {

constexpr int kCloneFlags =
    CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED | CLONE_CHILD_CLEARTID;

size_t PageSize() {
  return static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

sigset_t AsynchronousSignals() {
  sigset_t set;
  sigfillset(&set);
  RemoveSynchronousSignals(&set);
  return set;
}

}  // namespace

PtracerThread::PtracerThread(size_t stack_size) : stack_size_(stack_size) {}

PtracerThread::~PtracerThread() {
  if (tid_ > 0 && !reaped_) Join();
  UnmapStack();
}

void PtracerThread::UnmapStack() {
  if (stack_ != nullptr) munmap(stack_, mapped_bytes_);
  stack_ = nullptr;
}

bool PtracerThread::Start(Body body, void* argument) {
  if (tid_ > 0 && !reaped_) {
    error_ = "helper task already running";
    return false;
  }
  const size_t page = PageSize();
  const size_t stack_size = (stack_size_ + page - 1) / page * page;
  UnmapStack();
  mapped_bytes_ = stack_size + page;
  void* stack = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    error_ = std::string("mmap of the helper stack failed: ") + std::strerror(errno);
    return false;
  }
  stack_ = stack;
  mprotect(stack_, page, PROT_NONE);  // guard page below the stack
  body_ = body;
  argument_ = argument;
  parent_pid_ = getpid();
  reaped_ = false;
  exit_code_ = -1;
  go_.store(0, std::memory_order_relaxed);

  // The helper inherits the mask in force at clone: block asynchronous signals for that moment.
  const sigset_t blocked = AsynchronousSignals();
  sigset_t saved;
  pthread_sigmask(SIG_BLOCK, &blocked, &saved);
  char* stack_top = static_cast<char*>(stack_) + mapped_bytes_;
  running_.store(1, std::memory_order_release);
  const int tid = clone(&PtracerThread::Trampoline, stack_top, kCloneFlags, this, nullptr, nullptr,
                        reinterpret_cast<pid_t*>(&running_));
  const int clone_errno = errno;
  if (tid < 0) running_.store(0, std::memory_order_release);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (tid < 0) {
    error_ = std::string("clone of the helper task failed: ") + std::strerror(clone_errno);
    return false;
  }
  tid_ = tid;
  // Yama ptrace_scope=1 lets only ancestors trace; the helper is our child, so name it. EINVAL
  // just means Yama is not built in.
  prctl(PR_SET_PTRACER, static_cast<unsigned long>(tid_), 0, 0, 0);
  go_.store(1, std::memory_order_release);
  RawSyscall::FutexWake(&go_, 1);
  return true;
}

int PtracerThread::Trampoline(void* self_pointer) {
  auto* self = static_cast<PtracerThread*>(self_pointer);
  RawSyscall::Prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The creating thread may have died before PR_SET_PDEATHSIG took effect.
  if (RawSyscall::Getppid() != self->parent_pid_) return 125;
  while (self->go_.load(std::memory_order_acquire) == 0) {
    RawSyscall::FutexWait(&self->go_, 0, nullptr);
  }
  return self->body_(self->argument_);
}

void PtracerThread::Reap(int status) {
  reaped_ = true;
  if (WIFEXITED(status)) {
    exit_code_ = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit_code_ = 128 + WTERMSIG(status);
  }
  // The helper's rights are not needed any more; 0 clears the Yama exception.
  prctl(PR_SET_PTRACER, 0UL, 0, 0, 0);
}

int PtracerThread::Join() {
  if (tid_ <= 0) return -1;
  while (!reaped_) {
    int status = 0;
    const pid_t r = waitpid(tid_, &status, __WALL);
    if (r == tid_) {
      Reap(status);
    } else if (r < 0 && errno != EINTR) {
      reaped_ = true;  // someone else reaped it (ECHILD); its exit code is lost
    }
  }
  return exit_code_;
}

bool PtracerThread::Exited() {
  if (tid_ <= 0 || reaped_) return true;
  int status = 0;
  const pid_t r = waitpid(tid_, &status, __WALL | WNOHANG);
  if (r == tid_) Reap(status);
  if (r < 0 && errno == ECHILD) reaped_ = true;
  return reaped_;
}

}  // namespace heapgraph::roots
