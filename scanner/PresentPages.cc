#include "scanner/PresentPages.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <span>

#include "roots/RawSyscall.h"

namespace heapgraph::scanner {

using roots::ProcessMappings;
namespace RawSyscall = roots::RawSyscall;

namespace {

// /proc/<pid>/pagemap entry bits.
constexpr uint64_t kInMemory = uint64_t{1} << 63;
constexpr uint64_t kInSwap = uint64_t{1} << 62;

// The PAGEMAP_SCAN ioctl (Linux 6.7, include/uapi/linux/fs.h; not in older headers).
struct PageMapScanArg {
  uint64_t size;
  uint64_t flags;
  uint64_t start;
  uint64_t end;
  uint64_t walk_end;
  uint64_t vec;
  uint64_t vec_len;
  uint64_t max_pages;
  uint64_t category_inverted;
  uint64_t category_mask;
  uint64_t category_anyof_mask;
  uint64_t return_mask;
};
constexpr uint64_t kPageIsPresent = 1u << 3;
constexpr uint64_t kPageIsSwapped = 1u << 4;  // also a marker (guard page, uffd-wp)
constexpr unsigned long kPageMapScan = _IOWR('f', 16, PageMapScanArg);

bool PrivateAnonymous(const ProcessMappings::Mapping& m) {
  return m.readable && !m.shared &&
         (m.kind == ProcessMappings::Kind::kAnonymous || m.kind == ProcessMappings::Kind::kHeap ||
          m.kind == ProcessMappings::Kind::kMainStack);
}

}  // namespace

PresentPages::PresentPages(const ProcessMappings& mappings, bool use_scan_ioctl)
    : mappings_(mappings),
      page_size_(static_cast<uint64_t>(getpagesize())),
      scan_works_(use_scan_ioctl) {
  long fd = RawSyscall::Open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  fd_ = RawSyscall::Failed(fd) ? -1 : static_cast<int>(fd);
  if (fd_ >= 0) regions_.resize(kRegions);
}

PresentPages::~PresentPages() {
  if (fd_ >= 0) RawSyscall::Close(fd_);
}

std::pair<uint64_t, uint64_t> PresentPages::NextGap(uint64_t begin, uint64_t end) {
  if (fd_ < 0) return {end, end};
  std::span<const ProcessMappings::Mapping> all = mappings_.mappings();
  auto it =
      std::upper_bound(all.begin(), all.end(), begin,
                       [](uint64_t a, const ProcessMappings::Mapping& m) { return a < m.end; });
  for (; it != all.end() && it->start < end; ++it) {
    if (!PrivateAnonymous(*it)) continue;
    uint64_t from = std::max<uint64_t>(begin, it->start);
    uint64_t to = std::min<uint64_t>(end, it->end);
    std::pair<uint64_t, uint64_t> gap = NextGapInMapping(from, to);
    if (gap.first < to) return gap;
  }
  return {end, end};
}

std::pair<uint64_t, uint64_t> PresentPages::NextGapInMapping(uint64_t begin, uint64_t end) {
  const uint64_t limit = (end + page_size_ - 1) & ~(page_size_ - 1);
  uint64_t at = begin & ~(page_size_ - 1);
  while (at < limit) {
    Region next;
    if (!NextRegion(at, limit, &next)) break;  // unknown from here on: read
    if (next.begin > at) return {std::max(begin, at), std::min(end, next.begin)};
    at = next.end;
  }
  return {end, end};
}

bool PresentPages::NextRegion(uint64_t at, uint64_t limit, Region* region) {
  if (scan_works_ && NextRegionScan(at, limit, region)) return true;
  return NextRegionRead(at, limit, region);
}

bool PresentPages::NextRegionScan(uint64_t at, uint64_t limit, Region* region) {
  for (;;) {
    if (at >= scanned_from_ && at < scanned_to_) {
      // The first region ending after `at`, joined with the regions right after it.
      auto first = regions_.begin(),
           last = regions_.begin() + static_cast<ptrdiff_t>(region_count_);
      auto it = std::upper_bound(first, last, at,
                                 [](uint64_t a, const ScannedRegion& r) { return a < r.end; });
      if (it != last) {
        region->begin = std::max(at, it->begin);
        region->end = it->end;
        for (++it; it != last && it->begin == region->end; ++it) region->end = it->end;
        if (region->begin >= limit) *region = {limit, limit};
        region->end = std::min(region->end, limit);
        return true;
      }
      if (scanned_to_ >= limit) {
        *region = {limit, limit};
        return true;
      }
      at = scanned_to_;  // past what was scanned: scan on from there
    }
    PageMapScanArg arg = {};
    arg.size = sizeof(arg);
    arg.start = at;
    arg.end = limit;
    arg.vec = reinterpret_cast<uint64_t>(regions_.data());
    arg.vec_len = regions_.size();
    arg.category_anyof_mask = kPageIsPresent | kPageIsSwapped;
    arg.return_mask = kPageIsPresent | kPageIsSwapped;
    long n = RawSyscall::Call(SYS_ioctl, fd_, static_cast<long>(kPageMapScan),
                              reinterpret_cast<long>(&arg));
    if (n < 0 || static_cast<size_t>(n) > regions_.size() || arg.walk_end <= at ||
        arg.walk_end > limit) {
      scan_works_ = false;  // an older kernel (ENOTTY, EINVAL): read the entries instead
      region_count_ = 0;
      scanned_from_ = scanned_to_ = 0;
      return false;
    }
    region_count_ = static_cast<size_t>(n);
    scanned_from_ = at;
    scanned_to_ = arg.walk_end;
  }
}

bool PresentPages::NextRegionRead(uint64_t at, uint64_t limit, Region* region) {
  const uint64_t last = limit / page_size_;
  uint64_t page = at / page_size_, entry = 0;
  for (; page < last; ++page) {
    if (!Entry(page, last, &entry)) return false;
    if ((entry & (kInMemory | kInSwap)) != 0) break;
  }
  if (page == last) {
    *region = {limit, limit};
    return true;
  }
  region->begin = page * page_size_;
  for (++page; page < last; ++page) {
    if (!Entry(page, last, &entry) || (entry & (kInMemory | kInSwap)) == 0) break;
  }
  region->end = page * page_size_;
  return true;
}

bool PresentPages::Entry(uint64_t page_index, uint64_t last_index, uint64_t* entry) {
  if (page_index < window_first_ || page_index >= window_first_ + window_count_) {
    uint64_t want = std::min<uint64_t>(kEntries, last_index - page_index);
    if (entries_.empty()) entries_.resize(kEntries);  // only where PAGEMAP_SCAN does not answer
    long got = RawSyscall::Call(SYS_pread64, fd_, reinterpret_cast<long>(entries_.data()),
                                static_cast<long>(want * sizeof(uint64_t)),
                                static_cast<long>(page_index * sizeof(uint64_t)));
    if (got < static_cast<long>(sizeof(uint64_t))) {
      window_count_ = 0;
      return false;
    }
    window_first_ = page_index;
    window_count_ = static_cast<uint64_t>(got) / sizeof(uint64_t);
  }
  *entry = entries_[page_index - window_first_];
  return true;
}

}  // namespace heapgraph::scanner
