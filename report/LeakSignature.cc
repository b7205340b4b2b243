#include "report/LeakSignature.h"

#include "report/Fnv1a64.h"

namespace heapgraph::report {

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
