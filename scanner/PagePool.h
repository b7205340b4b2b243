// scanner/: the snapshot child's freed array memory, kept for its next arrays. The child builds
// one large array after another (copied blocks, sort buffers, index, leaked list, type
// identities); each fresh mapping's pages are zero-filled by the kernel on first touch, which was
// the largest single cost of a scan with many blocks (clear_page: 45 % of a 2M-leak snapshot).
// Memory given back here is handed out again, already faulted in and holding stale contents
// (callers initialize what they use, as std::vector does). Raw syscalls only, no host malloc.
// MmapAllocator uses the pool activated in this process; only a single-threaded process (the
// snapshot child) may activate one, or a task that runs while every other thread is stopped (the
// ptrace helper of a scan in place, whose pool is kept from one repeated check to the next:
// Ranges() tells the scans what to leave out of the roots, TrimToPeak() bounds what it keeps).
// May include heap/ headers only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace heapgraph::scanner {

class PagePool {
 public:
  static constexpr size_t kPage = 4096;
  static constexpr size_t kMaxExtents = 64;

  constexpr PagePool() = default;
  PagePool(const PagePool&) = delete;
  PagePool& operator=(const PagePool&) = delete;
  ~PagePool() { Release(); }

  // Kept extents smaller than this are not moved to grow: a move flushes the old range from the
  // TLB of every core the process ran on (an IPI each, tens of µs in a VM) to save one fault of
  // ~1.5 µs a page (a small check's one move, of 3 pages, was 1.4 % of its process's samples).
  static constexpr size_t kMinMoveBytes = 64 * kPage;

  // At least `bytes` (rounded up to pages), page-aligned: the front of the smallest kept extent
  // that is large enough; else the largest kept extent, if of at least kMinMoveBytes, grown in
  // place or moved (mremap: its pages are kept, only the added tail is fresh); else a fresh
  // mapping. nullptr if none can be had.
  void* Take(size_t bytes);
  // Keeps [p, p + bytes rounded up to pages) for later Takes, merged with an adjacent kept
  // extent. With kMaxExtents kept, the smallest one is unmapped.
  void Give(void* p, size_t bytes);

  // Unmaps kept pages beyond `bytes` (rounded up to pages), from the tails of the largest
  // extents: what the rest of a scan will not reuse would only raise its peak memory.
  void Trim(size_t bytes);

  // Trim to the most bytes taken at once (not given back yet) since the last TrimToPeak plus the
  // largest single Take since then: a pool kept between scans of about the same size then holds
  // what one scan uses and room for its largest array to fit whole. Trimmed to the peak alone, it
  // cut every scan the tail that its largest array (the granule table) had just grown into, and the
  // next scan faulted it in again (bench/repeated_checks.cc: 1.25 MiB of fresh pages a check; with
  // the margin none after the first check, and the pool ends 2 % above the peak there).
  void TrimToPeak();
  // Unmaps every kept extent; the pool is empty.
  void Release();

  size_t kept_bytes() const;
  size_t extent_count() const { return count_; }
  size_t peak_bytes() const { return peak_; }
  // The kept extents as [begin, end) pairs; the unused slots are empty ({0, 0}).
  std::array<std::pair<uint64_t, uint64_t>, kMaxExtents> Ranges() const;

  // The pool MmapAllocator takes from and gives to in this process, or nullptr (plain mmap and
  // munmap). Set in the snapshot child only: the pool is not thread-safe.
  static PagePool* active() { return active_; }
  static void Activate(PagePool* pool) { active_ = pool; }

 private:
  struct Extent {
    uintptr_t begin;
    size_t bytes;
  };
  static size_t Round(size_t bytes) {
    return bytes == 0 ? kPage : (bytes + kPage - 1) & ~(kPage - 1);
  }
  void Remove(size_t i) { extents_[i] = extents_[--count_]; }
  void* TakeKept(size_t bytes);
  void* Grow(size_t bytes);

  Extent extents_[kMaxExtents] = {};
  size_t count_ = 0;
  size_t in_use_ = 0;        // taken and not given back
  size_t peak_ = 0;          // the most in use at once since the last TrimToPeak
  size_t largest_take_ = 0;  // the largest single Take since the last TrimToPeak
  static inline PagePool* active_ = nullptr;
};

}  // namespace heapgraph::scanner
