#include "heap/platform/PidPattern.h"

#include <stdio.h>

namespace heapgraph {

void ExpandPidPattern(const char* pattern, int pid, char* out, size_t size) {
  size_t n = 0;
  for (const char* c = pattern; *c != '\0' && n + 1 < size; ++c) {
    if (c[0] == '%' && c[1] == 'p') {
      int written = snprintf(out + n, size - n, "%d", pid);
      n += written < 0 ? 0 : static_cast<size_t>(written);
      if (n >= size) n = size - 1;
      ++c;
      continue;
    }
    if (c[0] == '%' && c[1] == '%') ++c;
    out[n++] = *c;
  }
  out[n] = '\0';
}

}  // namespace heapgraph
