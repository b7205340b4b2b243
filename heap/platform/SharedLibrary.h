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

  // Objects the dynamic loader added while SharedLibrary opened libraries in this process (each
  // library with the dependencies it brought). glibc's dlpi_adds minus this counts the modules
  // the program loaded: heapgraph's own on-demand libraries are no reason to prepare type readers
  // again (check/ReaderCache). A library the program loads while heapgraph opens one is counted
  // here too (it is then noticed at the next change).
  static uint64_t AddedObjects();

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
