#include "report/BuildIdHex.h"

namespace heapgraph::report {

std::string BuildIdHex(const uint8_t (&bytes)[format::kMaxBuildId], uint32_t length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint32_t i = 0; i < length && i < format::kMaxBuildId; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 15];
  }
  return hex;
}

}  // namespace heapgraph::report
