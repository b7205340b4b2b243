#include "heap/lag/Annealing.h"

namespace heapgraph {

void Annealing::Reset() {
  *this = Annealing();
}

bool Annealing::Due() {
  if (skip_ == 0) return true;
  --skip_;
  return false;
}

bool Annealing::ShouldWrite(uint32_t stack) {
  if (!written_ || stack != last_stack_) {
    written_ = true;
    last_stack_ = stack;
    fib_previous_ = 0;
    fib_current_ = 1;
    return true;
  }
  skip_ = fib_current_;
  uint32_t next = fib_previous_ + fib_current_;
  fib_previous_ = fib_current_;
  if (next < (1u << 30)) fib_current_ = next;
  return false;
}

}  // namespace heapgraph
