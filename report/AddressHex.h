// report/: how the JSON documents write an address, an offset or a sequence number: "0x" and
// lower-case hex digits, no padding ("0x7f3a12c0"; docs/report-format.md, docs/foom-report.md).
// Header only: the JSON writers of every report library use it.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace heapgraph::report {

inline std::string AddressHex(uint64_t value) {
  return fmt::format("{:#x}", value);
}

}  // namespace heapgraph::report
