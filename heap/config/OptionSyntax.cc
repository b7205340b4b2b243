#include "heap/config/OptionSyntax.h"

#include <signal.h>

#include "heap/runtime/AllocationSampler.h"

namespace heapgraph {
namespace {

bool ParseUnsigned(const char* text, size_t length, uint64_t* out) {
  if (length == 0) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < length; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

bool ParseInRange(const char* text, size_t length, uint64_t lo, uint64_t hi, uint32_t* out) {
  uint64_t v;
  if (!ParseUnsigned(text, length, &v) || v < lo || v > hi) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace

bool ParseByteSize(const char* text, size_t length, uint64_t* out) {
  if (length == 0) return false;
  uint64_t multiplier = 1;
  char unit = text[length - 1];
  if (unit == 'k' || unit == 'K') multiplier = uint64_t{1} << 10;
  if (unit == 'm' || unit == 'M') multiplier = uint64_t{1} << 20;
  if (unit == 'g' || unit == 'G') multiplier = uint64_t{1} << 30;
  if (multiplier != 1) --length;
  uint64_t v;
  if (!ParseUnsigned(text, length, &v)) return false;
  if (v > UINT64_MAX / multiplier) return false;
  *out = v * multiplier;
  return true;
}

namespace option {

bool Equals(const char* text, size_t length, const char* word) {
  return length == strlen(word) && memcmp(text, word, length) == 0;
}

bool Flag::Parse(const char* text, size_t length, bool* out) const {
  if (Equals(text, length, "1") || Equals(text, length, "true") || Equals(text, length, "yes")) {
    *out = true;
    return true;
  }
  if (Equals(text, length, "0") || Equals(text, length, "false") || Equals(text, length, "no")) {
    *out = false;
    return true;
  }
  return false;
}

bool Number::Parse(const char* text, size_t length, uint64_t* out) const {
  return ParseUnsigned(text, length, out);
}

bool Range::Parse(const char* text, size_t length, uint32_t* out) const {
  return ParseInRange(text, length, lo, hi, out);
}

bool ZeroOrRange::Parse(const char* text, size_t length, uint32_t* out) const {
  uint32_t v;
  if (!ParseInRange(text, length, 0, hi, &v) || (v != 0 && v < lo)) return false;
  *out = v;
  return true;
}

bool PowerOfTwo::Parse(const char* text, size_t length, uint32_t* out) const {
  uint32_t v;
  if (!ParseInRange(text, length, lo, hi, &v) || (v & (v - 1)) != 0) return false;
  *out = v;
  return true;
}

bool SignalNumber::Usable(uint32_t signal) {
  switch (signal) {
    // Cannot be caught.
    case SIGKILL:
    case SIGSTOP:
    // Synchronous faults: a handler that returns sends the thread back to the faulting
    // instruction, which faults again, so a program that faults would never die.
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGTRAP:
    case SIGSYS:
      return false;
    default:
      // glibc's own (SIGCANCEL 32, SIGSETXID 33): thread cancellation and setuid across threads.
      return signal <= 64 && signal != 32 && signal != 33;
  }
}

bool SignalNumber::Parse(const char* text, size_t length, uint32_t* out) const {
  uint32_t v;
  if (!ParseInRange(text, length, 0, 64, &v) || (v != 0 && !Usable(v))) return false;
  *out = v;
  return true;
}

bool AutoOrFlag::Parse(const char* text, size_t length, uint32_t* out) const {
  bool flag;
  if (Equals(text, length, "auto")) {
    *out = automatic;
  } else if (Flag().Parse(text, length, &flag)) {
    *out = flag ? on : off;
  } else {
    return false;
  }
  return true;
}

bool SampleMean::Parse(const char* text, size_t length, uint64_t* out) const {
  bool on = Equals(text, length, "on");
  if (on || Equals(text, length, "off") || Flag().Parse(text, length, &on)) {
    *out = on ? AllocationSampler::kDefaultMean : 0;
    return true;
  }
  uint64_t v;
  if (!ParseByteSize(text, length, &v) || v < 2 || v > AllocationSampler::kMaxMean) return false;
  *out = v;
  return true;
}

uint32_t Percentages::ParseList(const char* text, size_t length, uint32_t* values,
                                size_t capacity) const {
  uint32_t count = 0;
  for (size_t begin = 0; begin <= length;) {
    size_t end = begin;
    while (end < length && text[end] != '/') ++end;
    uint32_t v;
    if (count == capacity || !ParseInRange(text + begin, end - begin, lo, hi, &v) ||
        (count > 0 && v <= values[count - 1])) {
      return 0;
    }
    values[count++] = v;
    begin = end + 1;
  }
  return count;
}

}  // namespace option
}  // namespace heapgraph
