#include "tests/roots/MagicThreads.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <thread>

namespace heapgraph::roots::testing {
namespace {

long Futex(const std::atomic<uint32_t>* word, int op, uint32_t value) {
  return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, value, nullptr, nullptr, 0);
}

}  // namespace

uint64_t MagicThreads::MagicFor(int index, int which) {
  // Distinctive, non-pointer-like, unique per thread and per slot.
  return 0x5eed000000000000ull | (static_cast<uint64_t>(which) << 32) |
         (static_cast<uint64_t>(index) * 0x10001ull + 0x1234);
}

bool MagicThreads::Start(int spinning, int blocking, size_t stack_size) {
  const int total = spinning + blocking;
  threads_ = std::vector<Thread>(static_cast<size_t>(total));
  arguments_.assign(static_cast<size_t>(total), Argument{this, nullptr});
  stop_.store(0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (stack_size != 0) pthread_attr_setstacksize(&attr, stack_size);
  for (int i = 0; i < total; ++i) {
    Thread& t = threads_[static_cast<size_t>(i)];
    t.spinning = i < spinning;
    t.rbx_magic = MagicFor(i, 1);
    t.r12_magic = MagicFor(i, 2);
    t.xmm_magic = MagicFor(i, 3);
    t.local_magic = MagicFor(i, 4);
    arguments_[static_cast<size_t>(i)].thread = &t;
    if (pthread_create(&t.handle, &attr, &Run, &arguments_[static_cast<size_t>(i)]) != 0) break;
    ++count_;
  }
  pthread_attr_destroy(&attr);
  for (size_t i = 0; i < count_; ++i) {
    while (threads_[i].ready.load(std::memory_order_acquire) == 0) std::this_thread::yield();
  }
  return count_ == static_cast<size_t>(total);
}

void MagicThreads::StopAndJoin() {
  stop_.store(1, std::memory_order_release);
  Futex(&stop_, FUTEX_WAKE, INT_MAX);
  for (size_t i = 0; i < count_; ++i) pthread_join(threads_[i].handle, nullptr);
  count_ = 0;
}

std::vector<pid_t> MagicThreads::Tids() const {
  std::vector<pid_t> tids;
  for (const Thread& t : threads()) tids.push_back(t.tid.load());
  return tids;
}

void* MagicThreads::Run(void* argument) {
  auto* a = static_cast<Argument*>(argument);
  a->thread->tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
  if (a->thread->spinning) {
    Spin(a->thread, &a->owner->stop_);
  } else {
    Block(a->thread, &a->owner->stop_);
  }
  return nullptr;
}

// The whole wait is one asm block: the magic registers are loaded, `ready` is set, and the
// loop polls `stop` without calling anything, so the registers hold the magic at every stop.
void MagicThreads::Spin(Thread* thread, const std::atomic<uint32_t>* stop) {
#if defined(__x86_64__)
  __asm__ volatile(
      "movq %[xmm], %%xmm7\n\t"
      "movq %[rbx], %%rbx\n\t"
      "movq %[r12], %%r12\n\t"
      "movl $1, (%[ready])\n\t"
      "1: pause\n\t"
      "cmpl $0, (%[stop])\n\t"
      "je 1b\n\t"
      :
      : [xmm] "r"(thread->xmm_magic), [rbx] "r"(thread->rbx_magic), [r12] "r"(thread->r12_magic),
        [ready] "r"(&thread->ready), [stop] "r"(stop)
      : "xmm7", "rbx", "r12", "memory", "cc");
#elif defined(__aarch64__)
  __asm__ volatile(
      "fmov d7, %[xmm]\n\t"
      "mov x19, %[rbx]\n\t"
      "mov x20, %[r12]\n\t"
      "mov w9, #1\n\t"
      "str w9, [%[ready]]\n\t"
      "1: yield\n\t"
      "ldr w9, [%[stop]]\n\t"
      "cbz w9, 1b\n\t"
      :
      : [xmm] "r"(thread->xmm_magic), [rbx] "r"(thread->rbx_magic), [r12] "r"(thread->r12_magic),
        [ready] "r"(&thread->ready), [stop] "r"(stop)
      : "v7", "x19", "x20", "x9", "memory", "cc");
#endif
}

void MagicThreads::Block(Thread* thread, const std::atomic<uint32_t>* stop) {
  volatile uint64_t local = thread->local_magic;
  thread->local_address.store(reinterpret_cast<uintptr_t>(&local));
  thread->ready.store(1, std::memory_order_release);
  while (stop->load(std::memory_order_acquire) == 0) Futex(stop, FUTEX_WAIT, 0);
  (void)local;
}

}  // namespace heapgraph::roots::testing
