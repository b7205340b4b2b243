// roots/: scratch memory for a stop of the world that costs only the pages written. One private
// anonymous MAP_NORESERVE mapping, made before anything is stopped (no allocation while threads
// are held): a page reads as zeros until written, and Zero() hands the written pages back to the
// kernel (MADV_DONTNEED), so that they read as zeros again. A table sized for every possible
// thread id (pid_max: 4,194,304 on a 64-bit Debian 12 with systemd) then costs the pages of the
// ids met, where a zero-filled vector wrote all of it before every stop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace heapgraph::roots {

class ScratchPages {
 public:
  ScratchPages() = default;
  ~ScratchPages();
  ScratchPages(const ScratchPages&) = delete;
  ScratchPages& operator=(const ScratchPages&) = delete;

  // At least `bytes` bytes, all zero when this maps them; an existing mapping that is large
  // enough is kept as it is (Zero() it when it must read as zeros). False if mmap fails.
  bool Reserve(size_t bytes);
  // Every byte reads as zero again; the pages written go back to the kernel.
  void Zero();

  std::span<uint8_t> bytes() const { return {base_, size_}; }
  // The mapping's address range; {0, 0} before Reserve.
  std::pair<uint64_t, uint64_t> range() const;

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0;  // whole pages
};

}  // namespace heapgraph::roots
