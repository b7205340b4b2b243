// tests/programs: dlopen under the recorder. Usage:
//   hg_dlopen load PATH       dlopen PATH; prints "init_block <address>" (allocated by its
//                             constructor) and "call_block <address>" (by HgDlAllocate()), then
//                             "ready" and waits for stdin to close
//   hg_dlopen deepbind PATH   dlopen PATH with RTLD_DEEPBIND; prints "deepbind <1|0>"
//   hg_dlopen runpath         dlopen("libhg_runpath_lib.so"), which only this executable's RUNPATH
//                             ($ORIGIN/runpath_libs) finds; prints "runpath <value>" or
//                             "runpath_error <dlerror>"
#include <dlfcn.h>
#include <string.h>

#include "ProgramSupport.h"

namespace {

using BlockFn = void* (*)();

int Load(const char* path) {
  void* handle = dlopen(path, RTLD_NOW);
  if (handle == nullptr) {
    printf("load_error %s\n", dlerror());
    return 1;
  }
  auto init_block = reinterpret_cast<BlockFn>(dlsym(handle, "HgDlInitBlock"));
  auto allocate = reinterpret_cast<BlockFn>(dlsym(handle, "HgDlAllocate"));
  if (init_block == nullptr || allocate == nullptr) return 1;
  void* block = allocate();
  hgprog::Keep(block);
  hgprog::PrintAddress("init_block", init_block());
  hgprog::PrintAddress("call_block", block);
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  return 0;
}

int DeepBind(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_DEEPBIND);
  printf("deepbind %d\n", handle != nullptr ? 1 : 0);
  return 0;
}

int Runpath() {
  void* handle = dlopen("libhg_runpath_lib.so", RTLD_NOW);
  if (handle == nullptr) {
    printf("runpath_error %s\n", dlerror());
    return 0;
  }
  auto value = reinterpret_cast<int (*)()>(dlsym(handle, "HgRunpathValue"));
  printf("runpath %d\n", value != nullptr ? value() : -1);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  if (argc == 3 && strcmp(argv[1], "load") == 0) return Load(argv[2]);
  if (argc == 3 && strcmp(argv[1], "deepbind") == 0) return DeepBind(argv[2]);
  if (argc == 2 && strcmp(argv[1], "runpath") == 0) return Runpath();
  fprintf(stderr, "usage: hg_dlopen load|deepbind PATH | runpath\n");
  return 2;
}
