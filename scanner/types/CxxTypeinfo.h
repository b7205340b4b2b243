// scanner/types/: finds and validates the C++ typeinfo of a polymorphic object from its vtable
// pointer, for the C++ readers. An object at `address` is polymorphic when its first word (the
// vptr) lies in a module's read-only data (.rodata, or .data.rel.ro after RELRO), the vtable's
// offset-to-top slot (vptr[-2]) is 0 (a complete object starts there), and vptr[-1] is a typeinfo
// object in a module, whose own vptr is one of libstdc++'s three __cxxabiv1 class type_info
// vtables and whose name pointer is a readable NUL-terminated string in a module. Typeinfo names
// survive stripping, so this works on stripped binaries. Results are cached per vptr in a table
// allocated by Prepare when libstdc++'s vtables are there (the snapshot child writes it
// copy-on-write, never allocates).
// May include heap/, roots/ and scanner/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "scanner/types/SnapshotMemory.h"

namespace heapgraph::scanner::types {

class CxxTypeinfo {
 public:
  static constexpr size_t kMaxName = 4096;

  struct Found {
    uint64_t typeinfo = 0;
    // The first bytes of the mangled name (NUL-terminated, truncated), for prefix tests.
    char prefix[32] = {};
  };

  // Checking process: looks up the __cxxabiv1 vtables (dlsym). False if libstdc++'s are absent.
  bool Prepare();
  // For tests: the three type_info vtable symbols' addresses given directly.
  void PrepareWith(uint64_t class_vtable, uint64_t si_vtable, uint64_t vmi_vtable);

  // Snapshot child (or a test): validates the object at `address`; no allocation.
  bool Read(const SnapshotMemory& memory, uint64_t address, Found* out) const;

  // Checking process: the typeinfo's mangled name, read with process_vm_readv (a module unloaded
  // since the scan gives "", never a fault).
  static std::string MangledName(uint64_t typeinfo);
  // "11ChatSession" -> "ChatSession"; the input itself if it does not demangle. A leading '*'
  // (internal linkage marker) is dropped.
  static std::string Demangle(const std::string& mangled);

 private:
  struct CacheEntry {
    uint64_t vptr;
    uint64_t typeinfo;  // 0: not a valid vptr
    char prefix[32];
  };
  static constexpr size_t kCacheEntries = 4096;

  bool Validate(const SnapshotMemory& memory, uint64_t vptr, Found* out) const;

  uint64_t type_info_vptrs_[3] = {};  // each vtable symbol + 16 (past offset-to-top and typeinfo)
  // calloc'd: glibc gives a table this size fresh mmap pages, zero without being written, so a
  // check pays a page only for the entries its scan touches (a short program's check, of a few
  // hundred blocks, paid for zeroing all 192 KiB: docs/performance.md, session 20).
  mutable std::unique_ptr<CacheEntry[], decltype(&std::free)> cache_{nullptr, &std::free};
};

}  // namespace heapgraph::scanner::types
