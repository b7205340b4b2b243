#include "heap/platform/WarningLine.h"

#include <cstring>

namespace heapgraph {

void WarningLine::Print(const char* what, const char* detail, const char* consequence) {
  WarningLine line;
  line.Append(what).AppendDetail(detail);
  if (consequence != nullptr) line.Append(consequence);
  line.Write();
}

WarningLine::WarningLine() {
  line_.Append("heapgraph: ");
}

WarningLine& WarningLine::Append(const char* text) {
  return Append(text, strlen(text));
}

// One byte of the buffer is kept for the newline Write adds.
WarningLine& WarningLine::Append(const char* text, size_t length) {
  size_t room = LineBuffer::kCapacity - 1 - line_.size();
  line_.Append(text, length < room ? length : room);
  return *this;
}

WarningLine& WarningLine::AppendDetail(const char* detail) {
  if (detail != nullptr && detail[0] != '\0') Append(": ").Append(detail);
  return *this;
}

WarningLine& WarningLine::AppendUntrusted(const char* text, size_t length) {
  for (size_t i = 0; i < length && i < kMaxUntrusted; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    char shown = c < 0x20 || c == 0x7f ? '?' : text[i];
    Append(&shown, 1);
  }
  if (length > kMaxUntrusted) Append("...");
  return *this;
}

void WarningLine::Write(int fd) {
  line_.AppendChar('\n');
  line_.WriteTo(fd);
}

}  // namespace heapgraph
