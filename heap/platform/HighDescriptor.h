// heap/platform/: a long-lived descriptor of heapgraph's own, kept out of the host's way: moved
// above the low numbers a host reuses (closefrom(3), dup2 onto 3..) and checked before each use
// against the file it was opened on (st_dev/st_ino), so that a number the host closed and reused
// never gets heapgraph's bytes. Async-signal-safe, never allocates. Includes libc only.
#pragma once

#include <sys/types.h>

struct stat;

namespace heapgraph {

class HighDescriptor {
 public:
  // The lowest number Adopt moves to, when the RLIMIT_NOFILE soft limit leaves room.
  static constexpr int kPreferredMinimum = 900;

  // Takes ownership of `fd` (closed here): moves it to a high number (close-on-exec) when it
  // can, else keeps it; remembers its file. False (fd closed) when `fd` is not open.
  bool Adopt(int fd);
  // A forked child, before the host's code runs again: `fd` (closed here) takes over this number
  // (dup3, close-on-exec) and `st`, its file, is the one remembered. The number is not checked:
  // the host cannot have closed it since the fork. Without a number yet, as Adopt. False (fd
  // closed, nothing changed) when dup3 fails.
  bool TakeOver(int fd, const struct stat& st);
  // True while the number still refers to the file adopted.
  bool StillOurs() const;
  int fd() const { return fd_; }
  // Forgets the number without closing it (it may be the host's now).
  void Abandon() { fd_ = -1; }

 private:
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace heapgraph
