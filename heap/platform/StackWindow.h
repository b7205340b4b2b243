// heap/platform/: the part of the stack an unwinder's step may read, [low, high). Every read a
// step makes through its rules (the saved-register slots of a CFI rule, the loads of a DWARF
// expression) goes through Read, so a wrong register value makes the step fail instead of
// reading outside the stack. No allocation, no system call: usable inside malloc hooks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace heapgraph {

struct StackWindow {
  uintptr_t low = 0;
  uintptr_t high = 0;

  // The `size` bytes (1 to 8) at `address`, zero-extended; false unless they lie in the window.
  bool Read(uintptr_t address, size_t size, uintptr_t* value) const {
    if (size == 0 || size > sizeof(uintptr_t) || address < low || address > high ||
        high - address < size) {
      return false;
    }
    uintptr_t word = 0;
    memcpy(&word, reinterpret_cast<const void*>(address), size);
    *value = word;
    return true;
  }
};

}  // namespace heapgraph
