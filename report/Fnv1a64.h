// report/: FNV-1a 64 over a sequence of byte strings, each ended by a NUL byte so that ("ab", "c")
// and ("a", "bc") differ. Leak signatures (LeakSignature) and the SymbolCache's record check use
// it. May include nothing of the project.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace heapgraph::report {

class Fnv1a64 {
 public:
  void Add(std::string_view bytes) {
    for (unsigned char c : bytes) Mix(c);
    Mix(0);
  }
  uint64_t value() const { return hash_; }
  // Sixteen lower-case hex digits.
  std::string Hex() const {
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash_));
    return text;
  }

 private:
  void Mix(unsigned char c) {
    hash_ ^= c;
    hash_ *= 0x100000001b3ull;
  }
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace heapgraph::report
