// heap/runtime/: the interposed allocation functions of libheapgraph.so. Each forwards to glibc's
// __libc_* entry point (no dlsym bootstrap: these exist before any constructor runs) and then
// tells the Recorder. Frees are recorded before the block is released, so its address cannot be
// handed out and recorded by another thread first; a small block's free may wait in its thread's
// batch, which the recorder records and releases together (heap/runtime/DeferredFrees.h).
// operator new/delete reach these through libstdc++. Anonymous mmap/munmap/mremap are recorded
// as VM regions via raw syscalls.
// dlclose is interposed so that the module map learns what went away.
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heap/platform/WarningLine.h"
#include "heap/runtime/GlibcAllocator.h"
#include "heap/runtime/GlibcChunk.h"
#include "heap/runtime/Recorder.h"
#include "heapgraph/heapgraph.h"

namespace {

using heapgraph::format::AllocFunction;
namespace recorder = heapgraph::recorder;

bool IsPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

using DlopenFn = void* (*)(const char*, int);
DlopenFn real_dlopen = nullptr;
using DlcloseFn = int (*)(void*);
DlcloseFn real_dlclose = nullptr;

__attribute__((constructor(102))) void ResolveForwarders() {
  real_dlopen = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
  real_dlclose = reinterpret_cast<DlcloseFn>(dlsym(RTLD_NEXT, "dlclose"));
}

long RawMmap(void* address, size_t length, int prot, int flags, int fd, off_t offset) {
  return syscall(SYS_mmap, address, length, prot, flags, fd, offset);
}

void* SyscallResult(long r) {
  if (r < 0 && r > -4096) {
    errno = static_cast<int>(-r);
    return MAP_FAILED;
  }
  return reinterpret_cast<void*>(r);
}

__attribute__((noinline)) void WarnDeepBind(const char* file) {
  heapgraph::WarningLine()
      .Append("warning: dlopen(\"")
      .Append(file != nullptr ? file : "")
      .Append(
          "\", RTLD_DEEPBIND): allocations that library makes bypass heapgraph and are not "
          "recorded")
      .Write();
}

}  // namespace

#define HEAPGRAPH_EXPORT extern "C" HEAPGRAPH_API

HEAPGRAPH_EXPORT void* malloc(size_t size) {
  void* p = __libc_malloc(recorder::RequestSize(size, false));
  recorder::RecordAlloc(p, size, AllocFunction::kMalloc);
  return p;
}

HEAPGRAPH_EXPORT void free(void* address) {
  if (address == nullptr) return;
  int saved = errno;
  if (recorder::QueueFree(address)) {
    errno = saved;
    return;
  }
  heapgraph::glibc_chunk::PrefetchHeader(address);  // fetched while the recorder removes it
  recorder::RecordFree(address);
  __libc_free(address);
  errno = saved;
}

HEAPGRAPH_EXPORT void* calloc(size_t count, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* p = __libc_calloc(1, recorder::RequestSize(total, false));
  recorder::RecordAlloc(p, total, AllocFunction::kCalloc);
  return p;
}

HEAPGRAPH_EXPORT void* realloc(void* address, size_t size) {
  if (address == nullptr) {
    void* p = __libc_realloc(nullptr, recorder::RequestSize(size, false));
    recorder::RecordAlloc(p, size, AllocFunction::kRealloc);
    return p;
  }
  recorder::ReallocTicket ticket = recorder::BeginRealloc(address);
  // realloc(p, 0) frees: no padding then.
  void* p = __libc_realloc(address, size == 0 ? 0 : recorder::RequestSize(size, false));
  recorder::EndRealloc(ticket, p, size, AllocFunction::kRealloc);
  return p;
}

HEAPGRAPH_EXPORT void* reallocarray(void* address, size_t count, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (address == nullptr) {
    void* p = __libc_realloc(nullptr, recorder::RequestSize(total, false));
    recorder::RecordAlloc(p, total, AllocFunction::kReallocArray);
    return p;
  }
  recorder::ReallocTicket ticket = recorder::BeginRealloc(address);
  void* p = __libc_realloc(address, total == 0 ? 0 : recorder::RequestSize(total, false));
  recorder::EndRealloc(ticket, p, total, AllocFunction::kReallocArray);
  return p;
}

HEAPGRAPH_EXPORT void* memalign(size_t alignment, size_t size) {
  void* p = __libc_memalign(alignment, recorder::RequestSize(size, true));
  recorder::RecordAlloc(p, size, AllocFunction::kMemalign);
  return p;
}

HEAPGRAPH_EXPORT int posix_memalign(void** out, size_t alignment, size_t size) {
  if (!IsPowerOfTwo(alignment) || alignment % sizeof(void*) != 0) return EINVAL;
  int saved = errno;
  void* p = __libc_memalign(alignment, recorder::RequestSize(size, true));
  if (p == nullptr) {
    errno = saved;
    return ENOMEM;
  }
  *out = p;
  recorder::RecordAlloc(p, size, AllocFunction::kPosixMemalign);
  return 0;
}

HEAPGRAPH_EXPORT void* aligned_alloc(size_t alignment, size_t size) {
  if (!IsPowerOfTwo(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  void* p = __libc_memalign(alignment, recorder::RequestSize(size, true));
  recorder::RecordAlloc(p, size, AllocFunction::kAlignedAlloc);
  return p;
}

HEAPGRAPH_EXPORT void* valloc(size_t size) {
  void* p = __libc_valloc(recorder::RequestSize(size, true));
  recorder::RecordAlloc(p, size, AllocFunction::kValloc);
  return p;
}

HEAPGRAPH_EXPORT void* pvalloc(size_t size) {
  void* p = __libc_pvalloc(recorder::RequestSize(size, true));
  recorder::RecordAlloc(p, size, AllocFunction::kPvalloc);
  return p;
}

HEAPGRAPH_EXPORT size_t malloc_usable_size(void* address) {
  if (address == nullptr) return 0;
  return recorder::UsableSize(address);
}

namespace {

// Any caller's MAP_FIXED mapping or unmap forgets the unwinder's ranges it touches before the
// syscall: once the kernel may hand the address out again, no entry covers it.
void* MapAndRecord(void* address, size_t length, int prot, int flags, int fd, off_t offset) {
  if ((flags & MAP_FIXED) != 0) recorder::ForgetUnwinderMaps(address, length);
  void* p = SyscallResult(RawMmap(address, length, prot, flags, fd, offset));
  if (p != MAP_FAILED && (flags & MAP_ANONYMOUS) != 0) {
    recorder::RecordMap(p, length, AllocFunction::kMmap);
  } else if (p != MAP_FAILED && (flags & MAP_FIXED) != 0) {
    recorder::RecordUnmap(p, length);  // a file mapped over a recorded region replaces it
  }
  return p;
}

}  // namespace

HEAPGRAPH_EXPORT void* mmap(void* address, size_t length, int prot, int flags, int fd,
                            off_t offset) {
  return MapAndRecord(address, length, prot, flags, fd, offset);
}

HEAPGRAPH_EXPORT void* mmap64(void* address, size_t length, int prot, int flags, int fd,
                              off_t offset) {
  return MapAndRecord(address, length, prot, flags, fd, offset);
}

HEAPGRAPH_EXPORT int munmap(void* address, size_t length) {
  recorder::ForgetUnwinderMaps(address, length);
  long r = syscall(SYS_munmap, address, length);
  if (r != 0) return -1;  // errno set by syscall()
  recorder::RecordUnmap(address, length);
  return 0;
}

HEAPGRAPH_EXPORT void* mremap(void* old_address, size_t old_length, size_t length, int flags, ...) {
  void* wanted = nullptr;
  if ((flags & MREMAP_FIXED) != 0) {
    va_list args;
    va_start(args, flags);
    wanted = va_arg(args, void*);
    va_end(args);
    recorder::ForgetUnwinderMaps(wanted, length);
  }
  recorder::ForgetUnwinderMaps(old_address, old_length);
  long r = syscall(SYS_mremap, old_address, old_length, length, flags, wanted);
  void* p = SyscallResult(r);
  if (p != MAP_FAILED) recorder::RecordRemap(old_address, old_length, p, length);
  return p;
}

// dlopen: warns about RTLD_DEEPBIND, then tail-calls the real dlopen so that glibc still sees the
// application as the caller (its RUNPATH and $ORIGIN apply). New modules are picked up by the
// recorder when their first frame is stored.
HEAPGRAPH_EXPORT void* dlopen(const char* file, int mode) {
  if ((mode & RTLD_DEEPBIND) != 0 && !recorder::InHook()) WarnDeepBind(file);
  if (real_dlopen == nullptr) ResolveForwarders();
  return real_dlopen(file, mode);
}

// dlclose: glibc's, then the module map marks what the call unloaded (no loader lock taken).
HEAPGRAPH_EXPORT int dlclose(void* handle) {
  if (real_dlclose == nullptr) ResolveForwarders();
  int result = real_dlclose(handle);
  int saved = errno;
  recorder::NoteDlclose();
  errno = saved;
  return result;
}
