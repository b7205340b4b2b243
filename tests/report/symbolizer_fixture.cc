// Shared library symbolized by SymbolizerTest (built -g -O2; CMakeLists.txt derives stripped,
// split-debug and aranges-free copies). The line of each interesting statement is exported
// through an extern "C" global initialized from __LINE__ right above it, so the test never
// hard-codes line numbers.

extern "C" {
// Return address of the latest call to RecordCaller(): an address just past a call instruction.
void* fixture_recorded_return = nullptr;

// Lines of the first statements. At -O2 these functions have no prologue, so the entry
// instruction belongs to the first statement (the zero-length row for the opening line that
// precedes it at the same address does not cover any instruction).
extern int fixture_c_function_line;
extern int fixture_namespaced_line;
// The call chain fixture_outer() -> InlinedHelper() -> InnerHelper() -> RecordCaller(), both
// helpers always inlined: the line of each call.
extern int fixture_inner_call_line;
extern int fixture_inlined_call_line;
extern int fixture_outer_call_line;
}

__attribute__((noinline)) void RecordCaller() {
  fixture_recorded_return = __builtin_extract_return_addr(__builtin_return_address(0));
  asm volatile("" ::: "memory");  // Keeps the call, and so its return address, in the caller.
}

int fixture_inner_call_line = __LINE__ + 4;
namespace heapgraph_fixture {

__attribute__((always_inline)) inline void InnerHelper() {
  RecordCaller();
}

}  // namespace heapgraph_fixture

int fixture_inlined_call_line = __LINE__ + 4;
namespace heapgraph_fixture {

__attribute__((always_inline)) inline int InlinedHelper(int x) {
  InnerHelper();
  return x * 3;
}

}  // namespace heapgraph_fixture

int fixture_namespaced_line = __LINE__ + 4;
namespace heapgraph_fixture {

__attribute__((noinline)) int Namespaced(int x) {
  return x * 7 + fixture_namespaced_line;
}

}  // namespace heapgraph_fixture

int fixture_c_function_line = __LINE__ + 2;
extern "C" __attribute__((noinline)) int fixture_c_function(int x) {
  return x * 5 + fixture_c_function_line;
}

int fixture_outer_call_line = __LINE__ + 2;
extern "C" __attribute__((noinline)) int fixture_outer(int x) {
  int y = heapgraph_fixture::InlinedHelper(x);
  return y + 1;
}

namespace heapgraph_fixture {
namespace {

// Internal linkage: GCC emits no DW_AT_linkage_name for it, only DW_AT_name "Hidden".
__attribute__((noinline)) int Hidden(int x) {
  return x * 11 + fixture_c_function_line;
}

}  // namespace
}  // namespace heapgraph_fixture

// Addresses of the C++ functions, without the test having to dlsym() mangled (or local) names.
extern "C" void* fixture_namespaced_address() {
  return reinterpret_cast<void*>(&heapgraph_fixture::Namespaced);
}
extern "C" void* fixture_hidden_address() {
  return reinterpret_cast<void*>(&heapgraph_fixture::Hidden);
}
