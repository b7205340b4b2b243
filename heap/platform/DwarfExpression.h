// heap/platform/: the DWARF expressions of call-frame information (DWARF 5 section 2.5, as
// .eh_frame uses them in DW_CFA_def_cfa_expression, DW_CFA_expression and
// DW_CFA_val_expression): glibc's signal frame (every register loaded from the ucontext at the
// stack pointer), realigned stacks (the CFA read through the frame pointer), PLT entries (an
// address computed from rip). A stack machine of at most kMaxStack values: literals and constants,
// register values (DW_OP_breg*, bregx), stack operations, arithmetic, logic, comparisons and
// branches, and memory reads (deref, deref_size) of the running process, which must lie in the
// caller's StackWindow. Anything else (DW_OP_reg*
// locations, TLS, entry values, vendor operations), a register not known, a read outside the
// window, stack underflow or overflow, a division by zero or more than kMaxSteps operations fail
// the evaluation. No allocation, no system call, no lock: usable inside malloc hooks.
#pragma once

#include <cstdint>

#include "heap/platform/FrameRegisters.h"
#include "heap/platform/StackWindow.h"

namespace heapgraph::DwarfExpression {

inline constexpr int kMaxStack = 32;
inline constexpr int kMaxSteps = 1024;

// Evaluates the expression [begin, end) with `initial` pushed first (the CFA, for register rules)
// when `push_initial`; *result is the value on top of the stack at the end. False on failure.
bool Evaluate(const uint8_t* begin, const uint8_t* end, const FrameRegisters& registers,
              uintptr_t initial, bool push_initial, StackWindow window, uintptr_t* result);

}  // namespace heapgraph::DwarfExpression
