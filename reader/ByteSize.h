// reader/: a byte count as heapgraph prints it: "512 B" below 1 KiB, else two decimals in the
// largest binary unit it reaches. Two spellings, each kept byte for byte from before they were
// one function:
//   kSpaced   "1.50 KiB", "2.00 MiB", ... up to PiB: the reports (`heapgraph dump`, the FOOM
//             report's text);
//   kCompact  "1.50KiB", "48.00KiB", ... up to TiB: size categories ("Malloc 48.00KiB", the
//             seed's spelling; CategoryName in reader/RecordingReader.h).
// Full C++ (allocation).
#pragma once

#include <cstdint>
#include <string>

namespace heapgraph {

class ByteSize {
 public:
  enum class Style { kSpaced, kCompact };

  static std::string Readable(uint64_t bytes, Style style = Style::kSpaced);
};

}  // namespace heapgraph
