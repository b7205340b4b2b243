#include "check/LeakPreview.h"


#include <algorithm>
#include <vector>

#include "roots/RawSyscall.h"

namespace heapgraph::report {
namespace {

std::string Hex(const uint8_t* bytes, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 15];
  }
  return hex;
}

}  // namespace

void AddLeakPreviews(LeakReport& report, uint32_t bytes) {
  std::vector<uint8_t> buffer(bytes);
  for (LeakRecord& r : report.leaks) {
    if (r.kind != LeakKind::kDirect || !r.suppressed.empty() || r.examples.empty()) continue;
    uint64_t block = r.block_size != 0 ? r.block_size : r.size / r.count;
    size_t want = static_cast<size_t>(std::min<uint64_t>(bytes, block));
    if (want == 0) continue;
    long got = roots::RawSyscall::ReadOwnMemoryPart(r.examples.front(), buffer.data(), want);
    if (got > 0) r.preview = Hex(buffer.data(), static_cast<size_t>(got));
  }
}

}  // namespace heapgraph::report
