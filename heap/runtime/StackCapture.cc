#include "heap/runtime/StackCapture.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>

#include <cstring>

namespace heapgraph {
namespace {
uintptr_t own_begin = 0;
uintptr_t own_end = 0;
// libunwind's executable segment; empty until Initialize.
uintptr_t unwinder_begin = 0;
uintptr_t unwinder_end = 0;
__thread bool t_in_unwinder __attribute__((tls_model("initial-exec"))) = false;

struct SegmentSearch {
  uintptr_t address;
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

// The executable PT_LOAD segment holding search->address.
int FindSegment(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<SegmentSearch*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (search->address >= begin && search->address < begin + ph.p_memsz) {
      search->begin = begin;
      search->end = begin + ph.p_memsz;
      return 1;
    }
  }
  return 0;
}

}  // namespace

void StackCapture::SetOwnCode(uintptr_t begin, uintptr_t end) {
  own_begin = begin;
  own_end = end;
}

void StackCapture::Initialize() {
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  SegmentSearch search{reinterpret_cast<uintptr_t>(&unw_backtrace)};
  dl_iterate_phdr(FindSegment, &search);
  unwinder_begin = search.begin;
  unwinder_end = search.end;
}

bool StackCapture::IsUnwinderCall(uintptr_t return_address) {
  return t_in_unwinder && return_address >= unwinder_begin && return_address < unwinder_end;
}

uint32_t StackCapture::Capture(uintptr_t* out, uint32_t max_depth) {
  t_in_unwinder = true;
  int n = unw_backtrace(reinterpret_cast<void**>(out), static_cast<int>(max_depth + kMaxOwnFrames));
  t_in_unwinder = false;
  if (n <= 0) return 0;
  uint32_t skip = 0;
  while (skip < static_cast<uint32_t>(n) && out[skip] >= own_begin && out[skip] < own_end) ++skip;
  uint32_t depth = static_cast<uint32_t>(n) - skip;
  if (depth > max_depth) depth = max_depth;
  if (skip != 0) memmove(out, out + skip, depth * sizeof(uintptr_t));
  return depth;
}

}  // namespace heapgraph
