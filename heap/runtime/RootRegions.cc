#include "heap/runtime/RootRegions.h"

#include <atomic>
#include <cstdint>

#include "heap/platform/WarningLine.h"

namespace heapgraph {
namespace {

constinit HeapgraphRootRegion g_slots[RootRegions::kSlots] = {};
constinit std::atomic<bool> g_lock{false};

class TableLock {
 public:
  TableLock() {
    while (g_lock.exchange(true, std::memory_order_acquire)) {
    }
  }
  ~TableLock() { g_lock.store(false, std::memory_order_release); }
};

std::atomic_ref<uint64_t> Begin(HeapgraphRootRegion& slot) {
  return std::atomic_ref<uint64_t>(slot.begin);
}

// "heapgraph: <what>: <begin> (<size> bytes); ignored".
void Complain(const char* what, const void* begin, size_t size) {
  LineBuffer detail;
  detail.AppendHex(reinterpret_cast<uintptr_t>(begin)).Append(" (").AppendDecimal(size);
  detail.Append(" bytes)");
  WarningLine line;
  line.Append(what).Append(": ").Append(detail.data(), detail.size()).Append("; ignored").Write();
}

}  // namespace

bool RootRegions::Register(const void* begin, size_t size) {
  auto address = reinterpret_cast<uint64_t>(begin);
  if (address == 0 || size == 0) {
    Complain("__lsan_register_root_region: an empty region", begin, size);
    return false;
  }
  TableLock lock;
  for (HeapgraphRootRegion& slot : g_slots) {
    if (Begin(slot).load(std::memory_order_relaxed) != 0) continue;
    std::atomic_ref<uint64_t>(slot.size).store(size, std::memory_order_relaxed);
    Begin(slot).store(address, std::memory_order_release);
    return true;
  }
  Complain("__lsan_register_root_region: the table of root regions is full", begin, size);
  return false;
}

bool RootRegions::Unregister(const void* begin, size_t size) {
  auto address = reinterpret_cast<uint64_t>(begin);
  TableLock lock;
  for (HeapgraphRootRegion& slot : g_slots) {
    if (Begin(slot).load(std::memory_order_relaxed) != address || address == 0 ||
        slot.size != size) {
      continue;
    }
    Begin(slot).store(0, std::memory_order_release);
    return true;
  }
  Complain("__lsan_unregister_root_region: this region was never registered", begin, size);
  return false;
}

const HeapgraphRootRegion* RootRegions::Slots() {
  return g_slots;
}

}  // namespace heapgraph
