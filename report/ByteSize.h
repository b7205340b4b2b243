// report/: a byte count as the reports print it: "512 B" below 1 KiB, else two
// decimals in the largest binary unit it reaches ("1.50 KiB", "2.00 MiB", up to PiB). Used by
// `heapgraph dump` and the FOOM report's text. Full C++ (allocation).
#pragma once

#include <cstdint>
#include <string>

namespace heapgraph {

class ByteSize {
 public:
  static std::string Readable(uint64_t bytes);
};

}  // namespace heapgraph
