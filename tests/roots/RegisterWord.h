// tests/roots: the first 64-bit word of a register's saved bytes (0 when fewer than 8), for the
// tests that read registers of stopped threads. Test-only.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

namespace heapgraph::roots {

inline uint64_t FirstWord(std::span<const uint8_t> bytes) {
  uint64_t value = 0;
  if (bytes.size() >= sizeof(value)) std::memcpy(&value, bytes.data(), sizeof(value));
  return value;
}

}  // namespace heapgraph::roots
