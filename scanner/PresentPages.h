// scanner/: which pages of this process's private anonymous memory exist, i.e. are in memory or
// in swap (or hold a marker such as a guard page). A page of a private anonymous mapping (the brk
// heap and stacks included) that exists in neither was never written, or was discarded
// (MADV_DONTNEED, MADV_FREE reclaimed): it reads as zeros and holds no pointer, so a scan skips it
// unread. Asked of the kernel with the PAGEMAP_SCAN ioctl on /proc/self/pagemap (Linux 6.7+: it
// walks the page tables and skips empty ones whole: ≈ 0.05 ms for a 1 TiB reservation with four
// pages written), else by reading /proc/self/pagemap's 8-byte entries (bits 63 and 62: ≈ 2 ms
// per 4 GiB, 130 ms per 64 GiB on a loaded machine). Reading such a reservation page by page
// instead cost a zero-page fault and a scan per page (≈ 20 s per 4 GiB). In a snapshot process the
// page tables are the program's, copied by the clone. Everything else is always read: file
// mappings (an absent page there holds the file's bytes), shared mappings, and all memory when
// pagemap cannot be opened or read. Every absent page is skipped, a gap of one page inside a range
// too: reading it costs a zero-page fault (≈ 1.5 µs on the Intel guests of earlier sessions, 14 µs
// on a Firecracker guest: docs/performance.md, session 33), cutting the range in two one more run.
// Allocates through MmapAllocator only, after construction only the entries' window (on first use:
// kernels without PAGEMAP_SCAN); one thread at a time.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "roots/ProcessMappings.h"
#include "scanner/MmapAllocator.h"

namespace heapgraph::scanner {

class PresentPages {
 public:
  // `mappings`: this process's map (it must outlive this object). Opens /proc/self/pagemap.
  // `use_scan_ioctl` false: read pagemap entries even where PAGEMAP_SCAN works (for tests).
  explicit PresentPages(const roots::ProcessMappings& mappings, bool use_scan_ioctl = true);
  ~PresentPages();
  PresentPages(const PresentPages&) = delete;
  PresentPages& operator=(const PresentPages&) = delete;

  // Calls visit(run_begin, run_end) for each part of [begin, end) to read, in address order, and
  // returns the number of pages skipped: every absent run of [begin, end).
  template <typename Visit>
  uint64_t ForEachRun(uint64_t begin, uint64_t end, Visit&& visit) {
    uint64_t skipped = 0;
    while (begin < end) {
      std::pair<uint64_t, uint64_t> gap = NextGap(begin, end);
      if (gap.first > begin) visit(begin, gap.first);
      if (gap.first >= end) break;
      skipped += PagesTouching(gap.first, gap.second);
      begin = gap.second;
    }
    return skipped;
  }

  // False when pagemap could not be opened: every page is then read.
  bool available() const { return fd_ >= 0; }
  int fd() const { return fd_; }  // the pagemap descriptor, -1 if none
  // Whether the PAGEMAP_SCAN ioctl answers (so far); false: pagemap entries are read.
  bool scanning() const { return scan_works_; }

 private:
  static constexpr size_t kEntries = 4096;  // pagemap entries per read (16 MiB of addresses)
  static constexpr size_t kRegions = 512;   // regions per PAGEMAP_SCAN call

  struct Region {
    uint64_t begin;
    uint64_t end;
  };
  // The kernel's struct page_region.
  struct ScannedRegion {
    uint64_t begin;
    uint64_t end;
    uint64_t categories;
  };

  // The first absent gap in [begin, end), clipped to it; {end, end} if none.
  std::pair<uint64_t, uint64_t> NextGap(uint64_t begin, uint64_t end);
  // The same within [begin, end) of one private anonymous mapping.
  std::pair<uint64_t, uint64_t> NextGapInMapping(uint64_t begin, uint64_t end);
  // The first run [b, e) of existing pages in [at, limit) (page-aligned), b >= at; e need not end
  // the run. {limit, limit} if there is none; false if the kernel could not tell.
  bool NextRegion(uint64_t at, uint64_t limit, Region* region);
  bool NextRegionScan(uint64_t at, uint64_t limit, Region* region);
  bool NextRegionRead(uint64_t at, uint64_t limit, Region* region);
  // Page `page_index`'s pagemap entry, through a window of up to kEntries read at once (never
  // past `last_index`); false if it cannot be read.
  bool Entry(uint64_t page_index, uint64_t last_index, uint64_t* entry);
  uint64_t PagesTouching(uint64_t begin, uint64_t end) const {
    return ((end + page_size_ - 1) & ~(page_size_ - 1)) / page_size_ -
           (begin & ~(page_size_ - 1)) / page_size_;
  }

  const roots::ProcessMappings& mappings_;
  int fd_ = -1;
  uint64_t page_size_ = 4096;
  std::vector<uint64_t, MmapAllocator<uint64_t>> entries_;  // pagemap entries, when read
  uint64_t window_first_ = 0;                               // page index of entries_[0]
  uint64_t window_count_ = 0;                               // entries read
  bool scan_works_ = true;
  // PAGEMAP_SCAN's answer: regions_[0, region_count_) are all the existing pages of
  // [scanned_from_, scanned_to_).
  std::vector<ScannedRegion, MmapAllocator<ScannedRegion>> regions_;
  size_t region_count_ = 0;
  uint64_t scanned_from_ = 0;
  uint64_t scanned_to_ = 0;
};

}  // namespace heapgraph::scanner
