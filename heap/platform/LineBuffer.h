// heap/platform/: a fixed-capacity text line for messages written from inside allocation hooks,
// where neither malloc nor stdio may be used. Appends past the capacity are dropped (the line is
// cut, never overflowed). Includes libc only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapgraph {

class LineBuffer {
 public:
  static constexpr size_t kCapacity = 1024;

  LineBuffer& Append(const char* text);
  LineBuffer& Append(const char* text, size_t length);
  LineBuffer& AppendDecimal(uint64_t value);
  LineBuffer& AppendHex(uint64_t value);  // "0x" prefix, lowercase
  LineBuffer& AppendHexBytes(const uint8_t* bytes, size_t count);
  LineBuffer& AppendChar(char c);

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  void Clear() { size_ = 0; }

  // Writes the whole line to `fd` with write(2), retrying on EINTR and short writes.
  void WriteTo(int fd) const;

 private:
  char data_[kCapacity];
  size_t size_ = 0;
};

}  // namespace heapgraph
