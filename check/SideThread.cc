#include "check/SideThread.h"

#include <utility>

#include "heap/plugin/RecorderEntries.h"

namespace heapgraph::report {

void* SideThread::Main(void* self) {
  HeapgraphIgnoreThreadFn ignore = RecorderEntries::Get().ignore_thread;
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
  stack_.emplace(kStackSize);
  if (!stack_->valid()) {
    stack_.reset();
    return false;
  }
  body_ = std::move(body);
  error_ = nullptr;
  pthread_attr_t attr;
  bool ok = pthread_attr_init(&attr) == 0;
  ok = ok && pthread_attr_setstack(&attr, stack_->base(), stack_->size()) == 0 &&
       pthread_create(&thread_, &attr, &SideThread::Main, this) == 0;
  pthread_attr_destroy(&attr);
  if (!ok) {
    stack_.reset();
    return false;
  }
  started_ = true;
  return true;
}

void SideThread::Join() {
  if (!started_) return;
  pthread_join(thread_, nullptr);  // the kernel has cleared the thread's tid: its stack is free
  stack_.reset();
  started_ = false;
}

}  // namespace heapgraph::report
