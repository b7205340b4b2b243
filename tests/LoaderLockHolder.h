// tests/heap: a thread that sits inside a dl_iterate_phdr callback, so that it holds glibc's
// _dl_load_write_lock, until the test releases it (or 60 s pass: a test whose code under test
// waits for that lock then finishes instead of hanging, and fails on gave_up()). Shared by the unit
// tests of the code that must never wait for the dynamic loader (LoadedObject, ModuleMap).
#pragma once

#include <link.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace heapgraph {

class LoaderLockHolder {
 public:
  LoaderLockHolder() : thread_([this] { dl_iterate_phdr(&Hold, this); }) {
    while (!inside_.load()) std::this_thread::yield();
  }
  ~LoaderLockHolder() {
    Release();
    thread_.join();
  }
  LoaderLockHolder(const LoaderLockHolder&) = delete;
  LoaderLockHolder& operator=(const LoaderLockHolder&) = delete;

  void Release() { release_.store(true); }
  // True when the holder let go of the lock because the test never released it.
  bool gave_up() const { return gave_up_.load(); }

 private:
  static int Hold(dl_phdr_info*, size_t, void* data) {
    auto* self = static_cast<LoaderLockHolder*>(data);
    self->inside_.store(true);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!self->release_.load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        self->gave_up_.store(true);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return 1;  // one object is enough
  }

  std::atomic<bool> inside_{false};
  std::atomic<bool> release_{false};
  std::atomic<bool> gave_up_{false};
  std::thread thread_;
};

}  // namespace heapgraph
