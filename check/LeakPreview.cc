#include "check/LeakPreview.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

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
    iovec local{buffer.data(), want};
    iovec remote{reinterpret_cast<void*>(r.examples.front()), want};
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (got > 0) r.preview = Hex(buffer.data(), static_cast<size_t>(got));
  }
}

}  // namespace heapgraph::report
