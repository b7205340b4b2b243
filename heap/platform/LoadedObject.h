// heap/platform/: the loaded ELF object (program, shared library, ld.so, vDSO) that contains an
// address, found without the dynamic loader's locks. glibc's _dl_find_object (2.35+) reads a
// lock-free, versioned copy of the loader's object list: unlike dl_iterate_phdr and dladdr it never
// waits for _dl_load_write_lock or dl_load_lock, so it works inside a dl_iterate_phdr callback,
// inside a dlopen constructor, in the allocation hooks and in a forked child whose parent's other
// thread held a loader lock at the fork. No malloc, no stdio. Includes libc only.
// Invariant: the description points into the object's own memory (its name, its program headers),
// which stays valid while the object stays loaded; callers look up addresses of running code or of
// return addresses on a live stack, whose objects cannot be unloaded meanwhile.
#pragma once

#include <link.h>

#include <cstdint>

namespace heapgraph {

struct LoadedObject {
  uintptr_t bias = 0;       // l_addr: add to an ELF virtual address to get the run-time address
  uintptr_t map_start = 0;  // [map_start, map_end): every segment of the object
  uintptr_t map_end = 0;
  const char* name = "";  // the loader's l_name: "" for the main program
  // The program headers in the mapped image (the ELF header at map_start says where), or null
  // when the image does not map them; phnum is then 0.
  const ElfW(Phdr) * phdr = nullptr;
  uint16_t phnum = 0;
  const void* link_map = nullptr;  // the loader's identity of this load of the object
  // The object's PT_GNU_EH_FRAME segment (.eh_frame_hdr) in memory, or null when it has none.
  const void* eh_frame_hdr = nullptr;

  // The object containing `address`; false when no loaded object does (heap, stack, JIT code).
  static bool Find(uintptr_t address, LoadedObject* out);
  // For the main program (load bias `bias`): its program headers from the auxiliary vector
  // (AT_PHDR) and [map_start, map_end) from its PT_LOADs. Find() takes it when no ELF header lies
  // at the loader's map_start: glibc's _dl_find_object can describe the main program by its text
  // segment alone (seen with a large ASan test program whose text starts on a page boundary).
  // False, nothing changed, when `bias` is not the main program's.
  static bool MainProgramFromAuxv(uintptr_t bias, LoadedObject* out);

  // The executable PT_LOAD segment containing `address`; false if there is none.
  bool ExecutableSegment(uintptr_t address, uintptr_t* begin, uintptr_t* end) const;
  // Calls visit(begin, end) for each writable PT_LOAD segment, from its first page to the end of
  // its last (.bss included: p_memsz); returns how many there were.
  template <typename Visit>
  int ForEachWritableSegment(Visit&& visit) const;
};

template <typename Visit>
int LoadedObject::ForEachWritableSegment(Visit&& visit) const {
  constexpr uintptr_t kPage = 4096;
  int count = 0;
  for (uint16_t i = 0; i < phnum; ++i) {
    const ElfW(Phdr)& ph = phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0 || ph.p_memsz == 0) continue;
    const uintptr_t first = bias + ph.p_vaddr;
    visit(first & ~(kPage - 1), (first + ph.p_memsz + kPage - 1) & ~(kPage - 1));
    ++count;
  }
  return count;
}

}  // namespace heapgraph
