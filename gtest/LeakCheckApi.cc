#include "gtest/LeakCheckApi.h"

#include <dlfcn.h>

namespace heapgraph::gtest {
namespace {

// libheapgraph_scan.so beside the library that defines `symbol`, dlopened; null if not found.
void* PluginBeside(void* symbol) {
  Dl_info info;
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  std::string path = info.dli_fname;
  path = path.substr(0, path.rfind('/') + 1) + "libheapgraph_scan.so";
  return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
}

}  // namespace

LeakCheckApi::LeakCheckApi() {
  checkpoint_ =
      reinterpret_cast<decltype(checkpoint_)>(dlsym(RTLD_DEFAULT, "heapgraph_checkpoint"));
  if (checkpoint_ == nullptr) {
    error_ = "libheapgraph.so is not loaded (LD_PRELOAD it or link it)";
    return;
  }
  void* since = dlsym(RTLD_DEFAULT, "heapgraph_check_leaks_since");
  if (since == nullptr) {
    void* plugin = PluginBeside(reinterpret_cast<void*>(checkpoint_));
    since = plugin == nullptr ? nullptr : dlsym(plugin, "heapgraph_check_leaks_since");
  }
  check_since_ = reinterpret_cast<decltype(check_since_)>(since);
  if (check_since_ == nullptr) error_ = "libheapgraph_scan.so could not be loaded";
}

}  // namespace heapgraph::gtest
