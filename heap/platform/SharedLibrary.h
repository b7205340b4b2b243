// heap/platform/: a shared library loaded when it is first needed instead of at program start.
// Capstone, Graphviz and libdebuginfod serve only some checks and commands, yet linking them made
// every process that loads heapgraph pay their load and relocation (libdebuginfod and Graphviz
// alone: 37 libraries, ≈ 7 ms of every `heapgraph` command; issue 14). The library is opened by
// SONAME with RTLD_NOW | RTLD_LOCAL (bound at once, so later calls, also in a forked child, never
// enter the dynamic loader; local, so none of its symbols interposes the program's) and never
// closed, so a function bound from it stays valid for the life of the process.
// Not for hooks: dlopen allocates and takes the loader's lock. Includes libc only.
#pragma once

#include <cstdint>

namespace heapgraph {

class SharedLibrary {
 public:
  // Opens `soname` (a file name the loader searches for, e.g. "libgvc.so.6").
  explicit SharedLibrary(const char* soname);
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }

  // A number that changes whenever the program loads or unloads a module (glibc's dlpi_adds and
  // dlpi_subs counters), but not when SharedLibrary opens one: heapgraph's own on-demand
  // libraries are no reason to prepare type readers again (check/ReaderCache). The objects a load
  // here added are counted while it runs, so a module the program loads at that very moment is
  // only noticed at its next change.
  static uint64_t ProgramModuleGeneration();

  // Sets `*function` to the function `name` of the library or of one it depends on; false (and
  // null) when there is none or the library is not loaded.
  template <typename F>
  bool Bind(const char* name, F* function) const {
    *function = reinterpret_cast<F>(Symbol(name));
    return *function != nullptr;
  }

 private:
  void* Symbol(const char* name) const;

  void* handle_;
};

}  // namespace heapgraph
