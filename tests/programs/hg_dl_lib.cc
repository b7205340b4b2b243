// tests/programs: libhg_dl_lib.so, dlopened by hg_dlopen. Allocates 6001 bytes in its
// constructor and 6002 bytes in HgDlAllocate(), so that both blocks' innermost frames lie in this
// library.
#include <stdlib.h>

namespace {

void* volatile g_init_block = nullptr;

__attribute__((constructor)) void AllocateAtLoad() {
  g_init_block = malloc(6001);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* HgDlInitBlock() {
  return g_init_block;
}

extern "C" __attribute__((visibility("default"), noinline)) void* HgDlAllocate() {
  void* volatile p = malloc(6002);
  return p;
}
