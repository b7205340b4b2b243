#include "report/ThinWrapperDetector.h"

#include <capstone/capstone.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "reader/InputFile.h"
#include "reader/RecordingError.h"
#include "scanner/types/ElfutilsLibrary.h"

namespace heapgraph::report {
namespace {

constexpr uint64_t kMaxCodeBytes = 1024;

struct ElfCloser {
  void operator()(Elf* elf) const { elfutils::Libelf()->elf_end(elf); }
};

struct Symbol {
  uint64_t start = 0;
  uint64_t size = 0;
};

std::optional<Symbol> FindSymbol(const elfutils::LibelfFunctions& lib, Elf* elf, uint64_t vaddr) {
  Elf_Scn* scn = nullptr;
  while ((scn = lib.elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (lib.gelf_getshdr(scn, &shdr) == nullptr) continue;
    if (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = lib.elf_getdata(scn, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0) continue;
    size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (lib.gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0) continue;
      if (vaddr >= sym.st_value && vaddr - sym.st_value < sym.st_size) {
        return Symbol{sym.st_value, sym.st_size};
      }
    }
  }
  return std::nullopt;
}

// The bytes of [start, start + size) from the executable section holding them.
std::optional<std::vector<uint8_t>> ReadCode(const elfutils::LibelfFunctions& lib, Elf* elf, int fd,
                                             uint64_t start, uint64_t size) {
  Elf_Scn* scn = nullptr;
  while ((scn = lib.elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (lib.gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_PROGBITS ||
        (shdr.sh_flags & SHF_EXECINSTR) == 0) {
      continue;
    }
    if (start < shdr.sh_addr || start - shdr.sh_addr >= shdr.sh_size) continue;
    uint64_t available = shdr.sh_size - (start - shdr.sh_addr);
    std::vector<uint8_t> code(std::min({size, available, kMaxCodeBytes}));
    ssize_t n = pread(fd, code.data(), code.size(),
                      static_cast<off_t>(shdr.sh_offset + (start - shdr.sh_addr)));
    if (n != static_cast<ssize_t>(code.size())) return std::nullopt;
    return code;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ThinWrapperDetector::Function> ThinWrapperDetector::FindFunction(
    const std::string& elf_path, uint64_t elf_vaddr) {
  const elfutils::LibelfFunctions* lib = elfutils::Libelf();
  if (lib == nullptr) return std::nullopt;
  // A FIFO or device named by a hostile module map is refused, never opened blocking or read
  // without end (reader/InputFile); like a missing file it is simply not a thin wrapper.
  std::optional<InputFile> file;
  try {
    file = InputFile::Open(elf_path, elf_path, InputFile::Links::kFollow);
  } catch (const RecordingError&) {
  }
  if (!file) return std::nullopt;
  std::unique_ptr<Elf, ElfCloser> elf(lib->elf_begin(file->fd(), ELF_C_READ, nullptr));
  if (elf == nullptr || lib->elf_kind(elf.get()) != ELF_K_ELF) return std::nullopt;
  std::optional<Symbol> sym = FindSymbol(*lib, elf.get(), elf_vaddr);
  if (!sym) return std::nullopt;
  std::optional<std::vector<uint8_t>> code =
      ReadCode(*lib, elf.get(), file->fd(), sym->start, sym->size);
  if (!code) return std::nullopt;
  return Function{sym->start, std::move(*code)};
}

bool ThinWrapperDetector::IsThinCode(const std::vector<uint8_t>& code, uint64_t address) {
  csh handle;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) return false;
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
  cs_insn* insn = nullptr;
  size_t count = cs_disasm(handle, code.data(), code.size(), address, 0, &insn);
  uint64_t end = address + code.size();
  bool thin = count > 0 && count <= kMaxInstructions;
  size_t calls = 0;
  bool branched = false;  // a conditional branch since the last call out
  for (size_t i = 0; thin && i < count; ++i) {
    const cs_insn& in = insn[i];
    bool call = cs_insn_group(handle, &in, CS_GRP_CALL);
    bool jump = cs_insn_group(handle, &in, CS_GRP_JUMP);
    if (!call && !jump) continue;
    const cs_x86& x86 = in.detail->x86;
    bool immediate = x86.op_count == 1 && x86.operands[0].type == X86_OP_IMM;
    uint64_t target = immediate ? static_cast<uint64_t>(x86.operands[0].imm) : 0;
    bool leaves = call || !immediate || target < address || target >= end;
    if (jump && immediate && target >= address && target < end && target <= in.address) {
      thin = false;  // a backward branch: a loop
    }
    if (leaves && calls > 0 && !branched) thin = false;  // straight-line work after the allocator
    if (leaves) {
      ++calls;
      branched = false;
    } else if (jump && in.id != X86_INS_JMP) {
      branched = true;
    }
  }
  thin = thin && calls >= 1 && calls <= kMaxCalls;
  if (insn != nullptr) cs_free(insn, count);
  cs_close(&handle);
  return thin;
}

bool ThinWrapperDetector::IsThinWrapper(const std::string& elf_path, uint64_t elf_vaddr) {
  auto key = std::make_pair(elf_path, elf_vaddr);
  auto it = by_address_.find(key);
  if (it != by_address_.end()) return it->second;
  std::optional<Function> function = FindFunction(elf_path, elf_vaddr);
  bool thin = function && IsThinCode(function->code, function->start);
  by_address_.emplace(std::move(key), thin);
  return thin;
}

}  // namespace heapgraph::report
