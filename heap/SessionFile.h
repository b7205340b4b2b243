// heap/: the `session` file of a recording directory: which process wrote it, when it started,
// how many allocation sequence numbers were handed out, and whether it exited cleanly.
#pragma once

#include <cstdint>

#include "heap/MappedFile.h"
#include "heap/PersistedFormat.h"

namespace heapgraph {

class SessionFile {
 public:
  static constexpr uint64_t kSequenceBlock = 1024;

  // `first_sequence`: where sequence numbers continue from (a forked child continues its parent's).
  bool Create(int dir_fd, uint32_t max_depth, uint64_t first_sequence = 0);
  void MarkExited();
  // Reserves kSequenceBlock consecutive sequence numbers; returns the first.
  uint64_t TakeSequenceBlock();
  format::SessionHeader* header() const { return header_; }

 private:
  MappedFile file_;
  format::SessionHeader* header_ = nullptr;
};

}  // namespace heapgraph
