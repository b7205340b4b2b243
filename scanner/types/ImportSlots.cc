// scanner/types/: see ImportSlots.h. May include heap/, roots/ and scanner/.
#include "scanner/types/ImportSlots.h"

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
#error "ImportSlots: unsupported architecture"
#endif

struct Search {
  const char* symbol;
  std::vector<uint64_t>* slots;
};

struct Dynamic {
  const ElfW(Rela) * jmprel = nullptr;
  uint64_t jmprel_bytes = 0;
  const ElfW(Rela) * rela = nullptr;
  uint64_t rela_bytes = 0;
  const ElfW(Sym) * symtab = nullptr;
  const char* strtab = nullptr;
  uint64_t strtab_bytes = 0;
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
      search.slots->push_back(base + rela[i].r_offset);
    }
  }
}

int Visit(dl_phdr_info* info, size_t, void* data) {
  const auto& search = *static_cast<const Search*>(data);
  Dynamic d = ReadDynamic(info);
  Collect(d, d.jmprel, d.jmprel_bytes, info->dlpi_addr, search);
  Collect(d, d.rela, d.rela_bytes, info->dlpi_addr, search);
  return 0;
}

}  // namespace

std::vector<uint64_t> ImportSlots::Find(const char* symbol) {
  std::vector<uint64_t> slots;
  Search search{symbol, &slots};
  dl_iterate_phdr(Visit, &search);
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  return slots;
}

}  // namespace heapgraph::scanner::types
