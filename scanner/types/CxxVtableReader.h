// scanner/types/: C++ polymorphic objects, typed through their vtable pointer (CxxTypeinfo): a
// block whose first word is a validated vptr is an object of the typeinfo's class (its dynamic
// type). Identity: model kCxxPolymorphic, key = the typeinfo's address. Described with the
// demangled class name and, when the class has DWARF, its pointer members (DebugLayouts).
// Objects at an offset inside a block (new[] with a cookie) are not typed. May include heap/,
// roots/ and scanner/.
#pragma once

#include "scanner/types/CxxTypeinfo.h"
#include "scanner/types/DebugLayouts.h"
#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::scanner::types {

class CxxVtableReader : public ObjectModelReader {
 public:
  explicit CxxVtableReader(DebugLayouts* layouts = nullptr) : layouts_(layouts) {}

  const char* name() const override { return "c++-vtable"; }
  bool Prepare(const PrepareContext& context) override;
  bool Identify(const SnapshotMemory& memory, uint32_t block, TypeIdentity* out) const override;
  TypeDescription Describe(const TypeIdentity& identity, const DescribeContext& context) override;

  CxxTypeinfo& typeinfo() { return typeinfo_; }

 private:
  CxxTypeinfo typeinfo_;
  DebugLayouts* layouts_;
};

}  // namespace heapgraph::scanner::types
