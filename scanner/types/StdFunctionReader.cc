#include "scanner/types/StdFunctionReader.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "heap/plugin/RecorderEntries.h"
#include "scanner/types/CxxTypeinfo.h"
#include "scanner/types/DynamicSymbols.h"
#include "scanner/types/ElfutilsLibrary.h"

namespace heapgraph::scanner::types {
namespace {

constexpr const char kHandlerPrefix[] = "_ZNSt17_Function_handlerI";
constexpr const char kManagerMarker[] = "E10_M_managerE";

bool IsManagerSymbol(const char* name) {
  return std::strncmp(name, kHandlerPrefix, sizeof(kHandlerPrefix) - 1) == 0 &&
         std::strstr(name, kManagerMarker) != nullptr;
}

// Whether string table bytes [offset, offset + size) of the file `fd` (of `file_size` bytes) name
// a _Function_handler; true when they cannot be read (libelf decides then). Mapped, not copied:
// an unstripped program's table can be hundreds of megabytes.
bool StringsNameAHandler(int fd, uint64_t file_size, uint64_t offset, uint64_t size) {
  if (size == 0 || offset > file_size || size > file_size - offset) return true;
  const uint64_t start = offset & ~uint64_t{4095};
  const size_t length = static_cast<size_t>(offset - start + size);
  void* map = mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
  if (map == MAP_FAILED) return true;
  const bool names = memmem(static_cast<const char*>(map) + (offset - start), size, kHandlerPrefix,
                            sizeof(kHandlerPrefix) - 1) != nullptr;
  munmap(map, length);
  return names;
}

// Whether the ELF file `fd` has a .symtab whose strings name a _Function_handler, from its
// headers and that string table alone (libelf not loaded); true when it cannot tell (libelf
// decides then). An unstripped module without std::function (a C program, libheapgraph.so) is
// read no further.
bool SymtabNamesAHandler(int fd) {
  Elf64_Ehdr header;
  struct stat st;
  if (fstat(fd, &st) != 0 ||
      pread(fd, &header, sizeof(header), 0) != static_cast<ssize_t>(sizeof(header)) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0) {
    return true;
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  const size_t bytes = sections.size() * sizeof(Elf64_Shdr);
  if (pread(fd, sections.data(), bytes, static_cast<off_t>(header.e_shoff)) !=
      static_cast<ssize_t>(bytes)) {
    return true;
  }
  for (const Elf64_Shdr& symtab : sections) {
    if (symtab.sh_type != SHT_SYMTAB) continue;
    if (symtab.sh_link >= sections.size()) return true;
    const Elf64_Shdr& strings = sections[symtab.sh_link];
    if (StringsNameAHandler(fd, static_cast<uint64_t>(st.st_size), strings.sh_offset,
                            strings.sh_size)) {
      return true;
    }
  }
  return false;
}

// The load address of the object holding `code`; 0 if unknown (or for null).
uint64_t ObjectBase(const void* code) {
  Dl_info info;
  if (code == nullptr || dladdr(code, &info) == 0) return 0;
  return reinterpret_cast<uint64_t>(info.dli_fbase);
}

}  // namespace

void StdFunctionReader::AddManager(uint64_t address, std::string symbol) {
  if (!names_.emplace(address, std::move(symbol)).second) return;  // in .dynsym and .symtab
  managers_.insert(std::upper_bound(managers_.begin(), managers_.end(), address), address);
  lowest_ = managers_.front();
  highest_ = managers_.back();
}

// The _M_manager instantiations of one module's .symtab, when it has one: the local and hidden
// ones of an unstripped binary, which its .dynsym (read in memory by Prepare) does not list. A
// stripped module's file is read no further than its section headers: most are (distribution
// libraries), and reading every module's symbol tables with libelf made cmake's check at exit
// prepare its type readers in 2.2 ms, 1.0 ms so (55 modules; issue 14). Nor is a table whose
// strings name no _Function_handler, and libelf is loaded only for one that does
// (ElfutilsLibrary.h).
void StdFunctionReader::CollectModule(const Module& module) {
  if (module.path.empty()) return;
  int fd = open(module.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const elfutils::LibelfFunctions* lib = SymtabNamesAHandler(fd) ? elfutils::Libelf() : nullptr;
  Elf* elf = lib != nullptr ? lib->elf_begin(fd, ELF_C_READ_MMAP, nullptr) : nullptr;
  for (Elf_Scn* scn = nullptr; elf != nullptr && (scn = lib->elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (lib->gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_SYMTAB ||
        shdr.sh_entsize == 0) {
      continue;
    }
    Elf_Data* data = lib->elf_getdata(scn, nullptr);
    size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; data != nullptr && i < count; ++i) {
      GElf_Sym sym;
      if (lib->gelf_getsym(data, static_cast<int>(i), &sym) == nullptr ||
          GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 || sym.st_shndx == SHN_UNDEF) {
        continue;
      }
      const char* name = lib->elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (name != nullptr && IsManagerSymbol(name)) AddManager(module.bias + sym.st_value, name);
    }
  }
  if (elf != nullptr) lib->elf_end(elf);
  close(fd);
}

// Every module's exported managers from its .dynsym in memory (no file opened), then the
// unexported ones of the unstripped modules' .symtab.
bool StdFunctionReader::Prepare(const PrepareContext& context) {
  for (auto& [address, name] : DynamicSymbols::FindFunctions(kHandlerPrefix, IsManagerSymbol)) {
    AddManager(address, std::move(name));
  }
  // Two symbol tables name no functor of the program's and are not read: the plugin's own (7,500
  // symbols unstripped, its own std::function handlers among them: read on every check, it was
  // most of this step), where this code is, and the recorder's (libheapgraph.so uses nothing of
  // libstdc++; unstripped, a third of a C program's step). The first module is the program, read
  // even when the scanner is linked into it.
  const uint64_t own = ObjectBase(reinterpret_cast<const void*>(&ObjectBase));
  const uint64_t recorder =
      ObjectBase(reinterpret_cast<const void*>(RecorderEntries::Get().sequence));
  const std::vector<Module>& modules = context.modules.modules();
  for (size_t i = 0; i < modules.size(); ++i) {
    const uint64_t bias = modules[i].bias;
    if (i == 0 || bias == 0 || (bias != own && bias != recorder)) CollectModule(modules[i]);
  }
  return !managers_.empty();
}

void StdFunctionReader::IdentifyReferenced(const SnapshotMemory& memory, uint32_t block,
                                           const TypeIdentity&, TypeSink& sink) const {
  // Chunks of kChunk words, each with the two words before it (a manager word's functor pointer
  // is two words back), so no word is missed or seen twice.
  constexpr size_t kChunk = 256;
  uint64_t scratch[kChunk + 2];
  size_t n = memory.block(block).size / 8;
  for (size_t start = 0; start + 2 < n; start += kChunk) {
    size_t count = std::min(kChunk + 2, n - start);
    const uint64_t* words = memory.BlockWords(block, start, count, scratch);
    if (words == nullptr) return;
    for (size_t w = 2; w < count; ++w) {
      if (!IsManager(words[w])) continue;
      uint32_t functor = memory.BlockStartingAt(words[w - 2]);
      if (functor == BlockIndex::kNotFound || functor == block) continue;
      TypeIdentity identity;
      identity.model = ObjectModel::kStdFunctor;
      identity.key = words[w];
      sink.Assign(functor, identity);
    }
  }
}

std::string StdFunctionReader::FunctionName(const std::string& manager) {
  const std::string prefix = "std::_Function_handler<";
  size_t at = manager.find(prefix);
  if (at == std::string::npos) return "std::function";
  // The handler's arguments: the signature, then the functor, up to the matching '>'.
  size_t begin = at + prefix.size();
  int depth = 0;
  size_t comma = std::string::npos, end = begin;
  for (; end < manager.size(); ++end) {
    char c = manager[end];
    if (c == '<' || c == '(' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == '}') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ',' && depth == 0 && comma == std::string::npos) comma = end;
  }
  if (comma == std::string::npos) return "std::function";
  std::string functor = manager.substr(comma + 1, end - comma - 1);
  while (!functor.empty() && functor.front() == ' ') functor.erase(0, 1);
  size_t lambda = functor.rfind("::{lambda(");
  if (lambda != std::string::npos)
    return "std::function<lambda in " + functor.substr(0, lambda) + ">";
  return "std::function<" + functor + ">";
}

TypeDescription StdFunctionReader::Describe(const TypeIdentity& identity,
                                            const DescribeContext& context) {
  TypeDescription d;
  auto it = names_.find(identity.key);
  d.name = it != names_.end() ? FunctionName(CxxTypeinfo::Demangle(it->second)) : "std::function";
  d.closure = ClosureKind::kFunction;
  if (layouts_ != nullptr) d.fields = layouts_->FunctorFields(identity.key, context.modules);
  for (FieldDescription& f : d.fields) f.label = EdgeLabel::kCapture;
  return d;
}

}  // namespace heapgraph::scanner::types
