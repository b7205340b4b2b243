// tests/programs: one allocation above a 1 MiB threshold and one below it, from
// AllocateLarge(). Prints "large <address>", "small <address>" and
// "range AllocateLarge <begin> <end>", then exits 0.
#include <stdlib.h>

#include "ProgramSupport.h"

extern "C" __attribute__((noinline)) void AllocateLarge() {
  void* large = malloc(2 << 20);
  hgprog::Keep(large);
  void* small = malloc(512 << 10);
  hgprog::Keep(small);
  hgprog::PrintAddress("large", large);
  hgprog::PrintAddress("small", small);
}

int main() {
  hgprog::LineBufferedStdout();
  AllocateLarge();
  hgprog::PrintRange("AllocateLarge", reinterpret_cast<const void*>(&AllocateLarge));
  return 0;
}
