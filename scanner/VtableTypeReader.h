// scanner/: names the C++ class of a live heap block from its first word, taken as a primary
// vptr: valid when it points into a module's read-only data (a non-writable PT_LOAD segment or
// PT_GNU_RELRO) with offset-to-top 0 before it, and vptr[-1] is a std::type_info whose own vptr
// is one of the three __cxxabiv1 type_info vtables; the name is that typeinfo's (demangled)
// name. Every read of program memory goes through process_vm_readv, so a stale or hostile word
// never faults. Results are cached per vptr. The typed-graph readers (issue 4) may replace it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace heapgraph::scanner {

class VtableTypeReader {
 public:
  // Reads the loaded modules' read-only ranges and the type_info vtables of this process.
  VtableTypeReader();

  // The class name when `vptr` is a C++ vtable's address point, else null. Valid as long as
  // this reader lives.
  const std::string* TypeOf(uint64_t vptr);

  // Reads `count` 8-byte words at `address` of this process; false if any is unreadable.
  static bool ReadWords(uint64_t address, uint64_t* out, size_t count);

 private:
  bool InReadOnlyData(uint64_t address, uint64_t length) const;
  const std::string* Classify(uint64_t vptr);
  bool ReadName(uint64_t address, std::string* name) const;

  std::vector<std::pair<uint64_t, uint64_t>> ranges_;  // [begin, end), sorted
  uint64_t type_info_vptrs_[3] = {};
  std::unordered_map<uint64_t, const std::string*> cache_;  // vptr -> name or null
  std::unordered_map<std::string, std::string> names_;      // owns the names
};

}  // namespace heapgraph::scanner
