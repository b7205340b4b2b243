#include "scanner/types/CxxVtableReader.h"

namespace heapgraph::scanner::types {

bool CxxVtableReader::Prepare(const PrepareContext&) {
  return typeinfo_.Prepare();
}

bool CxxVtableReader::Identify(const SnapshotMemory& memory, uint32_t block,
                               TypeIdentity* out) const {
  const BlockRange& b = memory.block(block);
  CxxTypeinfo::Found found;
  if (b.size < 8 || !typeinfo_.Read(memory, b.begin, &found)) return false;
  out->model = ObjectModel::kCxxPolymorphic;
  out->key = found.typeinfo;
  return true;
}

TypeDescription CxxVtableReader::Describe(const TypeIdentity& identity,
                                          const DescribeContext& context) {
  TypeDescription d;
  d.name = CxxTypeinfo::Demangle(CxxTypeinfo::MangledName(identity.key));
  if (d.name.empty()) d.name = "(unreadable typeinfo)";
  if (layouts_ != nullptr) d.fields = layouts_->Fields(d.name, 0, context.modules);
  return d;
}

}  // namespace heapgraph::scanner::types
