// libFuzzer target for the SymbolCache's reader: any bytes as one build-id's file of a shared
// symbol cache (report/SymbolCache::Parse). Every record it returns must hold frames that keep
// SourceFrame's invariant (a file exactly when a line), and encode back to a record that parses
// to the same frames. Nothing may crash, hang or allocate without bound.
//
// Built by tests/report/CMakeLists.txt with clang++ -fsanitize=fuzzer,address,undefined into
// <build>/tests/report/symbol_cache_fuzzer; ctest runs a short smoke test. A longer run:
//   <build>/tests/report/symbol_cache_fuzzer -max_total_time=300
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "report/SymbolCache.h"

namespace report = heapgraph::report;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  report::SymbolCache::Records records =
      report::SymbolCache::Parse(std::string_view(reinterpret_cast<const char*>(data), size));
  for (const auto& [vaddr, frames] : records) {
    for (const report::SourceFrame& frame : frames) {
      if (frame.file.empty() != (frame.line == 0) || frame.line < 0) std::abort();
    }
    report::SymbolCache::Records again =
        report::SymbolCache::Parse(report::SymbolCache::Encode(vaddr, frames));
    if (again.size() != 1 || again.begin()->first != vaddr || again.begin()->second != frames) {
      std::abort();
    }
  }
  return 0;
}
