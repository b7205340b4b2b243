// scanner/types/: the clang Blocks object model (libBlocksRuntime, the same ABI as Apple's): heap
// Blocks and the heap __block variables (Block_byref) they share. May include heap/, roots/ and
// scanner/.
//
// A heap Block: word 0 (isa) is &_NSConcreteMallocBlock of a loaded Blocks runtime (or
// &_NSConcreteStackBlock: Debian's libBlocksRuntime 0.4.1 leaves the stack isa on the heap copy),
// its flags have BLOCK_NEEDS_FREE (set by _Block_copy on the heap copy only), its descriptor lies
// in a module's read-only data with a size between the header and the heap block's size, its invoke
// function (and copy and dispose helpers, with BLOCK_HAS_COPY_DISPOSE) in a module's code.
// Identity: key = descriptor, aux = invoke function, flags bit 0 = has copy/dispose, count = the
// Block's reference count (libBlocksRuntime: flags & 0xffff, one per Block_copy not released).
//
// A heap Block_byref: its forwarding word points to itself (the heap copy forwards to itself),
// its flags have BLOCK_NEEDS_FREE and a non-zero reference count, its size lies between the
// header and the heap block's size, and with BLOCK_HAS_COPY_DISPOSE its keep and destroy helpers
// lie in code. (Its isa is left uninitialized by libBlocksRuntime and is not looked at.)
// Identity: key = destroy helper (0 without helpers), aux = byref size, flags bit 0 = helpers.
//
// Describe: which words own what they point to comes from the dispose (destroy) helper, read by
// DisposeHelperAnalyzer: a captured object, block or byref is a strong field "captured slot N"
// (label kCapture); weak and __block-under-MRR slots are weak fields; a captured C++ object (its
// destructor called in place, or a word of it released inline) spans the words up to the next
// captured slot, named but conservative: whether a shared_ptr/weak_ptr/std::function copy owns
// its target is its own type's business (graph/StrongReferences rules 3-4), not the Block's. A
// Block without copy/dispose helpers captured only trivial values (plain pointers, integers) and
// owns nothing. When the helper could not be read completely, unlisted words stay conservative
// (exhaustive = false).
#pragma once

#include <memory>
#include <vector>

#include "scanner/types/DisposeHelperAnalyzer.h"
#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::scanner::types {

class BlockReader : public ObjectModelReader {
 public:
  static constexpr uint8_t kHasHelpers = 1;

  const char* name() const override { return "clang-blocks"; }
  bool Prepare(const PrepareContext& context) override;
  bool Identify(const SnapshotMemory& memory, uint32_t block, TypeIdentity* out) const override;
  TypeDescription Describe(const TypeIdentity& identity, const DescribeContext& context) override;

 private:
  bool IdentifyBlock(const SnapshotMemory& memory, const BlockRange& b, TypeIdentity* out) const;
  bool IdentifyByref(const SnapshotMemory& memory, const BlockRange& b, TypeIdentity* out) const;
  TypeDescription DescribeBlock(const TypeIdentity& identity, const DescribeContext& context);
  TypeDescription DescribeByref(const TypeIdentity& identity);
  // Fields from the helper at `helper` for an object of `size` bytes; `base` names them.
  void AddHelperFields(uint64_t helper, uint64_t size, const char* base, TypeDescription* out);

  std::vector<uint64_t> malloc_isas_;  // &_NSConcrete{Malloc,Stack}Block of each Blocks runtime
  std::vector<uint64_t> dispose_;      // every definition of _Block_object_dispose
  std::vector<uint64_t> dispose_slots_;
  std::vector<CodeRange> code_;
  std::unique_ptr<DisposeHelperAnalyzer> analyzer_;
};

}  // namespace heapgraph::scanner::types
