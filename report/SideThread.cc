#include "report/SideThread.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "heap/RecorderAccess.h"

namespace heapgraph::report {
namespace {

constexpr size_t kGuard = 4096;

void UnmapStack(char* stack) {
  syscall(SYS_munmap, stack, SideThread::kStackSize + kGuard);
}

}  // namespace

void* SideThread::Main(void* self) {
  auto ignore = reinterpret_cast<HeapgraphIgnoreThreadFn>(
      dlsym(RTLD_DEFAULT, HEAPGRAPH_IGNORE_THREAD_SYMBOL));
  if (ignore != nullptr) ignore(1);  // the thread ends with it; its next use starts clear
  auto* thread = static_cast<SideThread*>(self);
  try {
    thread->body_();
  } catch (...) {
    thread->error_ = std::current_exception();
  }
  return nullptr;
}

bool SideThread::Start(std::function<void()> body) {
  if (started_) return false;
  long mapped = syscall(SYS_mmap, nullptr, kStackSize + kGuard, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (mapped < 0 && mapped > -4096) return false;
  stack_ = reinterpret_cast<char*>(mapped);
  syscall(SYS_mprotect, stack_, kGuard, PROT_NONE);  // overflow faults instead of corrupting
  body_ = std::move(body);
  error_ = nullptr;
  pthread_attr_t attr;
  bool ok = pthread_attr_init(&attr) == 0;
  ok = ok && pthread_attr_setstack(&attr, stack_ + kGuard, kStackSize) == 0 &&
       pthread_create(&thread_, &attr, &SideThread::Main, this) == 0;
  pthread_attr_destroy(&attr);
  if (!ok) {
    UnmapStack(stack_);
    stack_ = nullptr;
    return false;
  }
  started_ = true;
  return true;
}

void SideThread::Join() {
  if (!started_) return;
  pthread_join(thread_, nullptr);  // the kernel has cleared the thread's tid: its stack is free
  UnmapStack(stack_);
  stack_ = nullptr;
  started_ = false;
}

}  // namespace heapgraph::report
