// scanner/types/: Objective-C objects of the GNU runtime (GCC's libobjc, which GNUstep Base uses
// on Debian). May include heap/, roots/ and scanner/.
//
// Prepare calls the runtime through dlsym (heapgraph does not link libobjc): objc_getClassList,
// class_getName, class_getSuperclass, class_getInstanceSize, class_copyIvarList and ivar_getName /
// ivar_getOffset / ivar_getTypeEncoding, into an ObjcClassCatalog; no runtime loaded = the reader
// is skipped. It also loads the user's ivar rules (HEAPGRAPH_OBJC_IVARS, see ObjcIvarRules.h).
//
// Identify (child, validated reads only): the GNU runtime stores isa as a plain class pointer in
// the object's first word. An object made by class_createInstance starts its heap block (isa at
// +0); one made by GNUstep's NSAllocateObject has a 16-byte header first (zero word, retain count
// word), so isa is at +16 and its first word is zero. Either way isa must be a registered class
// and the block must hold the class's instance size after the header. Identity: key = class,
// flags = kGnustepHeader if the header is there.
//
// Describe: the class name; one field per object-typed ivar, own and inherited, at header +
// ivar_getOffset, strong or weak per ObjcIvarRules, named after the ivar. Other words (C
// pointers, structs) stay conservative (exhaustive = false). GCC's runtime has no ivar layouts
// (class_getIvarLayout returns NULL, class_setIvarLayout does nothing), so none are consulted.
#pragma once

#include "scanner/types/ObjcClassCatalog.h"
#include "scanner/types/ObjcIvarRules.h"
#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::scanner::types {

class GnuObjcReader : public ObjectModelReader {
 public:
  static constexpr uint8_t kGnustepHeader = 1;
  static constexpr uint32_t kGnustepHeaderBytes = 16;

  GnuObjcReader() = default;
  explicit GnuObjcReader(ObjcIvarRules rules)
      : rules_(std::move(rules)), user_rules_loaded_(true) {}

  const char* name() const override { return "gnu-objc"; }
  bool Prepare(const PrepareContext& context) override;
  bool Identify(const SnapshotMemory& memory, uint32_t block, TypeIdentity* out) const override;
  TypeDescription Describe(const TypeIdentity& identity, const DescribeContext& context) override;

  const ObjcClassCatalog& catalog() const { return catalog_; }
  const ObjcIvarRules& rules() const { return rules_; }

 private:
  bool Matches(const SnapshotMemory& memory, const BlockRange& b, uint64_t header) const;

  ObjcClassCatalog catalog_;
  ObjcIvarRules rules_;
  bool user_rules_loaded_ = false;  // HEAPGRAPH_OBJC_IVARS read (once per reader)
};

}  // namespace heapgraph::scanner::types
