// scanner/types/: see GnuObjcReader.h. May include heap/, roots/ and scanner/.
#include "scanner/types/GnuObjcReader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace heapgraph::scanner::types {
namespace {

// The GNU runtime's API (objc/runtime.h), resolved with dlsym.
struct GnuRuntime {
  using Class = void*;
  using Ivar = void*;
  int (*get_class_list)(Class*, int) = nullptr;
  const char* (*class_name)(Class) = nullptr;
  Class (*superclass)(Class) = nullptr;
  size_t (*instance_size)(Class) = nullptr;
  Ivar* (*copy_ivars)(Class, unsigned*) = nullptr;
  const char* (*ivar_name)(Ivar) = nullptr;
  ptrdiff_t (*ivar_offset)(Ivar) = nullptr;
  const char* (*ivar_encoding)(Ivar) = nullptr;

  template <typename F>
  static bool Resolve(const char* symbol, F* f) {
    *f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, symbol));
    return *f != nullptr;
  }
  bool Load() {
    return Resolve("objc_getClassList", &get_class_list) && Resolve("class_getName", &class_name) &&
           Resolve("class_getSuperclass", &superclass) &&
           Resolve("class_getInstanceSize", &instance_size) &&
           Resolve("class_copyIvarList", &copy_ivars) && Resolve("ivar_getName", &ivar_name) &&
           Resolve("ivar_getOffset", &ivar_offset) &&
           Resolve("ivar_getTypeEncoding", &ivar_encoding);
  }

  // The class's own ivars, appended to `out`.
  void OwnIvars(Class c, std::vector<ObjcIvar>* out) const {
    unsigned count = 0;
    Ivar* ivars = copy_ivars(c, &count);
    const char* declaring = class_name(c);
    for (unsigned i = 0; ivars != nullptr && i < count; ++i) {
      ptrdiff_t offset = ivar_offset(ivars[i]);
      const char* name = ivar_name(ivars[i]);
      const char* encoding = ivar_encoding(ivars[i]);
      if (offset < 0 || name == nullptr) continue;
      out->push_back(
          {uint32_t(offset), name, encoding ? encoding : "", declaring ? declaring : ""});
    }
    std::free(ivars);  // class_copyIvarList's array is malloc'ed by the runtime
  }

  ObjcClass Describe(Class c) const {
    ObjcClass out;
    out.address = reinterpret_cast<uint64_t>(c);
    const char* name = class_name(c);
    out.name = name ? name : "";
    out.instance_size = instance_size(c);
    std::vector<Class> chain;
    for (Class k = c; k != nullptr && chain.size() < 64; k = superclass(k)) chain.push_back(k);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) OwnIvars(*it, &out.ivars);
    return out;
  }
};

void LoadUserRules(ObjcIvarRules* rules) {
  const char* path = std::getenv("HEAPGRAPH_OBJC_IVARS");
  if (path == nullptr || path[0] == '\0') return;
  std::string error;
  if (!rules->LoadFile(path, &error)) std::fprintf(stderr, "heapgraph: %s\n", error.c_str());
}

}  // namespace

bool GnuObjcReader::Prepare(const PrepareContext&) {
  GnuRuntime rt;
  if (!rt.Load()) return false;
  if (!user_rules_loaded_) {
    LoadUserRules(&rules_);
    user_rules_loaded_ = true;
  }
  std::vector<void*> list;
  for (int tries = 0; tries < 4; ++tries) {
    int n = rt.get_class_list(nullptr, 0);
    if (n <= 0) return false;
    list.assign(size_t(n), nullptr);
    // A class registered between the two calls (a dlopen) makes the count grow: retry.
    if (rt.get_class_list(list.data(), n) <= n) break;
  }
  std::vector<ObjcClass> classes;
  classes.reserve(list.size());
  for (void* c : list) {
    if (c != nullptr) classes.push_back(rt.Describe(c));
  }
  catalog_.Assign(std::move(classes));
  return catalog_.size() > 0;
}

bool GnuObjcReader::Matches(const SnapshotMemory& memory, const BlockRange& b,
                            uint64_t header) const {
  uint64_t isa = 0;
  if (b.size < header + 8 || !memory.ReadWord(b.begin + header, &isa)) return false;
  const ObjcClass* c = catalog_.Find(isa);
  return c != nullptr && c->instance_size >= 8 && b.size >= header + c->instance_size;
}

bool GnuObjcReader::Identify(const SnapshotMemory& memory, uint32_t block,
                             TypeIdentity* out) const {
  const BlockRange& b = memory.block(block);
  uint64_t first = 0;
  if (b.size < 8 || !memory.ReadWord(b.begin, &first)) return false;
  uint8_t flags = 0;
  uint64_t header = 0;
  if (!Matches(memory, b, 0)) {
    if (first != 0 || !Matches(memory, b, kGnustepHeaderBytes)) return false;
    flags = kGnustepHeader;
    header = kGnustepHeaderBytes;
  }
  uint64_t isa = 0;
  memory.ReadWord(b.begin + header, &isa);
  out->model = ObjectModel::kObjCGnu;
  out->key = isa;
  out->aux = 0;
  out->flags = flags;
  return true;
}

TypeDescription GnuObjcReader::Describe(const TypeIdentity& identity, const DescribeContext&) {
  TypeDescription out;
  const ObjcClass* c = catalog_.Find(identity.key);
  if (c == nullptr) return out;
  out.name = c->name;
  uint32_t header = (identity.flags & kGnustepHeader) ? kGnustepHeaderBytes : 0;
  for (const ObjcIvar& ivar : c->ivars) {
    if (!ivar.object_typed() || ivar.offset % 8 != 0) continue;
    FieldDescription f = rules_.Classify(ivar.declaring_class, ivar.name);
    f.offset = header + ivar.offset;
    out.fields.push_back(std::move(f));
  }
  std::sort(
      out.fields.begin(), out.fields.end(),
      [](const FieldDescription& a, const FieldDescription& b) { return a.offset < b.offset; });
  return out;
}

}  // namespace heapgraph::scanner::types
