#include "heap/StackCapture.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <cstring>

namespace heapgraph {
namespace {
uintptr_t own_begin = 0;
uintptr_t own_end = 0;
}  // namespace

void StackCapture::SetOwnCode(uintptr_t begin, uintptr_t end) {
  own_begin = begin;
  own_end = end;
}

void StackCapture::Initialize() {
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

uint32_t StackCapture::Capture(uintptr_t* out, uint32_t max_depth) {
  int n = unw_backtrace(reinterpret_cast<void**>(out), static_cast<int>(max_depth + kMaxOwnFrames));
  if (n <= 0) return 0;
  uint32_t skip = 0;
  while (skip < static_cast<uint32_t>(n) && out[skip] >= own_begin && out[skip] < own_end) ++skip;
  uint32_t depth = static_cast<uint32_t>(n) - skip;
  if (depth > max_depth) depth = max_depth;
  if (skip != 0) memmove(out, out + skip, depth * sizeof(uintptr_t));
  return depth;
}

}  // namespace heapgraph
