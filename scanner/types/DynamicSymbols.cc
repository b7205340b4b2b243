// scanner/types/: see DynamicSymbols.h. May include heap/, roots/ and scanner/.
#include "scanner/types/DynamicSymbols.h"

#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstring>

namespace heapgraph::scanner::types {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "DynamicSymbols: unsupported architecture"
#endif

struct Search {
  const char* symbol;
  std::vector<uint64_t>* found;
};

struct Dynamic {
  const ElfW(Rela) * jmprel = nullptr;
  uint64_t jmprel_bytes = 0;
  const ElfW(Rela) * rela = nullptr;
  uint64_t rela_bytes = 0;
  const ElfW(Sym) * symtab = nullptr;
  const char* strtab = nullptr;
  uint64_t strtab_bytes = 0;
  const uint32_t* gnu_hash = nullptr;
  const uint32_t* sysv_hash = nullptr;
};

// glibc relocates the pointers of a writable dynamic section in place; read-only ones (and the
// vDSO's) still hold link-time addresses.
template <typename T>
const T* Pointer(ElfW(Addr) base, ElfW(Addr) value) {
  return reinterpret_cast<const T*>(value >= base ? value : base + value);
}

Dynamic ReadDynamic(const dl_phdr_info* info) {
  Dynamic d;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_DYNAMIC) continue;
    auto* dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + ph.p_vaddr);
    ElfW(Addr) base = info->dlpi_addr;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      switch (dyn->d_tag) {
        case DT_JMPREL:
          d.jmprel = Pointer<ElfW(Rela)>(base, dyn->d_un.d_ptr);
          break;
        case DT_PLTRELSZ:
          d.jmprel_bytes = dyn->d_un.d_val;
          break;
        case DT_RELA:
          d.rela = Pointer<ElfW(Rela)>(base, dyn->d_un.d_ptr);
          break;
        case DT_RELASZ:
          d.rela_bytes = dyn->d_un.d_val;
          break;
        case DT_SYMTAB:
          d.symtab = Pointer<ElfW(Sym)>(base, dyn->d_un.d_ptr);
          break;
        case DT_STRTAB:
          d.strtab = Pointer<char>(base, dyn->d_un.d_ptr);
          break;
        case DT_STRSZ:
          d.strtab_bytes = dyn->d_un.d_val;
          break;
        case DT_GNU_HASH:
          d.gnu_hash = Pointer<uint32_t>(base, dyn->d_un.d_ptr);
          break;
        case DT_HASH:
          d.sysv_hash = Pointer<uint32_t>(base, dyn->d_un.d_ptr);
          break;
        default:
          break;
      }
    }
  }
  return d;
}

void Collect(const Dynamic& d, const ElfW(Rela) * rela, uint64_t bytes, ElfW(Addr) base,
             const Search& search) {
  if (rela == nullptr || d.symtab == nullptr || d.strtab == nullptr) return;
  for (uint64_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
    uint32_t type = ELF64_R_TYPE(rela[i].r_info);
    uint32_t sym = ELF64_R_SYM(rela[i].r_info);
    if ((type != kJumpSlot && type != kGlobDat) || sym == 0) continue;
    uint32_t name = d.symtab[sym].st_name;
    if (name >= d.strtab_bytes) continue;
    if (std::strcmp(d.strtab + name, search.symbol) == 0) {
      search.found->push_back(base + rela[i].r_offset);
    }
  }
}

int VisitSlots(dl_phdr_info* info, size_t, void* data) {
  const auto& search = *static_cast<const Search*>(data);
  Dynamic d = ReadDynamic(info);
  Collect(d, d.jmprel, d.jmprel_bytes, info->dlpi_addr, search);
  Collect(d, d.rela, d.rela_bytes, info->dlpi_addr, search);
  return 0;
}

// A defined symbol at index `i` named `name`, or nullptr.
const ElfW(Sym) * Defined(const Dynamic& d, uint32_t i, const char* name) {
  const ElfW(Sym)& sym = d.symtab[i];
  if (sym.st_shndx == SHN_UNDEF || sym.st_name >= d.strtab_bytes) return nullptr;
  return std::strcmp(d.strtab + sym.st_name, name) == 0 ? &sym : nullptr;
}

// A DT_GNU_HASH table's parts: symbols from `symoffset` on are hashed; buckets[b] is the first
// symbol of chain b (or below symoffset: empty) and chain[i - symoffset] the hash of symbol i, its
// low bit set on the last symbol of a chain. The Bloom filter is skipped.
struct GnuHash {
  uint32_t nbuckets;
  uint32_t symoffset;
  const uint32_t* buckets;
  const uint32_t* chain;
};

GnuHash ReadGnuHash(const uint32_t* table) {
  const uint32_t nbuckets = table[0], bloom_words = table[2];
  const uint32_t* buckets = table + 4 + bloom_words * (sizeof(ElfW(Addr)) / 4);
  return {nbuckets, table[1], buckets, buckets + nbuckets};
}

// The GNU hash table's lookup (the same walk ld.so does), without the Bloom filter.
const ElfW(Sym) * LookupGnu(const Dynamic& d, const char* name) {
  uint32_t h = 5381;
  for (const char* c = name; *c != '\0'; ++c) h = h * 33 + static_cast<unsigned char>(*c);
  const GnuHash t = ReadGnuHash(d.gnu_hash);
  if (t.nbuckets == 0) return nullptr;
  uint32_t i = t.buckets[h % t.nbuckets];
  if (i < t.symoffset) return nullptr;
  for (;; ++i) {
    uint32_t hash = t.chain[i - t.symoffset];
    if ((hash | 1) == (h | 1)) {
      if (const ElfW(Sym)* sym = Defined(d, i, name)) return sym;
    }
    if (hash & 1) return nullptr;
  }
}

const ElfW(Sym) * LookupSysv(const Dynamic& d, const char* name) {
  uint32_t h = 0;
  for (const char* c = name; *c != '\0'; ++c) {
    h = (h << 4) + static_cast<unsigned char>(*c);
    uint32_t g = h & 0xf0000000;
    if (g != 0) h ^= g >> 24;
    h &= ~g;
  }
  const uint32_t nbuckets = d.sysv_hash[0], nchain = d.sysv_hash[1];
  if (nbuckets == 0) return nullptr;
  const uint32_t* buckets = d.sysv_hash + 2;
  const uint32_t* chain = buckets + nbuckets;
  for (uint32_t i = buckets[h % nbuckets]; i != STN_UNDEF && i < nchain; i = chain[i]) {
    if (const ElfW(Sym)* sym = Defined(d, i, name)) return sym;
  }
  return nullptr;
}

int VisitDefinitions(dl_phdr_info* info, size_t, void* data) {
  const auto& search = *static_cast<const Search*>(data);
  Dynamic d = ReadDynamic(info);
  if (d.symtab == nullptr || d.strtab == nullptr) return 0;
  const ElfW(Sym)* sym = nullptr;
  if (d.gnu_hash != nullptr) {
    sym = LookupGnu(d, search.symbol);
  } else if (d.sysv_hash != nullptr) {
    sym = LookupSysv(d, search.symbol);
  }
  if (sym != nullptr && ELF64_ST_TYPE(sym->st_info) != STT_TLS) {
    search.found->push_back(info->dlpi_addr + sym->st_value);
  }
  return 0;
}

// The number of .dynsym entries: DT_HASH says it (nchain); with DT_GNU_HASH only, one past the
// last symbol of the longest-indexed chain (the chains end with a hash whose low bit is set).
uint32_t SymbolCount(const Dynamic& d) {
  if (d.sysv_hash != nullptr) return d.sysv_hash[1];
  if (d.gnu_hash == nullptr) return 0;
  const GnuHash t = ReadGnuHash(d.gnu_hash);
  uint32_t last = 0;
  for (uint32_t b = 0; b < t.nbuckets; ++b) last = std::max(last, t.buckets[b]);
  if (last < t.symoffset) return t.symoffset;
  while ((t.chain[last - t.symoffset] & 1) == 0) ++last;
  return last + 1;
}

struct FunctionSearch {
  const char* prefix;
  bool (*accept)(const char*);
  std::vector<std::pair<uint64_t, std::string>>* found;
};

int VisitFunctions(dl_phdr_info* info, size_t, void* data) {
  const auto& search = *static_cast<const FunctionSearch*>(data);
  Dynamic d = ReadDynamic(info);
  if (d.symtab == nullptr || d.strtab == nullptr || d.strtab_bytes == 0 ||
      memmem(d.strtab, d.strtab_bytes, search.prefix, std::strlen(search.prefix)) == nullptr) {
    return 0;
  }
  const size_t prefix_length = std::strlen(search.prefix);
  for (uint32_t i = 0, n = SymbolCount(d); i < n; ++i) {
    const ElfW(Sym)& sym = d.symtab[i];
    uint32_t type = ELF64_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
        sym.st_value == 0 || sym.st_name >= d.strtab_bytes) {
      continue;
    }
    const char* name = d.strtab + sym.st_name;
    if (std::strncmp(name, search.prefix, prefix_length) == 0 && search.accept(name)) {
      search.found->emplace_back(info->dlpi_addr + sym.st_value, name);
    }
  }
  return 0;
}

std::vector<uint64_t> SortedUnique(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

std::vector<uint64_t> DynamicSymbols::FindImportSlots(const char* symbol) {
  std::vector<uint64_t> slots;
  Search search{symbol, &slots};
  dl_iterate_phdr(VisitSlots, &search);
  return SortedUnique(std::move(slots));
}

std::vector<uint64_t> DynamicSymbols::FindDefinitions(const char* symbol) {
  std::vector<uint64_t> found;
  Search search{symbol, &found};
  dl_iterate_phdr(VisitDefinitions, &search);
  return SortedUnique(std::move(found));
}

std::vector<std::pair<uint64_t, std::string>> DynamicSymbols::FindFunctions(
    const char* prefix, bool (*accept)(const char* name)) {
  std::vector<std::pair<uint64_t, std::string>> found;
  FunctionSearch search{prefix, accept, &found};
  dl_iterate_phdr(VisitFunctions, &search);
  return found;
}

}  // namespace heapgraph::scanner::types
