// libFuzzer target for the SymbolCache's reader: any bytes as one build-id's file of a shared
// symbol cache (report/SymbolCache::Parse), and as the payload of one record whose header is
// right. Every record it returns must hold frames that keep SourceFrame's invariant (a file
// exactly when a line), and encode back to a record that parses to the same frames. Nothing may
// crash, hang or allocate without bound.
//
// Built by tests/report/CMakeLists.txt with clang++ -fsanitize=fuzzer,address,undefined into
// <build>/tests/report/symbol_cache_fuzzer; ctest runs a short smoke test. A longer run:
//   <build>/tests/report/symbol_cache_fuzzer -max_total_time=300
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "report/Fnv1a64.h"
#include "report/SymbolCache.h"

namespace report = heapgraph::report;

namespace {

// `payload` behind a right header (the record layout of report/SymbolCache.cc: "HGSY", the
// payload's length, its Fnv1a64): random bytes almost never pass the check, so this is how the
// payload's own parser gets fuzzed.
std::string AsCheckedRecord(std::string_view payload) {
  const uint32_t magic = 0x59534748;
  const auto length = static_cast<uint32_t>(payload.size());
  report::Fnv1a64 hash;
  hash.Add(payload);
  const uint64_t check = hash.value();
  std::string record;
  record.append(reinterpret_cast<const char*>(&magic), sizeof(magic));
  record.append(reinterpret_cast<const char*>(&length), sizeof(length));
  record.append(reinterpret_cast<const char*>(&check), sizeof(check));
  return record.append(payload);
}

void CheckRecords(const report::SymbolCache::Records& records) {
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
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckRecords(report::SymbolCache::Parse(bytes));                   // as a whole file
  CheckRecords(report::SymbolCache::Parse(AsCheckedRecord(bytes)));  // as one checked payload
  return 0;
}
