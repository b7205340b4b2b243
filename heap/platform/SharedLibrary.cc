#include "heap/platform/SharedLibrary.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>

namespace heapgraph {
namespace {

// Objects the loader added while SharedLibrary opened libraries (each with its dependencies).
std::atomic<uint64_t> g_added_objects{0};

struct LoaderCounters {
  uint64_t adds = 0;
  uint64_t subs = 0;
};

// glibc's counts of objects ever added to and removed from the process.
LoaderCounters Counters() {
  LoaderCounters counters;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* out) {
        *static_cast<LoaderCounters*>(out) = {info->dlpi_adds, info->dlpi_subs};
        return 1;
      },
      &counters);
  return counters;
}

}  // namespace

SharedLibrary::SharedLibrary(const char* soname) {
  const uint64_t before = Counters().adds;
  handle_ = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  g_added_objects.fetch_add(Counters().adds - before, std::memory_order_relaxed);
}

uint64_t SharedLibrary::ProgramModuleGeneration() {
  const LoaderCounters counters = Counters();
  const uint64_t program_adds = counters.adds - g_added_objects.load(std::memory_order_relaxed);
  return program_adds * 0x100000001ull + counters.subs;
}

void* SharedLibrary::Symbol(const char* name) const {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

}  // namespace heapgraph
