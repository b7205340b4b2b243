#include "report/LeakSignature.h"

#include <cstdint>
#include <cstdio>

namespace heapgraph::report {
namespace {

class Fnv1a64 {
 public:
  // Each piece ends with a byte no name holds, so ("ab", "c") and ("a", "bc") differ.
  void Add(std::string_view text) {
    for (unsigned char c : text) Mix(c);
    Mix(0);
  }
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

}  // namespace

std::string LeakSignature(std::string_view kind, const std::vector<SignatureFrame>& frames) {
  Fnv1a64 hash;
  hash.Add(kind);
  for (const SignatureFrame& f : frames) {
    hash.Add(f.function.empty() ? std::string_view("?") : f.function);
    hash.Add(f.module);
  }
  return hash.Hex();
}

std::string LeakSignature(std::string_view kind, const FrameList& stack) {
  std::vector<SignatureFrame> frames;
  frames.reserve(stack.size());
  for (const ReportFrame& f : stack) frames.push_back({f.function, f.module});
  return LeakSignature(kind, frames);
}

}  // namespace heapgraph::report
