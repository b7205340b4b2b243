#include "heap/platform/LoadedObject.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/auxv.h>

#include <cstring>

namespace heapgraph {
namespace {

// The program headers of `object` from the ELF header at the start of its mapping (the first
// PT_LOAD maps file offset 0 in every object the loader or the kernel maps). Left null unless the
// header is valid, the table lies inside the mapping and a PT_LOAD really maps offset 0 at
// map_start under this bias.
void FindProgramHeaders(LoadedObject* object) {
  uintptr_t size = object->map_end - object->map_start;
  const auto* ehdr = reinterpret_cast<const ElfW(Ehdr)*>(object->map_start);
  if (size < sizeof(*ehdr) || memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 ||
      ehdr->e_ident[EI_CLASS] != ELFCLASS64 || ehdr->e_phentsize != sizeof(ElfW(Phdr)) ||
      ehdr->e_phoff > size || uint64_t{ehdr->e_phnum} * sizeof(ElfW(Phdr)) > size - ehdr->e_phoff) {
    return;
  }
  const auto* phdr = reinterpret_cast<const ElfW(Phdr)*>(object->map_start + ehdr->e_phoff);
  for (uint16_t i = 0; i < ehdr->e_phnum; ++i) {
    const ElfW(Phdr)& ph = phdr[i];
    if (ph.p_type == PT_LOAD && ph.p_offset == 0 &&
        object->bias + (ph.p_vaddr & ~uintptr_t{4095}) == object->map_start) {
      object->phdr = phdr;
      object->phnum = ehdr->e_phnum;
      return;
    }
  }
}

}  // namespace

bool LoadedObject::MainProgramFromAuxv(uintptr_t bias, LoadedObject* out) {
  const auto* phdr = reinterpret_cast<const ElfW(Phdr)*>(getauxval(AT_PHDR));
  const auto phnum = static_cast<uint16_t>(getauxval(AT_PHNUM));
  if (phdr == nullptr || phnum == 0) return false;
  uintptr_t program_bias = 0, low = UINTPTR_MAX, high = 0;
  bool has_phdr = false;
  for (uint16_t i = 0; i < phnum; ++i) {
    const ElfW(Phdr)& ph = phdr[i];
    if (ph.p_type == PT_PHDR) {
      program_bias = reinterpret_cast<uintptr_t>(phdr) - ph.p_vaddr;
      has_phdr = true;
    } else if (ph.p_type == PT_LOAD) {
      if ((ph.p_vaddr & ~uintptr_t{4095}) < low) low = ph.p_vaddr & ~uintptr_t{4095};
      if (ph.p_vaddr + ph.p_memsz > high) high = ph.p_vaddr + ph.p_memsz;
    }
  }
  if (!has_phdr || program_bias != bias || high == 0) return false;
  out->phdr = phdr;
  out->phnum = phnum;
  out->map_start = bias + low;
  out->map_end = bias + high;
  return true;
}

bool LoadedObject::Find(uintptr_t address, LoadedObject* out) {
  dl_find_object found;
  if (_dl_find_object(reinterpret_cast<void*>(address), &found) != 0) return false;
  const struct link_map* map = found.dlfo_link_map;
  *out = LoadedObject();
  out->bias = map->l_addr;
  out->map_start = reinterpret_cast<uintptr_t>(found.dlfo_map_start);
  out->map_end = reinterpret_cast<uintptr_t>(found.dlfo_map_end);
  out->name = map->l_name != nullptr ? map->l_name : "";
  out->link_map = map;
  out->eh_frame_hdr = found.dlfo_eh_frame;
  FindProgramHeaders(out);
  if (out->phnum == 0) MainProgramFromAuxv(out->bias, out);
  return true;
}

bool LoadedObject::ExecutableSegment(uintptr_t address, uintptr_t* begin, uintptr_t* end) const {
  for (uint16_t i = 0; i < phnum; ++i) {
    const ElfW(Phdr)& ph = phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    uintptr_t first = bias + ph.p_vaddr;
    if (address >= first && address < first + ph.p_memsz) {
      *begin = first;
      *end = first + ph.p_memsz;
      return true;
    }
  }
  return false;
}

}  // namespace heapgraph
