#include "roots/CpuPin.h"

#include <sys/syscall.h>

#include "roots/RawSyscall.h"

namespace heapgraph::roots {

bool CpuPin::Pin() {
  if (pinned_) return true;
  const long bytes =
      RawSyscall::Call(SYS_sched_getaffinity, 0, sizeof(saved_), RawSyscall::detail::Arg(&saved_));
  unsigned cpu = 0;
  if (bytes <= 0 || RawSyscall::Call(SYS_getcpu, RawSyscall::detail::Arg(&cpu), 0, 0) != 0 ||
      cpu >= CPU_SETSIZE) {
    return false;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (RawSyscall::Call(SYS_sched_setaffinity, 0, sizeof(one), RawSyscall::detail::Arg(&one)) != 0) {
    return false;
  }
  saved_bytes_ = static_cast<unsigned long>(bytes);
  pinned_ = true;
  return true;
}

void CpuPin::Unpin() {
  if (!pinned_) return;
  RestoreIn();
  pinned_ = false;
}

void CpuPin::RestoreIn() const {
  if (!pinned_) return;
  RawSyscall::Call(SYS_sched_setaffinity, 0, static_cast<long>(saved_bytes_),
                   RawSyscall::detail::Arg(&saved_));
}

}  // namespace heapgraph::roots
