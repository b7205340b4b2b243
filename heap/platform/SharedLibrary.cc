#include "heap/platform/SharedLibrary.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>

namespace heapgraph {
namespace {

std::atomic<uint64_t> g_added_objects{0};

// glibc's count of objects ever added to the process (dlpi_adds).
uint64_t ObjectsAdded() {
  uint64_t adds = 0;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* out) {
        *static_cast<uint64_t*>(out) = info->dlpi_adds;
        return 1;
      },
      &adds);
  return adds;
}

}  // namespace

SharedLibrary::SharedLibrary(const char* soname) {
  const uint64_t before = ObjectsAdded();
  handle_ = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  g_added_objects.fetch_add(ObjectsAdded() - before, std::memory_order_relaxed);
}

uint64_t SharedLibrary::AddedObjects() {
  return g_added_objects.load(std::memory_order_relaxed);
}

void* SharedLibrary::Symbol(const char* name) const {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

}  // namespace heapgraph
