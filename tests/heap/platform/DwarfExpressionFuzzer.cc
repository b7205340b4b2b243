// libFuzzer target for DwarfExpression: every input is evaluated as a DWARF expression against a
// register set whose stack pointer and frame pointer lie in a 256-byte window of this harness's
// stack (the only memory reads may touch), once without and once with an initial value pushed.
// The only acceptable outcomes are a value or a refusal: no read outside the window, no endless
// loop, no crash.
//
// Built by tests/heap/CMakeLists.txt with clang++ -fsanitize=fuzzer,address,undefined into
// <build>/tests/heap/dwarf_expression_fuzzer; ctest runs a 20000-input smoke test. A longer run:
//   mkdir -p /tmp/dx-corpus && <build>/tests/heap/dwarf_expression_fuzzer /tmp/dx-corpus
//       -max_len=512 -max_total_time=600
// Input: the first 8 bytes (if any) are rip's value, the rest the expression.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "heap/platform/DwarfExpression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uintptr_t window[32];
  for (int i = 0; i < 32; ++i) window[i] = 0x1000u * static_cast<uintptr_t>(i);
  const auto low = reinterpret_cast<uintptr_t>(window);
  heapgraph::FrameRegisters registers;
  registers.known = 0;
  registers.Set(heapgraph::FrameRegisters::kRsp, low + 64);
  registers.Set(heapgraph::FrameRegisters::kRbp, low + 128);
  uintptr_t rip = 0;
  if (size >= sizeof(rip)) {
    memcpy(&rip, data, sizeof(rip));
    data += sizeof(rip);
    size -= sizeof(rip);
  }
  registers.Set(heapgraph::FrameRegisters::kRip, rip);
  uintptr_t result = 0;
  heapgraph::DwarfExpression::Evaluate(data, data + size, registers, 0, false,
                                       {low, low + sizeof(window)}, &result);
  heapgraph::DwarfExpression::Evaluate(data, data + size, registers, low + 96, true,
                                       {low, low + sizeof(window)}, &result);
  return 0;
}
