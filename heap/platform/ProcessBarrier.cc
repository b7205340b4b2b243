#include "heap/platform/ProcessBarrier.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace heapgraph {
namespace {

std::atomic<bool> registered{false};

// errno is the caller's (the caller may be a malloc hook).
long Membarrier(int command) {
  const int saved = errno;
  const long r = syscall(SYS_membarrier, command, 0, 0);
  errno = saved;
  return r;
}

}  // namespace

bool ProcessBarrier::Register() {
  const long supported = Membarrier(MEMBARRIER_CMD_QUERY);
  const bool ok = supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
                  Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  registered.store(ok, std::memory_order_release);
  return ok;
}

bool ProcessBarrier::Available() {
  return registered.load(std::memory_order_acquire);
}

void ProcessBarrier::Issue() {
  if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  // Refused: a forked child whose kernel did not copy the registration.
  if (Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
    Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  }
}

}  // namespace heapgraph
