// check/: one function run on a second thread for the leak check. Its stack (static TLS included)
// is mapped with a raw syscall and unmapped when the thread is joined, so neither the recorder
// nor a later scan sees it (a cached pthread stack would keep stale addresses as roots), and the
// thread's allocations are not recorded (frees still are), like the check's own thread.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <optional>

#include "check/GuardedStack.h"

namespace heapgraph::report {

class SideThread {
 public:
  static constexpr size_t kStackSize = 8u << 20;

  SideThread() = default;
  ~SideThread() { Join(); }
  SideThread(const SideThread&) = delete;
  SideThread& operator=(const SideThread&) = delete;

  // Starts body() on the thread; false (nothing run) when no stack or thread could be had.
  bool Start(std::function<void()> body);
  // Waits for body() to return and unmaps the stack; no-op when not started.
  void Join();
  bool running() const { return started_; }
  // What body() threw (null if nothing); read after Join().
  std::exception_ptr error() const { return error_; }

 private:
  static void* Main(void* self);

  std::function<void()> body_;
  std::exception_ptr error_;
  pthread_t thread_{};
  std::optional<GuardedStack> stack_;  // unmapped only after the join
  bool started_ = false;
};

}  // namespace heapgraph::report
