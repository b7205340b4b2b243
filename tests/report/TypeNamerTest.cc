// tests/report: TypeNamer, the one namer of types for the leak report (TypedAnalysis) and the
// watcher's types file (TypeRefresh): a "{}" name whose symbol is a Block's invoke function in
// this test binary comes out readable, as both paths print it.
#include <gtest/gtest.h>

#include <cstdint>

#include "report/TypeNamer.h"

// Named as clang names the invoke function of a Block in ChatSession::start().
extern "C" __attribute__((noinline, used)) int ___ZN11ChatSession5startEv_block_invoke(int v) {
  return v + 1;
}

namespace heapgraph::report {
namespace {

namespace types = scanner::types;

TEST(TypeNamer, BlockInvokeFunctionIsReadable) {
  types::ModuleSegments modules;
  modules.Collect();
  types::TypeDescription d;
  d.name = "{}";
  d.name_symbol = reinterpret_cast<uintptr_t>(&___ZN11ChatSession5startEv_block_invoke);
  Symbolizer symbolizer;
  EXPECT_EQ(TypeNamer::Name(d, modules, symbolizer), "block in ChatSession::start()");
}

TEST(TypeNamer, UnknownAddressStaysHexadecimal) {
  types::ModuleSegments modules;
  types::TypeDescription d;
  d.name = "Block {}";
  d.name_symbol = 0x1234;
  Symbolizer symbolizer;
  EXPECT_EQ(TypeNamer::Name(d, modules, symbolizer), "Block 0x1234");
}

TEST(TypeNamer, PlainNames) {
  types::ModuleSegments modules;
  Symbolizer symbolizer;
  types::TypeDescription d;
  EXPECT_EQ(TypeNamer::Name(d, modules, symbolizer), "(unnamed type)");
  d.name = "std::string";
  EXPECT_EQ(TypeNamer::Name(d, modules, symbolizer), "std::string");
}

}  // namespace
}  // namespace heapgraph::report
