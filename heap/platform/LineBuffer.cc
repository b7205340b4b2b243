#include "heap/platform/LineBuffer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace heapgraph {

LineBuffer& LineBuffer::Append(const char* text) {
  return Append(text, strlen(text));
}

LineBuffer& LineBuffer::Append(const char* text, size_t length) {
  size_t room = kCapacity - size_;
  if (length > room) length = room;
  memcpy(data_ + size_, text, length);
  size_ += length;
  return *this;
}

LineBuffer& LineBuffer::AppendChar(char c) {
  return Append(&c, 1);
}

LineBuffer& LineBuffer::AppendDecimal(uint64_t value) {
  char digits[20];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (n > 0) AppendChar(digits[--n]);
  return *this;
}

LineBuffer& LineBuffer::AppendHex(uint64_t value) {
  static const char kHex[] = "0123456789abcdef";
  char digits[16];
  size_t n = 0;
  do {
    digits[n++] = kHex[value & 15];
    value >>= 4;
  } while (value != 0);
  Append("0x", 2);
  while (n > 0) AppendChar(digits[--n]);
  return *this;
}

LineBuffer& LineBuffer::AppendHexBytes(const uint8_t* bytes, size_t count) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < count; ++i) {
    AppendChar(kHex[bytes[i] >> 4]);
    AppendChar(kHex[bytes[i] & 15]);
  }
  return *this;
}

void LineBuffer::WriteTo(int fd) const {
  size_t done = 0;
  while (done < size_) {
    ssize_t n = write(fd, data_ + done, size_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace heapgraph
