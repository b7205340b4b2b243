// tests/scanner/types: binds a function pointer to a symbol of a dlopen'ed test library and fails
// the test (a fatal assertion in the caller's TEST) when the symbol is missing. Test-only.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

namespace heapgraph::scanner::types {

template <typename F>
void Bind(void* handle, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(handle, name));
  ASSERT_NE(*f, nullptr) << name;
}

}  // namespace heapgraph::scanner::types
