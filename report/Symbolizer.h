#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "report/SourceFrame.h"

namespace heapgraph::report {

class SymbolCache;

// Maps addresses inside ELF files on disk to functions, files and lines using elfutils (libdwfl)
// in offline mode: nothing is attached to a live process. Separate debug info is found through the
// standard elfutils search (build-id under /usr/lib/debug/.build-id, .gnu_debuglink; debuginfod
// only when DEBUGINFOD_URLS is set in the environment). A file may also be a separate debug file
// itself (objcopy --only-keep-debug keeps the program headers, symbols and DWARF): `heapgraph
// report` symbolizes the ones report/DebugFileSearch finds for a build-id (FrameResymbolizer).
//
// Module files are opened through reader/InputFile (regular files only, links followed, never
// blocking). Every file is opened once and kept open until CloseFiles() or the Symbolizer's end;
// every (file, address) result of Symbolize and SymbolAt is memoized, also across CloseFiles(), so
// repeated addresses are cheap and a Symbolizer kept between checks opens a file again only for
// an address it has not seen. Not thread-safe: use one per thread.
// Whether demangled function name `function` is what a user means by `name`: equal to it, or
// equal once its parameter list is cut (at the first '(' that opens no "(anonymous namespace)"),
// or ending in "::" + `name` then (a C++ name given without its namespace or class).
bool FunctionNameMatches(std::string_view function, std::string_view name);

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // `elf_vaddr` is the ELF's own virtual address: runtime address minus the module's load bias.
  // The address is used exactly as given. For a return address taken from a stack, the caller
  // passes (return address - 1) so that the call instruction, not the one after it, is found.
  //
  // Returns frames innermost first: inlined callees first (inlined=true), each carrying the
  // position inside it; the containing out-of-line function last (inlined=false). C++ names are
  // demangled. Names come from DWARF when present, else from .symtab/.dynsym (then one frame,
  // with a line only if a line table still covers the address). Empty when the file is missing,
  // unreadable or not ELF, or nothing (DWARF or symbol) covers the address.
  //
  // `build_id` (lower-case hex; "" when unknown) is the build-id of the module the address was
  // recorded in. With ShareResults, the result is looked up in the shared cache first, and a result
  // computed from a file with exactly that build-id is added to it.
  std::vector<SourceFrame> Symbolize(const std::string& elf_path, uint64_t elf_vaddr,
                                     const std::string& build_id = {});

  // Shares Symbolize's results with the other processes of one run through directory `dir`
  // (report/SymbolCache; "" = stop sharing). Results are the same with or without it.
  void ShareResults(const std::string& dir);

  // The symbol-table symbol (.symtab, else .dynsym) covering `elf_vaddr`, of any type (a global
  // variable's too): its demangled name and the address's offset into it. Empty when none does.
  struct Symbol {
    std::string name;
    uint64_t offset = 0;
  };
  std::optional<Symbol> SymbolAt(const std::string& elf_path, uint64_t elf_vaddr);

  // The ELF vaddr ranges [begin, end) of the function symbols of `elf_path` named `name`
  // (FunctionNameMatches). Not memoized: each call reads the whole symbol table.
  std::vector<std::pair<uint64_t, uint64_t>> FunctionRanges(const std::string& elf_path,
                                                            const std::string& name);

  // Closes every module file (and frees its debug information) and the shared cache's files; the
  // memoized results stay. A file that could not be opened is not tried again.
  void CloseFiles();

  // How many (file, address) results were computed so far, i.e. Symbolize() calls that missed the
  // memo (a file that could not be opened computes none).
  size_t computed() const { return computed_; }

  // One line per module file that exists but was refused ("<path>: not a regular file (a FIFO,
  // refused)", reader/InputFile): its addresses keep module + offset. Missing files are not listed.
  const std::vector<std::string>& refused() const { return refused_; }

 private:
  struct Module;

  // Opens `elf_path` on first use. A file that failed to open is remembered (as a Module with a
  // null Dwfl_Module), so it is not retried.
  Module& ModuleFor(const std::string& elf_path);
  // The memo of `elf_path`, without opening it.
  Module& MemoFor(const std::string& elf_path);

  std::unordered_map<std::string, std::unique_ptr<Module>> modules_;
  std::unique_ptr<SymbolCache> shared_;  // null: not sharing
  size_t computed_ = 0;
  std::vector<std::string> refused_;
};

}  // namespace heapgraph::report
