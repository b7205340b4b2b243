// heap/runtime/: the interposed pthread_create of libheapgraph.so. A forked child records into
// memory copies until it lives (ForkSnapshot); it writes its directory here, before its second
// thread exists, so that writing it never races another thread's hooks or session updates.
// Everything else goes to glibc's pthread_create unchanged.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "heap/runtime/Recorder.h"
#include "heapgraph/heapgraph.h"

namespace {

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
CreateFn real_create = nullptr;

__attribute__((constructor(102))) void ResolveCreate() {
  real_create = reinterpret_cast<CreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
}

}  // namespace

extern "C" HEAPGRAPH_API int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                            void* (*start)(void*), void* arg) {
  heapgraph::recorder::BeforeThreadCreate();
  if (real_create == nullptr) ResolveCreate();
  if (real_create == nullptr) return EAGAIN;
  return real_create(thread, attr, start, arg);
}
