// scanner/types/: the interface of a type reader, one per object model (C++ vtables, shared_ptr
// control blocks, std::function functors, clang Blocks, Objective-C runtimes). A reader gives a
// heap block a type only when it can read it safely and validate it; every other block keeps the
// size category of the recording ("Malloc 48.00KiB"). May include heap/, roots/ and scanner/.
//
// Contract, in the order a leak scan calls it:
//  1. Prepare(context)     in the checking process, before the world stops. May allocate, dlsym,
//                          read ELF files. Collects the constant addresses Identify compares with
//                          (vtables, isa values, class lists, function addresses). Returns false
//                          when the object model is absent (no ObjC runtime loaded): the reader is
//                          then skipped for this scan. Must not keep pointers into heap memory.
//  2. Identify(memory, b)  in the snapshot child, for every live block not yet typed, readers in
//                          registration order, the first that returns true wins. MUST NOT call
//                          malloc, take locks, call interposed functions or dereference a pointer
//                          directly: every load goes through `memory`, which validates it (inside
//                          a live block, or inside a module segment that the snapshot maps). The
//                          identity is a compact value of constants (typeinfo, class, descriptor
//                          addresses) and per-instance flags; it outlives the snapshot.
//  3. IdentifyReferenced   (optional) in the child, after pass 2, for every live block: a reader
//                          whose types are known only from a holder (a std::function's heap functor
//                          from the holder's manager word) assigns a type to the referenced block
//                          through the sink. Only untyped blocks are assigned; first wins.
//  4. Describe(identity)   in the checking process, after the scan, once per distinct identity.
//                          Names the type and says which words own what they point to (fields).
//                          May allocate, read ELF/DWARF, disassemble (Capstone). Names that need a
//                          symbol table (a Block's invoke function, a std::function manager) are
//                          left to report/: `name` holds "{}" and `name_symbol` the address.
//
// Registration: readers are listed explicitly, in identification order, in
// scanner/types/BuiltInReaders.cc (RegisterBuiltInReaders). To add one, add its files
// (scanner/types/<Model>Reader.{h,cc}, one object model per reader), add the .cc to
// scanner/CMakeLists.txt and one `set.Add(std::make_unique<XReader>())` line there. No static
// self-registration: a static library's unreferenced objects would be dropped by the linker.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scanner/types/ModuleSegments.h"
#include "scanner/types/SnapshotMemory.h"

namespace heapgraph::scanner::types {

// Values are written to the scan's result; new models are appended, never renumbered.
enum class ObjectModel : uint8_t {
  kUntyped = 0,
  kCxxPolymorphic = 1,    // key: typeinfo address (std::type_info object)
  kSharedPtrControl = 2,  // key: the control block's typeinfo; aux: see SharedPtrReader.h
  kSharedPtrObject = 3,   // an object a _Sp_counted_ptr/_Sp_counted_deleter owns; key as kind 2
  kStdFunctor = 4,        // a std::function's heap functor; key: its _M_manager address
  kClangBlock = 5,        // a heap Block (_NSConcreteMallocBlock); key: descriptor; aux: invoke
  kObjCGnu = 6,           // GCC's / GNUstep's runtime (libobjc); key: class pointer
  kObjCApple = 7,         // reserved for an Apple runtime reader
  kBlockByref = 8,        // a heap __block variable (Block_byref); key: byref keep/dispose helper
};

// What the child records for one typed block. Plain data, 24 bytes.
struct TypeIdentity {
  uint64_t key = 0;  // model-specific constant address (see ObjectModel)
  uint64_t aux = 0;  // model-specific: a second constant, or per-instance bits
  ObjectModel model = ObjectModel::kUntyped;
  uint8_t flags = 0;    // model-specific per-instance bits
  uint16_t reader = 0;  // set by ReaderSet: index of the reader that identified the block
  // Model-specific per-instance count, not part of the type (descriptions ignore it): a heap
  // Block's reference count (graph/StrongReferences rule 3).
  uint32_t count = 0;

  bool typed() const { return model != ObjectModel::kUntyped; }
  bool operator==(const TypeIdentity&) const = default;
};
static_assert(sizeof(TypeIdentity) == 24);

// How a pointer word of a typed object relates to what it points to.
enum class FieldStrength : uint8_t {
  kConservative = 0,  // unknown: kept as an edge of the conservative graph, never of a typed cycle
  kStrong = 1,        // owns (retains) the target: an edge of the strong-reference graph
  kWeak = 2,          // does not own (weak_ptr, __weak, unsafe_unretained, assign)
};

// What an owning edge means, for the cycle's kind (graph/RetainCycles). Set by the reader of the
// holder; new labels are appended.
enum class EdgeLabel : uint8_t {
  kNone = 0,
  kCapture = 1,        // a Block's / functor's captured variable
  kDelegate = 2,       // an ObjC ivar/property used as a delegate (name contains "delegate")
  kTimerTarget = 3,    // a timer's target (NSTimer/GSTimer _target, or a timer's invocation)
  kSharedOwner = 4,    // a std::shared_ptr's control-block word (the owning word of a shared_ptr)
  kSharedManaged = 5,  // a control block's word that owns the managed object (_Sp_counted_ptr)
};

// What kind of closure a type is: a cycle through one is kind block-self (a clang Block) or
// function-self (a std::function's heap functor, a lambda's captures) (graph/CycleKind).
enum class ClosureKind : uint8_t {
  kNone = 0,
  kBlock = 1,
  kFunction = 2,
};

struct FieldDescription {
  uint32_t offset = 0;  // byte offset of the pointer word in the object (8-aligned)
  FieldStrength strength = FieldStrength::kConservative;
  EdgeLabel label = EdgeLabel::kNone;
  std::string name;  // "_onMessage", "captured slot 0"; empty: the report prints "+<offset>"
};

struct TypeDescription {
  // The type's name: a demangled C++ class, "ChatSession" (ObjC). If name_symbol != 0, report/
  // replaces "{}" in it with the symbolized function at name_symbol (e.g. "Block ({})").
  std::string name;
  uint64_t name_symbol = 0;
  // A closure (Block, std::function functor), or kNone.
  ClosureKind closure = ClosureKind::kNone;
  // True: words not listed in `fields` own nothing (the reader knows the whole layout, e.g. a
  // Block from its dispose helper). False: they stay conservative.
  bool exhaustive = false;
  std::vector<FieldDescription> fields;  // sorted by offset
};

// What Prepare may use.
struct PrepareContext {
  const ModuleSegments& modules;  // every loaded module's PT_LOAD segments, read before the stop
};

// What Describe may use (members are appended as readers need them).
struct DescribeContext {
  const ModuleSegments& modules;
};

// Identify's and IdentifyReferenced's output: assigns a type to another block.
class TypeSink {
 public:
  virtual ~TypeSink() = default;
  // Gives `block` the identity unless it already has one. Child-safe (no allocation).
  virtual void Assign(uint32_t block, const TypeIdentity& identity) = 0;
};

class ObjectModelReader {
 public:
  virtual ~ObjectModelReader() = default;
  ObjectModelReader() = default;
  ObjectModelReader(const ObjectModelReader&) = delete;
  ObjectModelReader& operator=(const ObjectModelReader&) = delete;

  virtual const char* name() const = 0;  // short, for diagnostics: "c++-vtable", "gnu-objc"
  // 1. Checking process, before the stop. False: the model is absent; the reader is skipped.
  virtual bool Prepare(const PrepareContext& context) = 0;
  // 2. Snapshot child. True and *out set when `block` is an object of this model.
  virtual bool Identify(const SnapshotMemory& memory, uint32_t block, TypeIdentity* out) const = 0;
  // 3. Snapshot child, optional: the reader sees every live block (typed or not, `own` its type)
  // and may type blocks it references through `sink`. Only called if wants_referenced().
  virtual bool wants_referenced() const { return false; }
  virtual void IdentifyReferenced(const SnapshotMemory& memory, uint32_t block,
                                  const TypeIdentity& own, TypeSink& sink) const {}
  // 4. Checking process, after the scan: an identity this reader produced.
  virtual TypeDescription Describe(const TypeIdentity& identity,
                                   const DescribeContext& context) = 0;
};

}  // namespace heapgraph::scanner::types
