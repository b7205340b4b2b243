// scanner/types/: see BlockReader.h. May include heap/, roots/ and scanner/.
#include "scanner/types/BlockReader.h"

#include <algorithm>
#include <string>

#include "scanner/types/BlocksAbi.h"
#include "scanner/types/DynamicSymbols.h"

namespace heapgraph::scanner::types {

bool BlockReader::Prepare(const PrepareContext& context) {
  // Debian's libBlocksRuntime (0.4.1) copies a stack Block to the heap without changing its isa
  // (_Block_copy only sets BLOCK_NEEDS_FREE and the reference count), so a heap Block's isa is
  // &_NSConcreteMallocBlock (Apple, compiler-rt) or &_NSConcreteStackBlock with BLOCK_NEEDS_FREE.
  malloc_isas_ = DynamicSymbols::FindDefinitions("_NSConcreteMallocBlock");
  if (malloc_isas_.empty()) return false;
  std::vector<uint64_t> stack = DynamicSymbols::FindDefinitions("_NSConcreteStackBlock");
  malloc_isas_.insert(malloc_isas_.end(), stack.begin(), stack.end());
  std::sort(malloc_isas_.begin(), malloc_isas_.end());
  dispose_ = DynamicSymbols::FindDefinitions("_Block_object_dispose");
  dispose_slots_ = DynamicSymbols::FindImportSlots("_Block_object_dispose");
  code_.clear();
  for (const Segment& s : context.modules.segments()) {
    if (s.kind == SegmentKind::kCode) code_.push_back({s.begin, s.end});
  }
  analyzer_ = std::make_unique<DisposeHelperAnalyzer>(DisposeHelperAnalyzer::Arch::kX86_64,
                                                      dispose_, dispose_slots_, code_);
  return true;
}

bool BlockReader::Identify(const SnapshotMemory& memory, uint32_t block, TypeIdentity* out) const {
  const BlockRange& b = memory.block(block);
  return IdentifyBlock(memory, b, out) || IdentifyByref(memory, b, out);
}

bool BlockReader::IdentifyBlock(const SnapshotMemory& memory, const BlockRange& b,
                                TypeIdentity* out) const {
  blocks::Layout layout;
  if (b.size < sizeof(layout) || !memory.Read(b.begin, &layout, sizeof(layout))) return false;
  if (!std::binary_search(malloc_isas_.begin(), malloc_isas_.end(), layout.isa)) return false;
  if (!(layout.flags & blocks::kNeedsFree) || (layout.flags & blocks::kIsGlobal)) return false;
  bool helpers = layout.flags & blocks::kHasCopyDispose;
  size_t descriptor_bytes = helpers ? sizeof(blocks::Descriptor) : 2 * sizeof(uint64_t);
  if (!memory.InReadOnlyData(layout.descriptor, descriptor_bytes)) return false;
  blocks::Descriptor d{};
  if (!memory.Read(layout.descriptor, &d, descriptor_bytes)) return false;
  if (d.size < sizeof(layout) || d.size > b.size || !memory.InCode(layout.invoke)) return false;
  if (helpers && !(memory.InCode(d.copy) && memory.InCode(d.dispose))) return false;
  out->model = ObjectModel::kClangBlock;
  out->key = layout.descriptor;
  out->aux = layout.invoke;
  out->flags = helpers ? kHasHelpers : 0;
  out->count = layout.flags & blocks::kRefcountMask;
  return true;
}

bool BlockReader::IdentifyByref(const SnapshotMemory& memory, const BlockRange& b,
                                TypeIdentity* out) const {
  blocks::Byref byref{};
  if (b.size < blocks::kByrefVariableWithoutHelpers ||
      !memory.Read(b.begin, &byref, blocks::kByrefVariableWithoutHelpers)) {
    return false;
  }
  if (byref.forwarding != b.begin || !(byref.flags & blocks::kNeedsFree) ||
      (byref.flags & blocks::kRefcountMask) == 0) {
    return false;
  }
  bool helpers = byref.flags & blocks::kByrefHasCopyDispose;
  uint32_t header =
      helpers ? blocks::kByrefVariableWithHelpers : blocks::kByrefVariableWithoutHelpers;
  if (byref.size < header || byref.size > b.size) return false;
  if (helpers) {
    if (!memory.Read(b.begin, &byref, sizeof(byref))) return false;
    if (!memory.InCode(byref.keep) || !memory.InCode(byref.destroy)) return false;
  }
  out->model = ObjectModel::kBlockByref;
  out->key = helpers ? byref.destroy : 0;
  out->aux = byref.size;
  out->flags = helpers ? kHasHelpers : 0;
  return true;
}

TypeDescription BlockReader::Describe(const TypeIdentity& identity,
                                      const DescribeContext& context) {
  if (identity.model == ObjectModel::kClangBlock) return DescribeBlock(identity, context);
  return DescribeByref(identity);
}

TypeDescription BlockReader::DescribeBlock(const TypeIdentity& identity,
                                           const DescribeContext& context) {
  TypeDescription out;
  out.name = "Block ({})";
  out.name_symbol = identity.aux;
  out.closure = ClosureKind::kBlock;
  out.exhaustive = true;
  if (!(identity.flags & kHasHelpers)) return out;  // only trivial captures
  // The descriptor is constant data of a module that was loaded at Prepare; read it only if that
  // module's segment is still listed.
  const Segment* s = context.modules.Find(identity.key, sizeof(blocks::Descriptor));
  if (s == nullptr) {
    out.exhaustive = false;
    return out;
  }
  const auto* d = reinterpret_cast<const blocks::Descriptor*>(identity.key);
  AddHelperFields(d->dispose, d->size, "captured slot", &out);
  return out;
}

TypeDescription BlockReader::DescribeByref(const TypeIdentity& identity) {
  TypeDescription out;
  out.name = "__block variable";
  out.exhaustive = true;
  if (identity.flags & kHasHelpers)
    AddHelperFields(identity.key, identity.aux, "__block slot", &out);
  return out;
}

void BlockReader::AddHelperFields(uint64_t helper, uint64_t size, const char* base,
                                  TypeDescription* out) {
  DisposeAnalysis a = analyzer_ ? analyzer_->Analyze(helper) : DisposeAnalysis{};
  if (!analyzer_) a.complete = false;
  out->exhaustive = a.complete;
  std::span<const CapturedSlot> slots = a.captured();
  for (size_t i = 0; i < slots.size(); ++i) {
    const CapturedSlot& slot = slots[i];
    std::string name = std::string(base) + " " + std::to_string(i);
    // A captured C++ object (a shared_ptr, weak_ptr, std::function copy) owns what its own type
    // says: its words are named but left conservative for graph/StrongReferences to judge.
    bool cxx =
        slot.kind == CapturedSlotKind::kDestroyed || slot.kind == CapturedSlotKind::kReleased;
    FieldStrength strength = cxx                   ? FieldStrength::kConservative
                             : IsStrong(slot.kind) ? FieldStrength::kStrong
                                                   : FieldStrength::kWeak;
    // A C++ object destroyed in place owns its words up to the next captured slot.
    uint64_t end = slot.offset + 8;
    if (slot.kind == CapturedSlotKind::kDestroyed) {
      end = i + 1 < slots.size() ? slots[i + 1].offset : size;
    }
    for (uint64_t at = slot.offset & ~uint64_t{7}; at + 8 <= end; at += 8) {
      std::string field = at == slot.offset ? name : name + " +" + std::to_string(at - slot.offset);
      out->fields.push_back({uint32_t(at), strength, EdgeLabel::kCapture, std::move(field)});
    }
  }
}

}  // namespace heapgraph::scanner::types
