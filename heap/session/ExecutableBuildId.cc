#include "heap/session/ExecutableBuildId.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace heapgraph {
namespace {

constexpr uint32_t kMaxPhdrs = 64;
constexpr uint64_t kMaxNoteBytes = 4096;

bool ReadExact(int fd, void* out, uint64_t length, uint64_t offset) {
  ssize_t n = pread(fd, out, length, static_cast<off_t>(offset));
  return n >= 0 && static_cast<uint64_t>(n) == length;
}

// Scans one note segment's bytes for the GNU build-id note.
bool FindInNotes(const uint8_t* p, uint64_t size, uint8_t* id, uint32_t* length) {
  uint64_t at = 0;
  while (at + sizeof(Elf64_Nhdr) <= size) {
    Elf64_Nhdr header;
    memcpy(&header, p + at, sizeof(header));
    uint64_t name_at = at + sizeof(header);
    uint64_t desc_at = name_at + ((uint64_t{header.n_namesz} + 3) & ~uint64_t{3});
    uint64_t next = desc_at + ((uint64_t{header.n_descsz} + 3) & ~uint64_t{3});
    if (next > size) return false;
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
        memcmp(p + name_at, "GNU", 4) == 0 && header.n_descsz > 0) {
      uint32_t n = header.n_descsz < format::kMaxBuildId ? header.n_descsz : format::kMaxBuildId;
      memcpy(id, p + desc_at, n);
      *length = n;
      return true;
    }
    at = next;
  }
  return false;
}

bool ReadFromFd(int fd, uint8_t* id, uint32_t* length) {
  Elf64_Ehdr eh;
  if (!ReadExact(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > kMaxPhdrs) {
    return false;
  }
  Elf64_Phdr phdrs[kMaxPhdrs];
  if (!ReadExact(fd, phdrs, uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr), eh.e_phoff)) return false;
  uint8_t notes[kMaxNoteBytes];
  for (uint32_t i = 0; i < eh.e_phnum; ++i) {
    const Elf64_Phdr& ph = phdrs[i];
    if (ph.p_type != PT_NOTE || ph.p_filesz == 0) continue;
    uint64_t size = ph.p_filesz < kMaxNoteBytes ? ph.p_filesz : kMaxNoteBytes;
    if (ReadExact(fd, notes, size, ph.p_offset) && FindInNotes(notes, size, id, length)) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool ExecutableBuildId::Read(const char* path, uint8_t* id, uint32_t* length) {
  *length = 0;
  // Non-blocking and regular files only: the path comes from a file that may be corrupt.
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  bool found = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ReadFromFd(fd, id, length);
  close(fd);
  return found;
}

}  // namespace heapgraph
