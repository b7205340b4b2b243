#include "heap/runtime/LargeAllocationMonitor.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "heap/platform/LineBuffer.h"
#include "heap/platform/WarningLine.h"

namespace heapgraph {

using format::AllocFunction;

const char* AllocFunctionName(AllocFunction function) {
  switch (function) {
    case AllocFunction::kMalloc:
      return "malloc";
    case AllocFunction::kCalloc:
      return "calloc";
    case AllocFunction::kRealloc:
      return "realloc";
    case AllocFunction::kReallocArray:
      return "reallocarray";
    case AllocFunction::kMemalign:
      return "memalign";
    case AllocFunction::kPosixMemalign:
      return "posix_memalign";
    case AllocFunction::kAlignedAlloc:
      return "aligned_alloc";
    case AllocFunction::kValloc:
      return "valloc";
    case AllocFunction::kPvalloc:
      return "pvalloc";
    case AllocFunction::kMmap:
      return "mmap";
    case AllocFunction::kMremap:
      return "mremap";
    case AllocFunction::kNone:
      break;
  }
  return "?";
}

namespace {

void WarnCannotOpen(const char* name) {
  WarningLine()
      .Append("cannot open large_log ")
      .Append(name)
      .AppendDetail(strerror(errno))
      .Append("; logging to stderr")
      .Write();
}

}  // namespace

void LargeAllocationMonitor::Configure(uint64_t threshold, const char* log_path, int dir_fd) {
  threshold_.store(threshold, std::memory_order_relaxed);
  int old = fd_;
  fd_ = 2;
  if (old > 2) close(old);
  if (log_dir_.StillOurs()) close(log_dir_.fd());
  log_dir_.Abandon();
  if (log_path == nullptr || strcmp(log_path, "-") == 0) return;
  if (log_path[0] == '\0') {
    if (dir_fd < 0) return;
    if (log_dir_.Adopt(fcntl(dir_fd, F_DUPFD_CLOEXEC, 0))) fd_ = -1;  // opened by OpenDefaultLog
    return;
  }
  int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) {
    fd_ = fd;
  } else {
    WarnCannotOpen(log_path);
  }
}

void LargeAllocationMonitor::OpenDefaultLog() {
  int fd = -1;
  if (log_dir_.StillOurs()) {
    fd = openat(log_dir_.fd(), kDefaultLog, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                0600);
  } else {
    errno = EBADF;  // the program closed (or reused) the directory's descriptor
  }
  if (fd < 0) WarnCannotOpen(kDefaultLog);
  fd_ = fd >= 0 ? fd : 2;
}

void LargeAllocationMonitor::SetCallback(LargeAllocationCallback callback, void* user_data) {
  user_data_.store(user_data, std::memory_order_relaxed);
  callback_.store(callback, std::memory_order_release);
}

void LargeAllocationMonitor::LockLog() {
  while (log_lock_.exchange(1, std::memory_order_acquire) != 0) sched_yield();
}

void LargeAllocationMonitor::UnlockLog() {
  log_lock_.store(0, std::memory_order_release);
}

void LargeAllocationMonitor::Report(void* address, uint64_t size, AllocFunction function,
                                    const uintptr_t* frames, uint32_t depth,
                                    const ModuleMap* modules) {
  reported_.fetch_add(1, std::memory_order_relaxed);
  LineBuffer line;
  line.Append("heapgraph: large allocation of ")
      .AppendDecimal(size)
      .Append(" bytes by ")
      .Append(AllocFunctionName(function))
      .Append(" at ")
      .AppendHex(reinterpret_cast<uintptr_t>(address))
      .Append(" (thread ")
      .AppendDecimal(static_cast<uint64_t>(syscall(SYS_gettid)))
      .Append(")\n");
  LockLog();
  if (fd_ < 0) OpenDefaultLog();
  line.WriteTo(fd_);
  for (uint32_t i = 0; i < depth; ++i) {
    line.Clear();
    line.Append("    #").AppendDecimal(i).Append(" ").AppendHex(frames[i]).Append(" ");
    const format::ModuleRecord* m = modules != nullptr ? modules->Find(frames[i]) : nullptr;
    if (m != nullptr) {
      const char* base = strrchr(m->path, '/');
      line.Append(base != nullptr ? base + 1 : m->path)
          .Append("+")
          .AppendHex(frames[i] - m->load_bias);
      if (m->build_id_len != 0) {
        line.Append(" (build-id ").AppendHexBytes(m->build_id, m->build_id_len).Append(")");
      }
    } else {
      line.Append("<unknown module>");
    }
    line.Append("\n");
    line.WriteTo(fd_);
  }
  UnlockLog();
  LargeAllocationCallback callback = callback_.load(std::memory_order_acquire);
  if (callback != nullptr) {
    callback(address, size, frames, depth, user_data_.load(std::memory_order_relaxed));
  }
}

}  // namespace heapgraph
