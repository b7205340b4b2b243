#include "check/ReaderCache.h"

#include <link.h>

#include "heap/platform/SharedLibrary.h"
#include "scanner/types/BuiltInReaders.h"

namespace heapgraph::report {
namespace {

// Changes whenever the program loads or unloads a module (glibc's dlpi_adds / dlpi_subs counters,
// less the libraries heapgraph itself opened on demand: heap/platform/SharedLibrary).
uint64_t ModuleGeneration() {
  uint64_t generation = 0;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* out) {
        *static_cast<uint64_t*>(out) = info->dlpi_adds * 0x100000001ull + info->dlpi_subs;
        return 1;
      },
      &generation);
  return generation - SharedLibrary::AddedObjects() * 0x100000001ull;
}

}  // namespace

std::shared_ptr<scanner::types::ReaderSet> ReaderCache::Get() {
  uint64_t generation = ModuleGeneration();
  if (readers_ != nullptr && generation == module_generation_) return readers_;
  // Rebuilt rather than re-prepared: a reader's Prepare collects from scratch. A scan still
  // holding the old set keeps it alive.
  auto readers = std::make_shared<scanner::types::ReaderSet>();
  if (field_layouts_) {
    scanner::types::RegisterBuiltInReaders(*readers);
  } else {
    scanner::types::RegisterBuiltInReaders(*readers, nullptr);
  }
  readers->Prepare();
  readers_ = std::move(readers);
  module_generation_ = generation;
  ++preparations_;
  return readers_;
}

}  // namespace heapgraph::report
