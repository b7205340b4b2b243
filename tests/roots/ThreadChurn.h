// tests/roots/: threads that create short-lived threads as fast as they can, half of them joined
// and half detached, to race a stop-the-world against thread creation and exit. Detached threads
// still alive are capped (kMaxDetached), so the process never accumulates thousands of exiting
// threads (as it otherwise can under ASan, where thread exit is slow).
#pragma once

#include <atomic>
#include <thread>
#include <vector>

namespace heapgraph::roots::testing {

class ThreadChurn {
 public:
  static constexpr int kMaxDetached = 32;

  explicit ThreadChurn(int spawners);
  ~ThreadChurn();  // stops the spawners and waits for the detached threads to finish
  ThreadChurn(const ThreadChurn&) = delete;
  ThreadChurn& operator=(const ThreadChurn&) = delete;

  int created() const { return created_.load(); }

 private:
  void Spawn(bool detach);
  static void* ExitAtOnce(void* churn);

  std::atomic<bool> stop_{false};
  std::atomic<int> created_{0};
  std::atomic<int> detached_alive_{0};
  std::vector<std::thread> spawners_;
};

}  // namespace heapgraph::roots::testing
