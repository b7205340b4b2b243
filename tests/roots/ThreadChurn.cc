#include "tests/roots/ThreadChurn.h"

#include <pthread.h>

namespace heapgraph::roots::testing {

ThreadChurn::ThreadChurn(int spawners) {
  for (int i = 0; i < spawners; ++i) {
    spawners_.emplace_back([this, i] {
      while (!stop_) Spawn(/*detach=*/i % 2 == 1);
    });
  }
}

ThreadChurn::~ThreadChurn() {
  stop_ = true;
  for (std::thread& t : spawners_) t.join();
  while (detached_alive_.load() > 0) std::this_thread::yield();
}

void ThreadChurn::Spawn(bool detach) {
  if (detach && detached_alive_.load() >= kMaxDetached) {
    std::this_thread::yield();
    return;
  }
  if (detach) ++detached_alive_;
  pthread_t thread;
  if (pthread_create(&thread, nullptr, &ExitAtOnce, detach ? this : nullptr) != 0) {
    if (detach) --detached_alive_;
    return;
  }
  if (detach) {
    pthread_detach(thread);
  } else {
    pthread_join(thread, nullptr);
  }
  ++created_;
}

void* ThreadChurn::ExitAtOnce(void* churn) {
  if (churn != nullptr) --static_cast<ThreadChurn*>(churn)->detached_alive_;
  return nullptr;
}

}  // namespace heapgraph::roots::testing
