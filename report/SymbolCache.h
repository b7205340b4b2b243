// report/: the Symbolizer's results kept in a directory that the processes of one run share
// (option symbol_cache; `heapgraph run` makes one per run), so that a process whose leak report
// needs an address another process already symbolized does not open that module's debug
// information again. With a distribution's debug package (libc6-dbg: compressed DWARF) that
// opening is tens of milliseconds of decompression in every process that reports a leak, and every
// leak stack of a C or C++ program ends in libc (docs/performance.md, "Session 18").
//
// The directory may also outlive a run (`heapgraph run` keeps one in the user's cache directory,
// docs/leak-scan.md): what a module's frames say depends on its debug file too, so a file is named
// after the build-id and the state of the debug file the standard search finds by that build-id
// (DEBUG_ROOT/.build-id/xx/yyyy.debug: its size and modification time, or none). Results computed
// before a debug package was installed, replaced or removed are then never served after it.
//
// Contract: one file per module build-id and debug file state, DIR/<build-id in lower-case
// hex>.<state> (state "n": no debug file; "d<size>-<mtime ns>", both hex), holding records
// "ELF address -> source frames" that any process appends and every process reads. Find returns
// only frames some Symbolizer computed for that build-id and address: each record carries its
// length and an FNV-1a check, and the first record that fails them (one cut short by a kill or a
// full disk) ends the reading of its file. Add keeps its records in memory and appends them with
// one write(2) on an O_APPEND descriptor (at CloseFiles, at the end, or once 64 KiB are pending),
// so records of concurrent processes never interleave. Records are never rewritten;
// two processes that miss the same address both append, and the first record read wins (they
// hold the same frames). A file is read once (at the first Find of its build-id): what other
// processes append later is not seen by this object. Never throws, never blocks on a FIFO: a
// missing or unusable directory or file is a cache that finds nothing and keeps nothing. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "report/SourceFrame.h"

namespace heapgraph::report {

class SymbolCache {
 public:
  // The frames of each address, as one file's records give them (the first record of an address).
  using Records = std::unordered_map<uint64_t, std::vector<SourceFrame>>;

  // A file larger than this is not read, nor appended to: the cache of a run stays bounded.
  static constexpr uint64_t kMaxFileBytes = uint64_t{16} << 20;

  // `dir` is made (0700, one level) at the first Add if it does not exist. `debug_root`: where
  // the debug files' .build-id tree is (elfutils' default; tests give another).
  explicit SymbolCache(std::string dir, std::string debug_root = "/usr/lib/debug");
  ~SymbolCache();
  SymbolCache(const SymbolCache&) = delete;
  SymbolCache& operator=(const SymbolCache&) = delete;

  const std::string& dir() const { return dir_; }

  // `build_id`: lower-case hex, as frames carry it; anything else (empty, other characters, longer
  // than a build-id) finds nothing and keeps nothing.
  std::optional<std::vector<SourceFrame>> Find(const std::string& build_id, uint64_t elf_vaddr);
  void Add(const std::string& build_id, uint64_t elf_vaddr, const std::vector<SourceFrame>& frames);

  // Appends the pending records and closes the descriptors kept for appending; what was read
  // stays. (A check calls it when it ends: other processes see its records from then on.)
  void CloseFiles();

  // One file's bytes as records, up to the first that fails its check (fuzzed).
  static Records Parse(std::string_view bytes);
  // The bytes of one record.
  static std::string Encode(uint64_t elf_vaddr, const std::vector<SourceFrame>& frames);

 private:
  struct File {
    std::string name;  // in dir_: the build-id and its debug file's state (FileName)
    Records records;
    std::string pending;  // encoded records not written yet
    int fd = -1;          // O_APPEND, opened by the first write after a read or a CloseFiles
    uint64_t bytes = 0;   // the file's size as last known, plus `pending`
  };
  std::string FileName(const std::string& build_id) const;
  File& Load(const std::string& build_id);
  void Write(const std::string& build_id, File& file);

  std::string dir_;
  std::string debug_root_;
  std::unordered_map<std::string, File> files_;
};

}  // namespace heapgraph::report
