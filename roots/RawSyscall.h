// roots/: Linux system calls issued directly with the syscall instruction.
//
// Why: the ptrace helper task (PtracerThread) shares the caller's TLS, so glibc's wrappers, which
// write errno through TLS, would race with the caller's errno; and code that runs while the world
// is stopped or inside a signal handler must not take libc locks. Every function here returns the
// kernel's raw result: >= 0 on success, -errno on failure. Nothing here allocates or touches errno
// (on architectures without an inline-asm path the fallback goes through syscall(2) and restores
// errno, which is still not safe from the helper task; x86-64 and aarch64 have the asm path).
#pragma once

#include <linux/stat.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace heapgraph::roots {

namespace RawSyscall {

// The six-argument primitive all wrappers below go through.
inline long Call(long nr, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
                 long a6 = 0);

namespace detail {
inline constexpr long kAtFdcwd = -100;
inline constexpr long kFutexWaitShared = 0;         // FUTEX_WAIT
inline constexpr long kFutexWaitPrivate = 0 | 128;  // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
inline constexpr long kFutexWakePrivate = 1 | 128;  // FUTEX_WAKE | FUTEX_PRIVATE_FLAG

template <typename T>
inline long Arg(T* pointer) {
  return static_cast<long>(reinterpret_cast<uintptr_t>(pointer));
}
}  // namespace detail

inline bool Failed(long result) {
  return result < 0 && result > -4096;
}

inline long Ptrace(long request, pid_t tid, uintptr_t addr, uintptr_t data) {
  return Call(SYS_ptrace, request, tid, static_cast<long>(addr), static_cast<long>(data));
}
inline long Wait4(pid_t tid, int* status, int options) {
  return Call(SYS_wait4, tid, detail::Arg(status), options, 0);
}
inline long Open(const char* path, int flags) {
  return Call(SYS_openat, detail::kAtFdcwd, detail::Arg(path), flags, 0);
}
inline long Statx(const char* path, unsigned mask, struct statx* out) {
  return Call(SYS_statx, detail::kAtFdcwd, detail::Arg(path), 0, static_cast<long>(mask),
              detail::Arg(out));
}
inline long Close(int fd) {
  return Call(SYS_close, fd);
}
inline long Read(int fd, void* buffer, size_t size) {
  return Call(SYS_read, fd, detail::Arg(buffer), static_cast<long>(size));
}
inline long Getdents64(int fd, void* buffer, size_t size) {
  return Call(SYS_getdents64, fd, detail::Arg(buffer), static_cast<long>(size));
}
inline pid_t Gettid() {
  return static_cast<pid_t>(Call(SYS_gettid));
}
inline pid_t Getpid() {
  return static_cast<pid_t>(Call(SYS_getpid));
}
inline pid_t Getppid() {
  return static_cast<pid_t>(Call(SYS_getppid));
}
inline long Tgkill(pid_t tgid, pid_t tid, int signal) {
  return Call(SYS_tgkill, tgid, tid, signal);
}
inline long TgSigqueueinfo(pid_t tgid, pid_t tid, int signal, siginfo_t* info) {
  return Call(SYS_rt_tgsigqueueinfo, tgid, tid, signal, detail::Arg(info));
}
inline long SchedYield() {
  return Call(SYS_sched_yield);
}
inline long Prctl(int option, unsigned long a2, unsigned long a3 = 0) {
  return Call(SYS_prctl, option, static_cast<long>(a2), static_cast<long>(a3), 0, 0);
}
// Copies up to `bytes` at `address` of this process into `out` (process_vm_readv on itself),
// never a fault: the bytes copied before the first unreadable page (the kernel copies page by
// page), or a negative errno when none could be. In a snapshot process "this process" is the copy.
inline long ReadOwnMemoryPart(uint64_t address, void* out, size_t bytes) {
  iovec local = {out, bytes};
  iovec remote = {reinterpret_cast<void*>(address), bytes};
  return Call(SYS_process_vm_readv, Getpid(), detail::Arg(&local), 1, detail::Arg(&remote), 1, 0);
}
// ReadOwnMemoryPart() that is true only when every byte was readable.
inline bool ReadOwnMemory(uint64_t address, void* out, size_t bytes) {
  return ReadOwnMemoryPart(address, out, bytes) == static_cast<long>(bytes);
}
// Blocks while *word == expected, for at most `timeout` (relative; nullptr = forever).
inline long FutexWait(const std::atomic<uint32_t>* word, uint32_t expected,
                      const timespec* timeout) {
  return Call(SYS_futex, detail::Arg(word), detail::kFutexWaitPrivate, static_cast<long>(expected),
              detail::Arg(timeout));
}
// FutexWait() for a word the kernel wakes with a shared wake (CLONE_CHILD_CLEARTID's).
inline long FutexWaitShared(const std::atomic<uint32_t>* word, uint32_t expected,
                            const timespec* timeout) {
  return Call(SYS_futex, detail::Arg(word), detail::kFutexWaitShared, static_cast<long>(expected),
              detail::Arg(timeout));
}
inline long FutexWake(const std::atomic<uint32_t>* word, int count) {
  return Call(SYS_futex, detail::Arg(word), detail::kFutexWakePrivate, count);
}
// A fork-like clone: no new stack, so the child returns here too (with 0) on its copy of this
// stack. `flags` carries the exit signal in its low byte (0: the parent gets no signal).
inline long CloneProcess(unsigned long flags) {
  return Call(SYS_clone, static_cast<long>(flags), 0, 0, 0, 0);
}
// Sets this task's signal mask to the kernel's 64-bit set `mask`.
inline long SetSignalMask(const uint64_t* mask) {
  return Call(SYS_rt_sigprocmask, SIG_SETMASK, detail::Arg(mask), 0, sizeof(*mask));
}
[[noreturn]] inline void ExitGroup(int status) {
  for (;;) Call(SYS_exit_group, status);
}
// CLOCK_MONOTONIC in nanoseconds (the system call, not the vDSO).
inline int64_t MonotonicNs() {
  timespec ts{};
  Call(SYS_clock_gettime, CLOCK_MONOTONIC, detail::Arg(&ts));
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
inline long Nanosleep(long nanoseconds) {
  timespec ts{nanoseconds / 1000000000L, nanoseconds % 1000000000L};
  return Call(SYS_nanosleep, detail::Arg(&ts), 0);
}

}  // namespace RawSyscall

#if defined(__x86_64__)
inline long RawSyscall::Call(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  long result;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return result;
}
#elif defined(__aarch64__)
inline long RawSyscall::Call(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  register long x8 __asm__("x8") = nr;
  register long x0 __asm__("x0") = a1;
  register long x1 __asm__("x1") = a2;
  register long x2 __asm__("x2") = a3;
  register long x3 __asm__("x3") = a4;
  register long x4 __asm__("x4") = a5;
  register long x5 __asm__("x5") = a6;
  __asm__ volatile("svc 0"
                   : "+r"(x0)
                   : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                   : "memory");
  return x0;
}
#else
inline long RawSyscall::Call(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  const int saved_errno = errno;
  long result = ::syscall(nr, a1, a2, a3, a4, a5, a6);
  if (result == -1) result = -errno;
  errno = saved_errno;
  return result;
}
#endif

}  // namespace heapgraph::roots
