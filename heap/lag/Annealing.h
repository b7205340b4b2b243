// heap/lag/: the watchdog's annealing (seed 003): while one lag goes on, a check whose most
// time-consuming stack is the one last written writes nothing and backs the checks off along the
// Fibonacci sequence (skip 1, 1, 2, 3, 5, 8 ... checks), until the stack changes or the lag ends,
// so that a deadlock writes a bounded number of records. Pure state, no I/O. Includes libc only.
#pragma once

#include <cstdint>

namespace heapgraph {

class Annealing {
 public:
  // A new lag (another unit of work, or after the last one ended): the next check writes.
  void Reset();
  // One check during the lag: false while backing off (nothing to compute); else true.
  bool Due();
  // After a due check computed `stack`: true when it is to be written (it differs from the last
  // one written, or nothing was written yet in this lag); false starts or extends the back-off.
  bool ShouldWrite(uint32_t stack);

  uint32_t skipping() const { return skip_; }

 private:
  bool written_ = false;
  uint32_t last_stack_ = 0;
  uint32_t skip_ = 0;  // checks left to skip
  uint32_t fib_previous_ = 0;
  uint32_t fib_current_ = 1;
};

}  // namespace heapgraph
