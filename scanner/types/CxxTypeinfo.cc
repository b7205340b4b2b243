#include "scanner/types/CxxTypeinfo.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "roots/RawSyscall.h"

namespace heapgraph::scanner::types {

bool CxxTypeinfo::Prepare() {
  auto find = [](const char* name) {
    return reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, name));
  };
  PrepareWith(find("_ZTVN10__cxxabiv117__class_type_infoE"),
              find("_ZTVN10__cxxabiv120__si_class_type_infoE"),
              find("_ZTVN10__cxxabiv121__vmi_class_type_infoE"));
  return type_info_vptrs_[0] != 0;
}

void CxxTypeinfo::PrepareWith(uint64_t class_vtable, uint64_t si_vtable, uint64_t vmi_vtable) {
  uint64_t tables[3] = {class_vtable, si_vtable, vmi_vtable};
  for (int i = 0; i < 3; ++i) type_info_vptrs_[i] = tables[i] != 0 ? tables[i] + 16 : 0;
  // Without libstdc++'s vtables nothing validates (Read returns at once): no table.
  cache_.reset(type_info_vptrs_[0] != 0
                   ? static_cast<CacheEntry*>(std::calloc(kCacheEntries, sizeof(CacheEntry)))
                   : nullptr);
}

bool CxxTypeinfo::Read(const SnapshotMemory& memory, uint64_t address, Found* out) const {
  uint64_t vptr = 0;
  if (type_info_vptrs_[0] == 0 || !memory.ReadWord(address, &vptr) || vptr % 8 != 0) return false;
  // Cheap rejection first: almost every heap block's first word is no vtable address.
  if (!memory.InReadOnlyData(vptr - 16, 16)) return false;
  if (cache_ == nullptr) return Validate(memory, vptr, out);
  CacheEntry& e = cache_[(vptr >> 3) * 0x9e3779b97f4a7c15ull >> 52];  // 12 bits
  if (e.vptr != vptr) {
    Found found;
    e.vptr = vptr;
    e.typeinfo = Validate(memory, vptr, &found) ? found.typeinfo : 0;
    std::memcpy(e.prefix, found.prefix, sizeof(e.prefix));
  }
  if (e.typeinfo == 0) return false;
  out->typeinfo = e.typeinfo;
  std::memcpy(out->prefix, e.prefix, sizeof(out->prefix));
  return true;
}

bool CxxTypeinfo::Validate(const SnapshotMemory& memory, uint64_t vptr, Found* out) const {
  uint64_t offset_to_top = 0, typeinfo = 0, ti_vptr = 0, name = 0;
  if (!memory.ReadWord(vptr - 16, &offset_to_top) || offset_to_top != 0) return false;
  if (!memory.ReadWord(vptr - 8, &typeinfo) || typeinfo % 8 != 0) return false;
  const Segment* s = memory.MappedSegment(typeinfo, 16);
  if (s == nullptr || s->kind == SegmentKind::kCode) return false;
  if (!memory.ReadWord(typeinfo, &ti_vptr) || !memory.ReadWord(typeinfo + 8, &name)) return false;
  if (ti_vptr != type_info_vptrs_[0] && ti_vptr != type_info_vptrs_[1] &&
      ti_vptr != type_info_vptrs_[2]) {
    return false;
  }
  const Segment* n = memory.MappedSegment(name, 1);
  if (n == nullptr || n->kind == SegmentKind::kCode) return false;
  // The name must be a printable string ending within kMaxName (read byte by byte: validated).
  for (size_t i = 0; i < kMaxName; ++i) {
    char c = 0;
    if (!memory.Read(name + i, &c, 1)) return false;
    if (i + 1 < sizeof(out->prefix)) out->prefix[i] = c;
    if (c == '\0') {
      out->typeinfo = typeinfo;
      return i > 0;
    }
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return false;
  }
  return false;
}

std::string CxxTypeinfo::MangledName(uint64_t typeinfo) {
  uint64_t name = 0;
  if (!roots::RawSyscall::ReadOwnMemory(typeinfo + 8, &name, sizeof(name))) return "";
  std::string text;
  char chunk[256];
  while (text.size() < kMaxName) {
    // A chunk may cross into an unmapped page: read byte ranges that stay within one page.
    uint64_t at = name + text.size();
    size_t length = std::min<size_t>(sizeof(chunk), 4096 - at % 4096);
    long n = roots::RawSyscall::ReadOwnMemoryPart(at, chunk, length);
    if (n <= 0) return "";
    size_t end = strnlen(chunk, static_cast<size_t>(n));
    text.append(chunk, end);
    if (end < static_cast<size_t>(n)) return text;
  }
  return "";
}

std::string CxxTypeinfo::Demangle(const std::string& mangled) {
  std::string name = !mangled.empty() && mangled[0] == '*' ? mangled.substr(1) : mangled;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result = demangled;
  std::free(demangled);
  return result;
}

}  // namespace heapgraph::scanner::types
