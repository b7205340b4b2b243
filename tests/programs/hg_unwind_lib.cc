// tests/programs: a library built twice (libhg_unwind_a.so, libhg_unwind_b.so) with the same code
// layout but different frame sizes (HG_FRAME_BYTES), so the same address has different unwind
// rules in each. hg_unusual_stacks reload loads A, allocates through it, unloads it and loads B,
// which the loader usually maps where A was: stale unwind rules cached for A would give B's
// allocations wrong stacks (issue 14, dlclose + dlopen of another library at the same address).
// Built -O2 -fomit-frame-pointer: only the unwind tables describe these frames.
#include <stdlib.h>

namespace {

void* volatile g_sink;

__attribute__((noipa)) void Inner(int i) {
  volatile char frame[HG_FRAME_BYTES];
  frame[0] = static_cast<char>(i);
  g_sink = malloc(16 + static_cast<size_t>(i % 8));
  frame[1] = frame[0];
}

__attribute__((noipa)) void Middle(int i) {
  volatile char frame[HG_FRAME_BYTES];
  frame[0] = static_cast<char>(i);
  Inner(i);
  frame[1] = frame[0];
}

}  // namespace

extern "C" __attribute__((visibility("default"), noipa)) void HgUnwindAllocate(int i) {
  volatile char frame[HG_FRAME_BYTES];
  frame[0] = static_cast<char>(i);
  Middle(i);
  frame[1] = frame[0];
}
