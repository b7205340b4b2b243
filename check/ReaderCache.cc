#include "check/ReaderCache.h"

#include "heap/platform/SharedLibrary.h"
#include "scanner/types/BuiltInReaders.h"

namespace heapgraph::report {

std::shared_ptr<scanner::types::ReaderSet> ReaderCache::Get() {
  uint64_t generation = SharedLibrary::ProgramModuleGeneration();
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
