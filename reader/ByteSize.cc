#include "reader/ByteSize.h"

#include <cstdio>
#include <iterator>

namespace heapgraph {

std::string ByteSize::Readable(uint64_t bytes, Style style) {
  char text[64];
  if (bytes < 1024) {
    snprintf(text, sizeof(text), "%llu B", static_cast<unsigned long long>(bytes));
    return text;
  }
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  // The compact spelling has always stopped at TiB ("1024.00TiB" for 1 PiB).
  size_t last = style == Style::kCompact ? 3 : std::size(kUnits) - 1;
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit < last) {
    value /= 1024.0;
    ++unit;
  }
  snprintf(text, sizeof(text), style == Style::kCompact ? "%.2f%s" : "%.2f %s", value,
           kUnits[unit]);
  return text;
}

}  // namespace heapgraph
