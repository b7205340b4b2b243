#include "roots/CaptureArena.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace heapgraph::roots {
namespace {

constexpr size_t kVectorAlignment = 64;

size_t RoundUp(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

size_t CaptureArena::SlotsFor(long threads) {
  constexpr size_t kUnknown = 1024;
  constexpr size_t kSpare = 64;
  if (threads < 0) return kUnknown;
  const auto n = static_cast<size_t>(threads);
  return n + n / 4 + kSpare;
}

size_t CaptureArena::GrownSlots(size_t previous, long threads) {
  return std::max(2 * previous, SlotsFor(threads));
}

CaptureArena::~CaptureArena() {
  Unmap();
}

void CaptureArena::Unmap() {
  if (base_ != nullptr) munmap(base_, mapped_bytes_);
  base_ = nullptr;
  mapped_bytes_ = 0;
  slots_ = nullptr;
  vectors_ = nullptr;
  capacity_ = 0;
  vector_size_ = 0;
}

bool CaptureArena::Reserve(size_t capacity, size_t vector_size) {
  Clear();
  vector_size = RoundUp(std::max<size_t>(vector_size, 1), kVectorAlignment);
  if (base_ != nullptr && capacity <= capacity_ && vector_size <= vector_size_) return true;
  Unmap();
  const size_t slot_bytes = RoundUp(capacity * sizeof(ThreadInfo), kVectorAlignment);
  const size_t bytes = slot_bytes + capacity * vector_size;
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return false;
  base_ = base;
  mapped_bytes_ = bytes;
  slots_ = static_cast<ThreadInfo*>(base);
  vectors_ = static_cast<uint8_t*>(base) + slot_bytes;
  capacity_ = capacity;
  vector_size_ = vector_size;
  return true;
}

ThreadInfo* CaptureArena::Claim() {
  const size_t index = count_.fetch_add(1, std::memory_order_acq_rel);
  if (index >= capacity_) return nullptr;
  return new (&slots_[index]) ThreadInfo();
}

std::span<uint8_t> CaptureArena::VectorBuffer(const ThreadInfo* slot) {
  const auto index = static_cast<size_t>(slot - slots_);
  return {vectors_ + index * vector_size_, vector_size_};
}

size_t CaptureArena::count() const {
  return std::min(count_.load(std::memory_order_acquire), capacity_);
}

}  // namespace heapgraph::roots
