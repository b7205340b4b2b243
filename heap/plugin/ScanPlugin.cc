#include "heap/plugin/ScanPlugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include <atomic>

#include "heap/platform/WarningLine.h"

namespace heapgraph {
namespace {

// libheapgraph_scan.so in the directory of the library holding this code.
bool PluginPath(char* out, size_t size) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&PluginPath), &info) == 0 || info.dli_fname == nullptr) {
    return false;
  }
  const char* slash = strrchr(info.dli_fname, '/');
  size_t dir = slash == nullptr ? 0 : static_cast<size_t>(slash - info.dli_fname + 1);
  const char* name = "libheapgraph_scan.so";
  if (dir + strlen(name) + 1 > size) return false;
  memcpy(out, info.dli_fname, dir);
  strcpy(out + dir, name);
  return true;
}

void Complain(const char* what, const char* detail) {
  WarningLine().Append("cannot load ").Append(what).AppendDetail(detail).Write();
}

// The entry point `symbol` of the plugin; null after one line on stderr
// ("heapgraph: cannot load <what>: <why>").
void* Find(const char* symbol, const char* what) {
  char path[1024];
  // dlopen of a loaded library only takes a reference (no-op with -z nodelete semantics here).
  void* plugin = PluginPath(path, sizeof(path)) ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (plugin == nullptr) {
    Complain(what, dlerror());
    return nullptr;
  }
  void* entry = dlsym(plugin, symbol);
  if (entry == nullptr) Complain(what, dlerror());
  return entry;
}

// `symbol`'s entry, looked up once (the plugin is never unloaded): later lookups do not enter the
// loader.
// Held across a lookup's dlopen and across fork() (BeforeFork .. AfterFork): a fork while another
// thread is inside that dlopen gave the child a half-relocated plugin, and its first check jumped
// through an unrelocated entry.
pthread_mutex_t g_loading = PTHREAD_MUTEX_INITIALIZER;

void* Cached(std::atomic<void*>& entry, const char* symbol, const char* what) {
  void* found = entry.load(std::memory_order_acquire);
  if (found != nullptr) return found;
  pthread_mutex_lock(&g_loading);
  found = entry.load(std::memory_order_acquire);
  if (found == nullptr) found = Find(symbol, what);
  if (found != nullptr) entry.store(found, std::memory_order_release);
  pthread_mutex_unlock(&g_loading);
  return found;
}

std::atomic<void*> g_check_leaks{nullptr};
std::atomic<void*> g_refresh_types{nullptr};

}  // namespace

HeapgraphCheckLeaksFn ScanPlugin::CheckLeaks() {
  return reinterpret_cast<HeapgraphCheckLeaksFn>(
      Cached(g_check_leaks, HEAPGRAPH_CHECK_LEAKS_SYMBOL, "the leak checker"));
}

void ScanPlugin::BeforeFork() {
  pthread_mutex_lock(&g_loading);
}

void ScanPlugin::AfterFork() {
  pthread_mutex_unlock(&g_loading);
}

HeapgraphRefreshTypesFn ScanPlugin::RefreshTypes() {
  return reinterpret_cast<HeapgraphRefreshTypesFn>(
      Cached(g_refresh_types, HEAPGRAPH_REFRESH_TYPES_SYMBOL, "the type reader"));
}

}  // namespace heapgraph
