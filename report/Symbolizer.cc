#include "report/Symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "reader/InputFile.h"
#include "reader/RecordingError.h"
#include "report/BaseName.h"
#include "report/BuildIdHex.h"
#include "report/SymbolCache.h"
#include "scanner/types/ElfutilsLibrary.h"

namespace heapgraph::report {
namespace {

using elfutils::Dw;

struct DwflDeleter {
  void operator()(Dwfl* dwfl) const { Dw().dwfl_end(dwfl); }
};
using DwflPtr = std::unique_ptr<Dwfl, DwflDeleter>;

// Null selects libdwfl's default debug-info search path (":.debug:/usr/lib/debug").
char* g_debuginfo_path = nullptr;
constexpr char kSystemDebugDir[] = "/usr/lib/debug";

bool DebuginfodServersSet() {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  return urls != nullptr && urls[0] != '\0';
}

// Whether a separate debug file named `name` (a .gnu_debuglink or .gnu_debugaltlink name) may be
// on disk where libdwfl's default path search looks for the module at `file_name`: beside it, in
// .debug beside it, or under /usr/lib/debug with the module's directory (or at `name` itself when
// it is absolute). Without a link name, the search looks for "<file>.debug".
bool DebugFileByNameMayExist(const char* file_name, const char* name) {
  if (file_name == nullptr) return false;
  const std::string_view file(file_name);
  const std::string base = BaseName(file);
  const std::string dir =
      base.size() == file.size() ? "." : std::string(file.substr(0, file.size() - base.size() - 1));
  const std::string link = name != nullptr ? name : base + ".debug";
  if (link.empty()) return false;
  if (link[0] == '/') return access(link.c_str(), F_OK) == 0;
  const std::string base_link = BaseName(link);
  for (const std::string& candidate :
       {dir + "/" + link, dir + "/.debug/" + link, kSystemDebugDir + dir + "/" + link,
        dir + "/" + base_link, dir + "/.debug/" + base_link}) {
    if (candidate != file_name && access(candidate.c_str(), F_OK) == 0) return true;
  }
  return false;
}

// libdwfl's standard search for a module's separate debug information, except that debuginfod is
// asked only when DEBUGINFOD_URLS names a server. elfutils 0.188 loads libdebuginfod, and libcurl
// with some twenty-five libraries behind it, for the first module whose debug information is not
// on disk, whether or not a server is set: 4-6 ms in every process whose leak check symbolizes a
// system binary (docs/performance.md, "Session 18"). So without servers: the build-id lookup
// under /usr/lib/debug/.build-id, then the standard search only if a file it looks for by name
// exists (it then finds it before it would reach debuginfod).
int FindDebuginfo(Dwfl_Module* module, void** userdata, const char* module_name, Dwarf_Addr base,
                  const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                  char** debuginfo_file_name) {
  if (!DebuginfodServersSet()) {
    int fd = Dw().dwfl_build_id_find_debuginfo(module, userdata, module_name, base, file_name,
                                               debuglink_file, debuglink_crc, debuginfo_file_name);
    if (fd >= 0 || !DebugFileByNameMayExist(file_name, debuglink_file)) return fd;
  }
  return Dw().dwfl_standard_find_debuginfo(module, userdata, module_name, base, file_name,
                                           debuglink_file, debuglink_crc, debuginfo_file_name);
}

// The callbacks of every offline Dwfl (libdw's own functions, bound once libdw is loaded).
const Dwfl_Callbacks* OfflineCallbacks() {
  static const Dwfl_Callbacks callbacks = {
      .find_elf = Dw().dwfl_build_id_find_elf,
      .find_debuginfo = FindDebuginfo,
      .section_address = Dw().dwfl_offline_section_address,
      .debuginfo_path = &g_debuginfo_path,
  };
  return &callbacks;
}

// A source position; unknown is an empty file and line 0 (never one without the other).
struct Location {
  std::string file;
  int line = 0;
};

std::string Demangle(const char* name) {
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

// Reads a string attribute, following DW_AT_abstract_origin and DW_AT_specification, so inlined
// instances and out-of-line definitions find the name on their declaration.
const char* IntegratedString(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  return Dw().dwarf_formstring(Dw().dwarf_attr_integrate(die, name, &attr));
}

// Bounds descents into (possibly corrupt) DIE trees and reference chains; real code nests a few
// dozen deep.
constexpr int kMaxScopeDepth = 256;

// The DIE whose parents are the function's lexical scope: follows DW_AT_abstract_origin (inlined
// and concrete instances) and DW_AT_specification (out-of-class definitions) to the declaration.
Dwarf_Die DeclarationOf(Dwarf_Die die) {
  for (int hops = 0; hops < kMaxScopeDepth; ++hops) {
    Dwarf_Attribute attr;
    Dwarf_Die target;
    if (Dw().dwarf_formref_die(Dw().dwarf_attr(&die, DW_AT_abstract_origin, &attr), &target) ==
            nullptr &&
        Dw().dwarf_formref_die(Dw().dwarf_attr(&die, DW_AT_specification, &attr), &target) ==
            nullptr) {
      break;
    }
    die = target;
  }
  return die;
}

// How an enclosing DIE appears in a qualified name; empty when it does not (e.g. the CU).
std::string ScopeName(Dwarf_Die* scope) {
  const char* name = Dw().dwarf_diename(scope);
  switch (Dw().dwarf_tag(scope)) {
    case DW_TAG_namespace:
      return name != nullptr ? name : "(anonymous namespace)";
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_subprogram:
      return name != nullptr ? name : "(anonymous)";
    default:
      return "";
  }
}

// Appends "scope::" for each DIE enclosing the one at offset `target` below `parent`, outermost
// first. Descends only into the child whose subtree, [its offset, next sibling's offset), holds
// `target`, so the cost is the siblings along one path, not the whole CU.
void AppendEnclosingScopes(Dwarf_Die* parent, Dwarf_Off target, int depth, std::string* out) {
  Dwarf_Die child;
  if (depth >= kMaxScopeDepth || Dw().dwarf_child(parent, &child) != 0) return;
  while (Dw().dwarf_dieoffset(&child) < target) {
    Dwarf_Die next;
    int status = Dw().dwarf_siblingof(&child, &next);
    if (status < 0) return;
    if (status > 0 || target < Dw().dwarf_dieoffset(&next)) {  // `target` is inside `child`.
      std::string name = ScopeName(&child);
      if (!name.empty()) *out += name + "::";
      AppendEnclosingScopes(&child, target, depth + 1, out);
      return;
    }
    child = next;
  }
}

// The function's name: its demangled linkage name (namespaces, classes and parameters) when it
// has one; otherwise DW_AT_name qualified by the scopes enclosing its declaration, without
// parameters (GCC emits no linkage name for e.g. functions in anonymous namespaces).
std::string DieFunctionName(Dwarf_Die* die) {
  for (unsigned int attr : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (const char* linkage = IntegratedString(die, attr)) return Demangle(linkage);
  }
  const char* name = IntegratedString(die, DW_AT_name);
  if (name == nullptr) return "";
  Dwarf_Die declaration = DeclarationOf(*die);
  Dwarf_Die cu;
  std::string qualified;
  if (Dw().dwarf_diecu(&declaration, &cu, nullptr, nullptr) != nullptr) {
    AppendEnclosingScopes(&cu, Dw().dwarf_dieoffset(&declaration), 0, &qualified);
  }
  return qualified + name;
}

// A compile unit and an address translated into its DWARF address space (module address minus
// the DWARF bias). `cu` is null when no CU covers the address.
struct CuAddress {
  Dwarf_Die* cu = nullptr;
  Dwarf_Addr addr = 0;
};

// The CUs of one module by address range. libdwfl's own lookup (dwfl_module_addrdie) searches
// .debug_aranges only, which clang does not emit by default; this index covers that case from the
// CUs' DW_AT_low_pc/high_pc/ranges. Built on first use, then immutable.
class CuIndex {
 public:
  CuAddress Find(Dwfl_Module* module, Dwarf_Addr addr);

 private:
  // [low, high) in DWARF addresses. CU DIEs are owned by libdwfl and live as long as the module.
  struct Range {
    Dwarf_Addr low;
    Dwarf_Addr high;
    Dwarf_Die* cu;
  };
  void Build(Dwfl_Module* module);

  bool built_ = false;
  Dwarf_Addr bias_ = 0;
  std::vector<Range> ranges_;  // Sorted by low.
};

CuAddress CuIndex::Find(Dwfl_Module* module, Dwarf_Addr addr) {
  Dwarf_Addr bias = 0;
  if (Dwarf_Die* cu = Dw().dwfl_module_addrdie(module, addr, &bias)) return {cu, addr - bias};
  if (!built_) Build(module);
  Dwarf_Addr dwarf_addr = addr - bias_;
  auto after = std::upper_bound(ranges_.begin(), ranges_.end(), dwarf_addr,
                                [](Dwarf_Addr a, const Range& range) { return a < range.low; });
  if (after == ranges_.begin() || dwarf_addr >= std::prev(after)->high) return {};
  return {std::prev(after)->cu, dwarf_addr};
}

void CuIndex::Build(Dwfl_Module* module) {
  built_ = true;
  Dwarf_Die* cu = nullptr;
  Dwarf_Addr bias = 0;
  while ((cu = Dw().dwfl_module_nextcu(module, cu, &bias)) != nullptr) {
    bias_ = bias;  // One Dwarf per module, so one bias for all its CUs.
    Dwarf_Addr base = 0;
    Dwarf_Addr low = 0;
    Dwarf_Addr high = 0;
    for (ptrdiff_t next = 0; (next = Dw().dwarf_ranges(cu, next, &base, &low, &high)) > 0;) {
      if (low < high) ranges_.push_back({low, high, cu});
    }
  }
  std::sort(ranges_.begin(), ranges_.end(),
            [](const Range& a, const Range& b) { return a.low < b.low; });
}

Location LineAt(const CuAddress& at) {
  if (at.cu == nullptr) return {};
  Dwarf_Line* row = Dw().dwarf_getsrc_die(at.cu, at.addr);
  if (row == nullptr) return {};
  int line = 0;
  const char* file = Dw().dwarf_linesrc(row, nullptr, nullptr);
  // Line 0 marks compiler-generated code: no source position.
  if (Dw().dwarf_lineno(row, &line) != 0 || line <= 0 || file == nullptr) return {};
  return {file, line};
}

// Where an inlined subroutine was called from, in the enclosing scope's source.
Location CallSite(Dwarf_Die* inlined) {
  Location site;
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (Dw().dwarf_formudata(Dw().dwarf_attr(inlined, DW_AT_call_line, &attr), &value) != 0 ||
      value == 0 || value > INT_MAX) {
    return {};
  }
  site.line = static_cast<int>(value);
  Dwarf_Die cu;
  Dwarf_Files* files = nullptr;
  const char* file = nullptr;
  if (Dw().dwarf_formudata(Dw().dwarf_attr(inlined, DW_AT_call_file, &attr), &value) == 0 &&
      Dw().dwarf_diecu(inlined, &cu, nullptr, nullptr) != nullptr &&
      Dw().dwarf_getsrcfiles(&cu, &files, nullptr) == 0) {
    file = Dw().dwarf_filesrc(files, value, nullptr, nullptr);
  }
  if (file == nullptr) return {};
  site.file = file;
  return site;
}

// DIEs that carry code addresses and may nest more of them.
bool IsCodeScope(int tag) {
  switch (tag) {
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block:
    case DW_TAG_try_block:
    case DW_TAG_catch_block:
    case DW_TAG_with_stmt:
    case DW_TAG_entry_point:
      return true;
    default:
      return false;
  }
}

// DIEs without addresses that may own code scopes.
bool MayOwnCodeScopes(int tag) {
  switch (tag) {
    case DW_TAG_namespace:
    case DW_TAG_module:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
      return true;
    default:
      return false;
  }
}

// Appends to *chain the code scopes under `parent` that contain `addr`, outermost first, each
// the parent of the next: the physical nesting, in which an inlined_subroutine sits inside the
// scope it was inlined into. Returns whether any scope was found. (dwarf_getscopes is not used:
// in elfutils 0.188 it finds no scope for some clang-built inlined code, and leaks its partial
// result when that happens.)
bool FindCodeScopes(Dwarf_Die* parent, Dwarf_Addr addr, int depth, std::vector<Dwarf_Die>* chain) {
  Dwarf_Die child;
  if (depth >= kMaxScopeDepth || Dw().dwarf_child(parent, &child) != 0) return false;
  do {
    int tag = Dw().dwarf_tag(&child);
    if (IsCodeScope(tag) && Dw().dwarf_haspc(&child, addr) > 0) {
      chain->push_back(child);  // `child` stays valid: chain may reallocate.
      FindCodeScopes(&child, addr, depth + 1, chain);
      return true;
    }
    if (MayOwnCodeScopes(tag) && FindCodeScopes(&child, addr, depth + 1, chain)) return true;
  } while (Dw().dwarf_siblingof(&child, &child) == 0);
  return false;
}

// Frames from DWARF, innermost first, ending with the containing DW_TAG_subprogram. Empty when
// no CU covers the address or no subprogram encloses it.
std::vector<SourceFrame> DwarfFrames(const CuAddress& at) {
  std::vector<Dwarf_Die> chain;
  if (at.cu == nullptr || !FindCodeScopes(at.cu, at.addr, 0, &chain)) return {};
  std::vector<SourceFrame> frames;
  Location position = LineAt(at);  // Position inside the current (innermost) scope.
  for (auto scope = chain.rbegin(); scope != chain.rend(); ++scope) {
    int tag = Dw().dwarf_tag(&*scope);
    if (tag == DW_TAG_inlined_subroutine) {
      frames.push_back({DieFunctionName(&*scope), position.file, position.line, true});
      position = CallSite(&*scope);
    } else if (tag == DW_TAG_subprogram) {
      frames.push_back({DieFunctionName(&*scope), position.file, position.line, false});
      return frames;
    }
  }
  return {};
}

// One frame named from .symtab (or .dynsym when stripped), at `position`.
std::optional<SourceFrame> SymbolTableFrame(Dwfl_Module* module, Dwarf_Addr addr,
                                            const Location& position) {
  GElf_Off offset = 0;
  GElf_Sym symbol;
  GElf_Word section = 0;
  Elf* elf = nullptr;
  Dwarf_Addr bias = 0;
  const char* name =
      Dw().dwfl_module_addrinfo(module, addr, &offset, &symbol, &section, &elf, &bias);
  if (name == nullptr || name[0] == '\0') return std::nullopt;
  return SourceFrame{Demangle(name), position.file, position.line, false};
}

bool ModuleContains(Dwfl_Module* module, Dwarf_Addr addr) {
  Dwarf_Addr low = 0;
  Dwarf_Addr high = 0;
  Dw().dwfl_module_info(module, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
  return low <= addr && addr < high;
}

// DWARF frames when DWARF names the containing function; otherwise the symbol table names it
// (the whole result, or just the outermost DWARF frame's missing name).
std::vector<SourceFrame> Resolve(Dwfl_Module* module, CuIndex& cus, Dwarf_Addr addr) {
  if (!ModuleContains(module, addr)) return {};
  CuAddress at = cus.Find(module, addr);
  std::vector<SourceFrame> frames = DwarfFrames(at);
  if (!frames.empty() && !frames.back().function.empty()) return frames;
  std::optional<SourceFrame> symbol = SymbolTableFrame(module, addr, LineAt(at));
  if (!symbol) return frames;
  if (frames.empty()) return {std::move(*symbol)};
  frames.back().function = std::move(symbol->function);
  return frames;
}

// Reports `path` alone into a fresh offline Dwfl at base 0 with p_vaddr added, so module
// addresses equal the file's own virtual addresses (bias 0) for ET_EXEC and ET_DYN alike.
// Returns null, and leaves *module null, when the file cannot be opened as ELF. The file is opened
// by reader/InputFile, so a FIFO or device named by a module map is refused (*refusal says why)
// instead of blocking or being read without end; a missing file is refused silently.
DwflPtr ReportElf(const std::string& path, Dwfl_Module** module, std::string* refusal) {
  *module = nullptr;
  std::optional<InputFile> file;
  try {
    file = InputFile::Open(path, path, InputFile::Links::kFollow);
  } catch (const RecordingError& e) {
    *refusal = e.what();
  }
  if (!file || elfutils::Libdw() == nullptr) return nullptr;
  DwflPtr dwfl(Dw().dwfl_begin(OfflineCallbacks()));
  if (dwfl == nullptr) return nullptr;
  // libdwfl consumes the descriptor it is given on success only.
  int fd = dup(file->fd());
  if (fd < 0) return nullptr;
  Dw().dwfl_report_begin(dwfl.get());
  Dwfl_Module* reported = Dw().dwfl_report_elf(dwfl.get(), path.c_str(), path.c_str(), fd,
                                               /*base=*/0, /*add_p_vaddr=*/true);
  if (reported == nullptr) close(fd);
  if (Dw().dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0 || reported == nullptr)
    return nullptr;
  *module = reported;
  return dwfl;
}

// The build-id of the file libdwfl opened, as frames carry it ("" when it has none).
std::string FileBuildId(Dwfl_Module* module) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  int length = Dw().dwfl_module_build_id(module, &bits, &vaddr);
  uint8_t bytes[format::kMaxBuildId] = {};
  if (length <= 0 || static_cast<size_t>(length) > sizeof(bytes)) return "";
  std::copy(bits, bits + length, bytes);
  return BuildIdHex(bytes, static_cast<uint32_t>(length));
}

}  // namespace

// Invariant: `module` is non-null iff `dwfl` is, and `module` belongs to `dwfl`. The memos
// outlive CloseFiles(); `opened` says whether the file was opened since (null `module` then: it
// failed, and is not retried). `build_id` is the opened file's (FileBuildId).
struct Symbolizer::Module {
  DwflPtr dwfl;
  Dwfl_Module* module = nullptr;
  CuIndex cus;
  bool opened = false;
  std::string build_id;
  std::unordered_map<uint64_t, std::vector<SourceFrame>> results;  // Keyed by ELF vaddr.
  std::unordered_map<uint64_t, std::optional<Symbol>> symbols;     // SymbolAt, by ELF vaddr.
};

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;

Symbolizer::Module& Symbolizer::MemoFor(const std::string& elf_path) {
  auto [it, inserted] = modules_.try_emplace(elf_path);
  if (inserted) it->second = std::make_unique<Module>();
  return *it->second;
}

Symbolizer::Module& Symbolizer::ModuleFor(const std::string& elf_path) {
  Module& module = MemoFor(elf_path);
  if (!module.opened) {
    module.opened = true;
    std::string refusal;
    module.dwfl = ReportElf(elf_path, &module.module, &refusal);
    if (!refusal.empty()) refused_.push_back(std::move(refusal));
    if (module.module != nullptr) module.build_id = FileBuildId(module.module);
  }
  return module;
}

void Symbolizer::ShareResults(const std::string& dir) {
  if (dir.empty()) {
    shared_.reset();
  } else if (shared_ == nullptr || shared_->dir() != dir) {
    shared_ = std::make_unique<SymbolCache>(dir);
  }
}

void Symbolizer::CloseFiles() {
  if (shared_ != nullptr) shared_->CloseFiles();
  for (auto& [path, module] : modules_) {
    if (module->module == nullptr) continue;  // never opened, or failed: stays so
    module->cus = CuIndex();
    module->module = nullptr;
    module->dwfl.reset();
    module->opened = false;
  }
}

std::vector<SourceFrame> Symbolizer::Symbolize(const std::string& elf_path, uint64_t elf_vaddr,
                                               const std::string& build_id) {
  Module& memo = MemoFor(elf_path);
  if (auto it = memo.results.find(elf_vaddr); it != memo.results.end()) return it->second;
  const bool shared = shared_ != nullptr && !build_id.empty();
  if (shared) {
    if (auto cached = shared_->Find(build_id, elf_vaddr)) {
      return memo.results[elf_vaddr] = std::move(*cached);
    }
  }
  Module& module = ModuleFor(elf_path);
  if (module.module == nullptr) return {};
  std::vector<SourceFrame>& result = module.results[elf_vaddr];
  result = Resolve(module.module, module.cus, elf_vaddr);
  ++computed_;
  // Only what this very build says: a file replaced since the program loaded it is not shared.
  if (shared && module.build_id == build_id) shared_->Add(build_id, elf_vaddr, result);
  return result;
}

}  // namespace heapgraph::report

namespace heapgraph::report {

bool FunctionNameMatches(std::string_view function, std::string_view name) {
  if (name.empty()) return false;
  if (function == name) return true;
  // The parameter list's '(': the first one that opens no "(anonymous namespace)".
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  size_t open = function.find('(');
  while (open != std::string_view::npos && function.substr(open).starts_with(kAnonymous)) {
    open = function.find('(', open + kAnonymous.size());
  }
  std::string_view bare = function.substr(0, open);
  if (bare == name) return true;
  return bare.size() > name.size() + 2 && bare.ends_with(name) &&
         bare.substr(bare.size() - name.size() - 2, 2) == "::";
}

namespace {

// The symbol-table symbol of `module` covering `elf_vaddr` (Symbolizer::SymbolAt, not memoized).
std::optional<Symbolizer::Symbol> SymbolOf(Dwfl_Module* module, uint64_t elf_vaddr) {
  if (!ModuleContains(module, elf_vaddr)) return std::nullopt;
  GElf_Off offset = 0;
  GElf_Sym symbol;
  GElf_Word section = 0;
  Elf* elf = nullptr;
  Dwarf_Addr bias = 0;
  const char* name =
      Dw().dwfl_module_addrinfo(module, elf_vaddr, &offset, &symbol, &section, &elf, &bias);
  if (name == nullptr || name[0] == '\0') return std::nullopt;
  return Symbolizer::Symbol{Demangle(name), offset};
}

}  // namespace

std::optional<Symbolizer::Symbol> Symbolizer::SymbolAt(const std::string& elf_path,
                                                       uint64_t elf_vaddr) {
  Module& memo = MemoFor(elf_path);
  if (auto it = memo.symbols.find(elf_vaddr); it != memo.symbols.end()) return it->second;
  Module& module = ModuleFor(elf_path);
  if (module.module == nullptr) return std::nullopt;
  std::optional<Symbol> symbol = SymbolOf(module.module, elf_vaddr);
  module.symbols.emplace(elf_vaddr, symbol);
  return symbol;
}

std::vector<std::pair<uint64_t, uint64_t>> Symbolizer::FunctionRanges(const std::string& elf_path,
                                                                      const std::string& name) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  Module& module = ModuleFor(elf_path);
  if (module.module == nullptr) return ranges;
  std::string_view last = name;
  if (size_t colon = last.rfind("::"); colon != std::string_view::npos)
    last.remove_prefix(colon + 2);
  int count = Dw().dwfl_module_getsymtab(module.module);
  for (int i = 1; i < count; ++i) {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    GElf_Word section = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* symbol_name =
        Dw().dwfl_module_getsym_info(module.module, i, &symbol, &address, &section, &elf, &bias);
    if (symbol_name == nullptr || GELF_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_size == 0 ||
        section == SHN_UNDEF) {
      continue;
    }
    // Cheap test first: the mangled name holds the bare name (C++: as a length-prefixed part).
    if (std::string_view(symbol_name).find(last) == std::string_view::npos) continue;
    if (!FunctionNameMatches(Demangle(symbol_name), name)) continue;
    std::pair<uint64_t, uint64_t> range{address, address + symbol.st_size};
    if (std::find(ranges.begin(), ranges.end(), range) == ranges.end()) ranges.push_back(range);
  }
  return ranges;
}

}  // namespace heapgraph::report
