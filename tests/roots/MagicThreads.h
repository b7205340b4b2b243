// tests/roots/: threads that hold known values where a stop-the-world must find them.
//
// A spinning thread loads its magic values into rbx, r12 and xmm7 (x86-64; x19, x20 and v7 on
// aarch64) and then spins inside one asm block until told to stop, so whenever it is stopped the
// registers hold the values. A blocking thread keeps its magic in a volatile stack local and
// sleeps on a futex. Start() returns once every thread has published its tid and is in place.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

namespace heapgraph::roots::testing {

class MagicThreads {
 public:
  struct Thread {
    bool spinning = false;
    uint64_t rbx_magic = 0;    // spinning: in rbx (x19)
    uint64_t r12_magic = 0;    // spinning: in r12 (x20)
    uint64_t xmm_magic = 0;    // spinning: low half of xmm7 (v7)
    uint64_t local_magic = 0;  // blocking: in a stack local at local_address
    std::atomic<uintptr_t> local_address{0};
    std::atomic<pid_t> tid{0};
    std::atomic<uint32_t> ready{0};
    pthread_t handle{};
  };

  MagicThreads() = default;
  ~MagicThreads() { StopAndJoin(); }
  MagicThreads(const MagicThreads&) = delete;
  MagicThreads& operator=(const MagicThreads&) = delete;

  // Starts the threads (stack_size 0: the default) and waits until all are in place.
  bool Start(int spinning, int blocking, size_t stack_size = 0);
  void StopAndJoin();

  std::span<const Thread> threads() const { return {threads_.data(), count_}; }
  std::vector<pid_t> Tids() const;

  static uint64_t MagicFor(int index, int which);

 private:
  static void* Run(void* argument);
  static void Spin(Thread* thread, const std::atomic<uint32_t>* stop);
  static void Block(Thread* thread, const std::atomic<uint32_t>* stop);

  struct Argument {
    MagicThreads* owner;
    Thread* thread;
  };

  std::vector<Thread> threads_;  // sized once; Thread is not movable
  std::vector<Argument> arguments_;
  size_t count_ = 0;
  std::atomic<uint32_t> stop_{0};
};

}  // namespace heapgraph::roots::testing
