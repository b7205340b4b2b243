#include "roots/ThreadStacks.h"

#include <algorithm>

namespace heapgraph::roots {

ThreadStacks::Range ThreadStacks::ForThread(const ThreadInfo& thread,
                                            const ProcessMappings& mappings) {
  Range range;
  range.tid = thread.tid;
  const uintptr_t sp = thread.stack_pointer;
  const ProcessMappings::Mapping* mapping = mappings.Find(sp);
  if (mapping == nullptr) return range;
  const uintptr_t lowest = sp >= ThreadInfo::kRedZone ? sp - ThreadInfo::kRedZone : 0;
  range.mapping = mapping;
  range.begin = std::max(lowest, mapping->start);
  range.end = mapping->end;
  return range;
}

const ProcessMappings::Mapping* ThreadStacks::OwnStack(const ThreadInfo& thread,
                                                       const ProcessMappings& mappings,
                                                       uint64_t static_tls_size) {
  if (thread.is_main) return mappings.MainStack();
#if defined(__x86_64__)
  const uint64_t tp = thread.regs[ThreadInfo::kFsBase];
  const ProcessMappings::Mapping* m = mappings.Find(tp);
  if (m == nullptr || static_tls_size == 0 || m->end - tp > static_tls_size) return nullptr;
  return m;
#else
  (void)static_tls_size;
  return nullptr;
#endif
}

void ThreadStacks::Compute(std::span<const ThreadInfo> threads, const ProcessMappings& mappings) {
  ranges_.clear();
  for (const ThreadInfo& thread : threads) ranges_.push_back(ForThread(thread, mappings));
}

}  // namespace heapgraph::roots
