// roots/: the thread ids of a process, listed from /proc/<pid>/task with raw getdents64 into
// caller-provided buffers. No allocation, no libc, no errno: usable from the ptrace helper task
// and while the world is stopped.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <span>

namespace heapgraph::roots {

class TaskList {
 public:
  // Formats "/proc/<pid>/task" once; pid 0 means this process.
  explicit TaskList(pid_t pid = 0);

  // Writes the listed tids to `out` and returns how many, or -errno. -ENOBUFS when there are more
  // threads than out.size(). `dirents` is scratch space for getdents64 (4 KiB or more).
  long Read(std::span<pid_t> out, std::span<char> dirents) const;
  // Read(), sorted and deduplicated, repeated (a few times at most) until it is exact: readdir of
  // a task directory can skip or repeat live threads when others exit concurrently. Exact means
  // the thread count (CountThreads) was the same before and after the listing and
  // equals the number of distinct tids listed. *complete tells whether the last listing was.
  long ReadConsistent(std::span<pid_t> out, std::span<char> dirents, bool* complete) const;
  // The thread count, or -errno: the link count of /proc/<pid>/task less 2 (the kernel adds
  // the thread count to the directory's 2), or where that is unavailable the "Threads:" line of
  // /proc/<pid>/status (CountThreadsFromStatus). Both are the kernel's one counter.
  long CountThreads() const;
  long CountThreadsFromStatus() const;

  // The state letter from /proc/<pid>/task/<tid>/stat ('R', 'S', 'Z', ...), or 0 when the thread
  // is gone or the file is unreadable.
  char ThreadState(pid_t tid) const;
  // Reads up to out.size() bytes of /proc/<pid>/task/<tid>/<name> (one read call); returns the
  // byte count or -errno.
  long ReadThreadFile(pid_t tid, const char* name, std::span<char> out) const;

  pid_t pid() const { return pid_; }
  const char* path() const { return path_; }

  // /proc/sys/kernel/pid_max (tids are below it), or the kernel's ceiling if unreadable. Uses
  // stdio: call it before stopping anything.
  static size_t PidMax();
  // Writes `value` (>= 0) in decimal followed by NUL; returns the length, or 0 if it does not fit.
  static size_t FormatDecimal(long value, std::span<char> out);

 private:
  pid_t pid_;
  char path_[48];  // "/proc/<pid>/task"
};

}  // namespace heapgraph::roots
