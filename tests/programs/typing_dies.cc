// tests/programs: a leak scan whose snapshot child dies while typing, for
// tests/scanner/LeakScanTest. Linked with libheapgraph.so and the scanner. It leaks 3 blocks, keeps
// one marked block live (a global holds it), and runs scanner::RunLeakScan with one more type
// reader (ScanOptions::add_readers) whose Identify faults on the marked block: in the snapshot
// child, after the leak result is written. Prints one line:
//   ok=<0|1> leaked=<n> typed=<0|1> notice=<the scan's notice>
// and exits 0 (1 with error=<...> when the scan failed).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "ProgramSupport.h"
#include "scanner/LeakScan.h"
#include "scanner/types/ReaderSet.h"

namespace {

using heapgraph::scanner::types::ObjectModelReader;
using heapgraph::scanner::types::PrepareContext;
using heapgraph::scanner::types::SnapshotMemory;
using heapgraph::scanner::types::TypeDescription;
using heapgraph::scanner::types::TypeIdentity;

constexpr uint64_t kMarker = 0x7e57'dead'beef'0042;

uint64_t* volatile g_marked;

// Identifies nothing; faults (a real SIGSEGV in the snapshot child) on the block holding kMarker.
class FaultingReader : public ObjectModelReader {
 public:
  const char* name() const override { return "test-faulting"; }
  bool Prepare(const PrepareContext&) override { return true; }
  bool Identify(const SnapshotMemory& memory, uint32_t block, TypeIdentity*) const override {
    uint64_t first = 0;
    const auto& b = memory.block(block);
    if (b.size >= 8 && memory.Read(b.begin, &first, 8) && first == kMarker) {
      *static_cast<volatile uint64_t*>(nullptr) = first;
    }
    return false;
  }
  TypeDescription Describe(const TypeIdentity&,
                           const heapgraph::scanner::types::DescribeContext&) override {
    return {};
  }
};

}  // namespace

int main() {
  g_marked = static_cast<uint64_t*>(malloc(64));
  memset(g_marked, 0, 64);
  g_marked[0] = kMarker;
  hgprog::LeakBlocks(3, 208);
  heapgraph::scanner::ScanOptions options;
  options.add_readers = [](heapgraph::scanner::types::ReaderSet& set) {
    set.Add(std::make_unique<FaultingReader>());
  };
  heapgraph::scanner::ScanResult result = heapgraph::scanner::RunLeakScan(options);
  if (!result.ok) {
    std::printf("ok=0 error=%s\n", result.error.c_str());
    return 1;
  }
  std::printf("ok=1 leaked=%zu typed=%d notice=%s\n", result.leaked.size(),
              result.typed.enabled ? 1 : 0, result.notice.c_str());
  return 0;
}
