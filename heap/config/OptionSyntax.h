// heap/config/: the syntaxes of HEAPGRAPH_OPTIONS values, one small type per syntax holding its
// limits, named by the option table (heap/config/Options.inc): `Range(1, 64)` reads "1".."64"
// into a uint32_t. Parse(text, length, out) reads exactly `length` bytes of `text` (no NUL needed)
// and writes *out only when the whole value is valid (else *out keeps its value); it never
// allocates and never writes anything but *out. Includes libc only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace heapgraph {

// Parses "123", "8K", "8M", "1G" (binary units). Returns false on garbage or overflow.
bool ParseByteSize(const char* text, size_t length, uint64_t* out);

namespace option {

// True when [text, text + length) is exactly `word` (a key or a value of an options string).
bool Equals(const char* text, size_t length, const char* word);

// "1", "true", "yes" or "0", "false", "no".
struct Flag {
  bool Parse(const char* text, size_t length, bool* out) const;
};

// A decimal number of 64 bits at most.
struct Number {
  bool Parse(const char* text, size_t length, uint64_t* out) const;
};

// A byte count: ParseByteSize.
struct ByteCount {
  bool Parse(const char* text, size_t length, uint64_t* out) const {
    return ParseByteSize(text, length, out);
  }
};

// A decimal number in lo..hi.
struct Range {
  constexpr Range(uint32_t lo, uint32_t hi) : lo(lo), hi(hi) {}
  bool Parse(const char* text, size_t length, uint32_t* out) const;
  uint32_t lo, hi;
};

// 0 (off), or a decimal number in lo..hi.
struct ZeroOrRange {
  constexpr ZeroOrRange(uint32_t lo, uint32_t hi) : lo(lo), hi(hi) {}
  bool Parse(const char* text, size_t length, uint32_t* out) const;
  uint32_t lo, hi;
};

// A power of two in lo..hi.
struct PowerOfTwo {
  constexpr PowerOfTwo(uint32_t lo, uint32_t hi) : lo(lo), hi(hi) {}
  bool Parse(const char* text, size_t length, uint32_t* out) const;
  uint32_t lo, hi;
};

// 0 (off), or a signal number 1..64 that a leak-check trigger can take over: not SIGKILL or
// SIGSTOP (cannot be caught), not a synchronous fault signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
// SIGTRAP, SIGSYS: a handler that returns makes a faulting program fault again forever), not
// glibc's internal 32 and 33 (SIGCANCEL, SIGSETXID).
struct SignalNumber {
  static bool Usable(uint32_t signal);
  bool Parse(const char* text, size_t length, uint32_t* out) const;
};

// "auto" gives `automatic`, a Flag gives `on` or `off`.
struct AutoOrFlag {
  constexpr AutoOrFlag(uint32_t automatic, uint32_t on, uint32_t off)
      : automatic(automatic), on(on), off(off) {}
  bool Parse(const char* text, size_t length, uint32_t* out) const;
  uint32_t automatic, on, off;
};

// The sampling mean: "0"/"off" or a false Flag = 0 (full recording), "1"/"on" or a true Flag = the
// default mean, else a byte count from 2 to the largest mean (heap/runtime/AllocationSampler.h).
struct SampleMean {
  bool Parse(const char* text, size_t length, uint64_t* out) const;
};

// A path that fits, NUL included, in the char array; at least `min_length` bytes. The value
// `alias` (when not null) stands for `alias_path` instead ("stderr" for "-", say).
struct PathText {
  constexpr explicit PathText(size_t min_length, const char* alias = nullptr,
                              const char* alias_path = nullptr)
      : min_length(min_length), alias(alias), alias_path(alias_path) {}
  template <size_t N>
  bool Parse(const char* text, size_t length, char (*out)[N]) const {
    if (alias != nullptr && length == strlen(alias) && memcmp(text, alias, length) == 0) {
      text = alias_path;
      length = strlen(alias_path);
    } else if (length < min_length) {
      return false;
    }
    if (length >= N) return false;
    memcpy(*out, text, length);
    (*out)[length] = '\0';
    return true;
  }
  size_t min_length;
  const char* alias;
  const char* alias_path;
};

// 1..N percentages in lo..hi, strictly ascending, separated by '/' ("50/75/90"); how many goes
// to *count.
struct Percentages {
  constexpr Percentages(uint32_t lo, uint32_t hi, uint32_t* count) : lo(lo), hi(hi), count(count) {}
  template <size_t N>
  bool Parse(const char* text, size_t length, uint32_t (*out)[N]) const {
    uint32_t values[N];
    uint32_t n = ParseList(text, length, values, N);
    if (n == 0) return false;
    memcpy(*out, values, n * sizeof(values[0]));
    *count = n;
    return true;
  }
  // The number of values read into `values` (at most `capacity`); 0 if the text is not a list.
  uint32_t ParseList(const char* text, size_t length, uint32_t* values, size_t capacity) const;
  uint32_t lo, hi;
  uint32_t* count;
};

}  // namespace option
}  // namespace heapgraph
