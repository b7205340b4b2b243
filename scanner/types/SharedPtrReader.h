// scanner/types/: std::shared_ptr control blocks (libstdc++) and what they manage. A control
// block is a polymorphic object (CxxTypeinfo) whose typeinfo name is one of
//  - std::_Sp_counted_ptr_inplace<T, A, L>  (make_shared/allocate_shared): the T object lives in
//    the block at kInplaceObjectOffset, so the block is typed as T;
//  - std::_Sp_counted_ptr<T*, L>             (shared_ptr<T>(new T)): _M_ptr, the block's last word,
//    owns a separate T, which gets model kSharedPtrObject (unless its vtable already typed it);
//  - std::_Sp_counted_deleter<T*, D, A, L>   (custom deleter): likewise, _M_ptr being the last
//  word.
// Identity: model kSharedPtrControl, key = the control block's typeinfo, aux = variant << 32 |
// offset of the managed object (inplace) or of _M_ptr; flags: kExpired (use count 0), kHasWeak
// (a weak_ptr exists: weak count > (use count > 0)). The counts are the instance's at the
// snapshot; graph/StrongReferences uses them to tell shared_ptr from weak_ptr without DWARF.
// May include heap/, roots/ and scanner/.
#pragma once

#include <string>

#include "scanner/types/CxxTypeinfo.h"
#include "scanner/types/DebugLayouts.h"
#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::scanner::types {

class SharedPtrReader : public ObjectModelReader {
 public:
  enum Variant : uint32_t { kInplace = 1, kCountedPtr = 2, kDeleter = 3 };
  static constexpr uint8_t kExpired = 1;
  static constexpr uint8_t kHasWeak = 2;
  static constexpr uint32_t kInplaceObjectOffset = 16;  // after vptr, use and weak counts

  explicit SharedPtrReader(DebugLayouts* layouts = nullptr) : layouts_(layouts) {}

  const char* name() const override { return "shared_ptr"; }
  bool Prepare(const PrepareContext& context) override;
  bool Identify(const SnapshotMemory& memory, uint32_t block, TypeIdentity* out) const override;
  bool wants_referenced() const override { return true; }
  void IdentifyReferenced(const SnapshotMemory& memory, uint32_t block, const TypeIdentity& own,
                          TypeSink& sink) const override;
  TypeDescription Describe(const TypeIdentity& identity, const DescribeContext& context) override;

  static Variant VariantOf(const TypeIdentity& identity) {
    return static_cast<Variant>(identity.aux >> 32);
  }
  static uint32_t OffsetOf(const TypeIdentity& identity) {
    return static_cast<uint32_t>(identity.aux);
  }
  // "std::_Sp_counted_ptr_inplace<Foo, std::allocator<Foo>, ...>" -> "Foo"; "Foo*" -> "Foo".
  static std::string ManagedType(const std::string& control_block_name);

  CxxTypeinfo& typeinfo() { return typeinfo_; }

 private:
  CxxTypeinfo typeinfo_;
  DebugLayouts* layouts_;
};

}  // namespace heapgraph::scanner::types
