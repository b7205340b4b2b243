#include "scanner/types/SharedPtrReader.h"

#include <cstring>

namespace heapgraph::scanner::types {
namespace {

// A leading '*' marks a type with internal linkage (a template argument in an anonymous
// namespace); the name follows it.
bool HasPrefix(const char* s, const char* prefix) {
  if (*s == '*') ++s;
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

}  // namespace

bool SharedPtrReader::Prepare(const PrepareContext&) {
  return typeinfo_.Prepare();
}

bool SharedPtrReader::Identify(const SnapshotMemory& memory, uint32_t block,
                               TypeIdentity* out) const {
  const BlockRange& b = memory.block(block);
  CxxTypeinfo::Found found;
  if (b.size < 24 || !typeinfo_.Read(memory, b.begin, &found)) return false;
  Variant variant;
  uint64_t offset;
  if (HasPrefix(found.prefix, "St23_Sp_counted_ptr_inplaceI")) {
    variant = kInplace;
    offset = kInplaceObjectOffset;
  } else if (HasPrefix(found.prefix, "St15_Sp_counted_ptrIP")) {
    variant = kCountedPtr;
    offset = (b.size - 8) & ~uint64_t{7};
  } else if (HasPrefix(found.prefix, "St19_Sp_counted_deleterIP")) {
    variant = kDeleter;
    offset = (b.size - 8) & ~uint64_t{7};
  } else {
    return false;
  }
  uint32_t counts[2] = {};
  if (!memory.Read(b.begin + 8, counts, sizeof(counts))) return false;
  out->model = ObjectModel::kSharedPtrControl;
  out->key = found.typeinfo;
  out->aux = uint64_t{variant} << 32 | offset;
  out->flags = static_cast<uint8_t>((counts[0] == 0 ? kExpired : 0) |
                                    (counts[1] > (counts[0] > 0 ? 1u : 0u) ? kHasWeak : 0));
  return true;
}

void SharedPtrReader::IdentifyReferenced(const SnapshotMemory& memory, uint32_t block,
                                         const TypeIdentity& own, TypeSink& sink) const {
  if (own.model != ObjectModel::kSharedPtrControl || VariantOf(own) == kInplace) return;
  uint64_t managed = 0;
  if (!memory.ReadWord(memory.block(block).begin + OffsetOf(own), &managed)) return;
  uint32_t target = memory.BlockStartingAt(managed);
  if (target == BlockIndex::kNotFound) return;
  TypeIdentity object;
  object.model = ObjectModel::kSharedPtrObject;
  object.key = own.key;
  sink.Assign(target, object);
}

std::string SharedPtrReader::ManagedType(const std::string& name) {
  size_t open = name.find('<');
  if (open == std::string::npos) return name;
  int depth = 0;
  size_t end = open + 1;
  for (; end < name.size(); ++end) {
    char c = name[end];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if ((c == ',' && depth == 0) || depth < 0) break;
  }
  std::string type = name.substr(open + 1, end - open - 1);
  while (!type.empty() && (type.back() == ' ' || type.back() == '*')) type.pop_back();
  return type;
}

TypeDescription SharedPtrReader::Describe(const TypeIdentity& identity,
                                          const DescribeContext& context) {
  TypeDescription d;
  std::string control = CxxTypeinfo::Demangle(CxxTypeinfo::MangledName(identity.key));
  std::string managed = ManagedType(control);
  if (identity.model == ObjectModel::kSharedPtrObject) {
    d.name = managed;
    if (layouts_ != nullptr) d.fields = layouts_->Fields(managed, 0, context.modules);
    return d;
  }
  if (VariantOf(identity) == kInplace) {
    // The block is the make_shared object: it takes the object's type and fields.
    d.name = managed;
    if (layouts_ != nullptr) {
      d.fields = layouts_->Fields(managed, kInplaceObjectOffset, context.modules);
    }
    return d;
  }
  d.name = "shared_ptr control block<" + managed + ">";
  d.fields.push_back(
      {OffsetOf(identity), FieldStrength::kStrong, EdgeLabel::kSharedManaged, "_M_ptr"});
  d.exhaustive = VariantOf(identity) == kCountedPtr;  // a deleter may hold pointers of its own
  return d;
}

}  // namespace heapgraph::scanner::types
