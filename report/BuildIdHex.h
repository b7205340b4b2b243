// report/: a GNU build-id as the reports print it: lower-case hex, two digits a byte, no prefix
// ("" when there is none). The length comes from a recording and may be corrupt: no more than the
// record's array (format::kMaxBuildId bytes) is ever read. May include every layer below report/.
#pragma once

#include <cstdint>
#include <string>

#include "heap/store/PersistedFormat.h"

namespace heapgraph::report {

std::string BuildIdHex(const uint8_t (&bytes)[format::kMaxBuildId], uint32_t length);

}  // namespace heapgraph::report
