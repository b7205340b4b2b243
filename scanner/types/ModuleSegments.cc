#include "scanner/types/ModuleSegments.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace heapgraph::scanner::types {
namespace {

std::string MainProgramPath() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

struct Collector {
  std::vector<Segment, MmapAllocator<Segment>>* segments;
  std::vector<Module>* modules;
};

// One module: its PT_LOAD segments, with the PT_GNU_RELRO part of a writable one read-only.
int AddModule(dl_phdr_info* info, size_t, void* argument) {
  auto* c = static_cast<Collector*>(argument);
  uint32_t module = static_cast<uint32_t>(c->modules->size());
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty() && module == 0) path = MainProgramPath();
  c->modules->push_back({path, info->dlpi_addr});
  uint64_t relro_begin = 0, relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_GNU_RELRO) continue;
    relro_begin = info->dlpi_addr + p.p_vaddr;
    relro_end = relro_begin + p.p_memsz;
  }
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_LOAD || (p.p_flags & PF_R) == 0 || p.p_memsz == 0) continue;
    uint64_t begin = info->dlpi_addr + p.p_vaddr;
    uint64_t end = begin + p.p_memsz;
    if ((p.p_flags & PF_X) != 0) {
      c->segments->push_back({begin, end, SegmentKind::kCode, module});
    } else if ((p.p_flags & PF_W) == 0) {
      c->segments->push_back({begin, end, SegmentKind::kReadOnly, module});
    } else {
      uint64_t rb = std::clamp(relro_begin, begin, end), re = std::clamp(relro_end, begin, end);
      if (rb > begin) c->segments->push_back({begin, rb, SegmentKind::kWritable, module});
      if (re > rb) c->segments->push_back({rb, re, SegmentKind::kReadOnly, module});
      if (end > re) c->segments->push_back({re, end, SegmentKind::kWritable, module});
    }
  }
  return 0;
}

}  // namespace

void ModuleSegments::Collect() {
  segments_.clear();
  modules_.clear();
  // Room for every module and segment first: each growth of the segments' vector cost an mmap, a
  // fault and an munmap (MmapAllocator), about 10 growths for a small program's map.
  size_t counts[2] = {0, 0};  // modules, program headers (at most 3 segments for a PT_LOAD)
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* argument) {
        auto* n = static_cast<size_t*>(argument);
        n[0] += 1;
        n[1] += 3 * static_cast<size_t>(info->dlpi_phnum);
        return 0;
      },
      counts);
  modules_.reserve(counts[0] + 8);  // modules loaded meanwhile merely grow the vectors
  segments_.reserve(counts[1] + 24);
  Collector c{&segments_, &modules_};
  dl_iterate_phdr(AddModule, &c);
  Sort();
}

void ModuleSegments::Add(uint64_t begin, uint64_t end, SegmentKind kind, std::string path) {
  uint32_t module = static_cast<uint32_t>(modules_.size());
  modules_.push_back({std::move(path), 0});
  segments_.push_back({begin, end, kind, module});
  Sort();
}

void ModuleSegments::Sort() {
  std::sort(segments_.begin(), segments_.end(),
            [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
}

const Segment* ModuleSegments::Find(uint64_t address, uint64_t length) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), address,
                             [](uint64_t a, const Segment& s) { return a < s.begin; });
  if (it == segments_.begin()) return nullptr;
  const Segment& s = *(it - 1);
  if (address + length < address || address + length > s.end) return nullptr;
  return &s;
}

}  // namespace heapgraph::scanner::types
