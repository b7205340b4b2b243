// heap/platform/: bounded reads of DWARF data in a mapped image (.eh_frame, .eh_frame_hdr, the
// expressions of call-frame information): fixed-size values, LEB128 numbers and encoded pointers.
// A read past `end` sets `bad` and yields 0; every later read yields 0 too. No allocation, no
// system call: usable inside malloc hooks.
#pragma once

#include <cstdint>
#include <cstring>

namespace heapgraph {

struct ByteReader {
  const uint8_t* at;
  const uint8_t* end;
  bool bad = false;

  bool Has(uintptr_t n) {
    if (bad || static_cast<uintptr_t>(end - at) < n) bad = true;
    return !bad;
  }
  template <typename T>
  T Fixed() {
    T value{};
    if (!Has(sizeof(T))) return value;
    memcpy(&value, at, sizeof(T));
    at += sizeof(T);
    return value;
  }
  uint64_t Uleb() {
    uint64_t value = 0;
    for (int shift = 0; Has(1); shift += 7) {
      uint8_t byte = *at++;
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return 0;
  }
  int64_t Sleb() {
    uint64_t value = 0;
    int shift = 0;
    while (Has(1)) {
      uint8_t byte = *at++;
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      shift += 7;
      if ((byte & 0x80) == 0) {
        if (shift < 64 && (byte & 0x40) != 0) value |= ~uint64_t{0} << shift;
        return static_cast<int64_t>(value);
      }
    }
    return 0;
  }
  void Skip(uint64_t n) {
    if (Has(n)) at += n;
  }
  // A pointer in encoding `encoding` (absolute, or pc-relative to where it is stored); indirect,
  // text- and function-relative encodings are refused (bad).
  uintptr_t Encoded(uint8_t encoding, uintptr_t datarel_base = 0) {
    auto field = reinterpret_cast<uintptr_t>(at);
    uint64_t value = 0;
    switch (encoding & 0x0f) {
      case 0x00:
        value = Fixed<uint64_t>();
        break;
      case 0x01:
        value = Uleb();
        break;
      case 0x02:
        value = Fixed<uint16_t>();
        break;
      case 0x03:
        value = Fixed<uint32_t>();
        break;
      case 0x04:
        value = Fixed<uint64_t>();
        break;
      case 0x09:
        value = static_cast<uint64_t>(Sleb());
        break;
      case 0x0a:
        value = static_cast<uint64_t>(int64_t{Fixed<int16_t>()});
        break;
      case 0x0b:
        value = static_cast<uint64_t>(int64_t{Fixed<int32_t>()});
        break;
      case 0x0c:
        value = Fixed<uint64_t>();
        break;
      default:
        bad = true;
        return 0;
    }
    switch (encoding & 0x70) {
      case 0x00:
        return value;
      case 0x10:
        return field + value;
      case 0x30:
        return datarel_base + value;
      default:
        bad = true;
        return 0;
    }
  }
};

}  // namespace heapgraph
