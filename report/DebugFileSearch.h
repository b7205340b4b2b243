// report/: which file holds the symbols of one recorded module when a saved report is rendered
// again, possibly on another machine than the recording: the module file itself only while it is
// still the build that ran, else a separate debug file found by the module's build-id.
//
// Contract: Find(module_path, build_id) returns the first of these candidates whose GNU build-id
// equals `build_id` (lower-case hex, as frames carry it):
//   1. for each debug dir, in order: DIR/.build-id/xx/rest.debug (xx = the build-id's first byte),
//      DIR/<basename>.debug, DIR/<basename>;
//   2. the system's debug tree: SYSTEM/.build-id/xx/rest.debug (SYSTEM is /usr/lib/debug);
//   3. `module_path` itself (then the Symbolizer's own libdwfl search may still add its separate
//      debug info: .gnu_debuglink, /usr/lib/debug, debuginfod);
//   4. when DEBUGINFOD_URLS is set and heapgraph was built with libdebuginfod: the debug file the
//      debuginfod servers have for the build-id (downloaded into libdebuginfod's cache,
//      DEBUGINFOD_CACHE_PATH).
// A candidate with another build-id is refused, once, with a warning line ("<path>: build-id <x>,
// the recording's <module> had <y>: its symbols are not used"), so a binary rebuilt since the
// recording never lends it wrong names. Without a recorded build-id nothing can be checked: only
// `module_path` is returned (as the recording's own symbolization does). nullopt when nothing fits.
// Files are opened through reader/InputFile (regular files only, links followed, never blocking);
// the build-id is read from the ELF notes by elfutils (dwelf_elf_gnu_build_id). Results are
// memoized per (module path, build-id). Not thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace heapgraph::report {

class DebugFileSearch {
 public:
  struct Options {
    std::vector<std::string> debug_dirs;        // --debug-dir, searched in this order
    std::string system_dir = "/usr/lib/debug";  // empty: not searched
    bool debuginfod = true;                     // false: never ask debuginfod servers
  };

  explicit DebugFileSearch(Options options);
  ~DebugFileSearch();
  DebugFileSearch(const DebugFileSearch&) = delete;
  DebugFileSearch& operator=(const DebugFileSearch&) = delete;

  std::optional<std::string> Find(const std::string& module_path, const std::string& build_id);

  // Whether this build can ask debuginfod servers: it was built with libdebuginfod's headers and
  // the library loads (on the first call).
  static bool DebuginfodAvailable();

  // One line per debug dir that is no directory and per refused candidate, in order of discovery.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  class Debuginfod;

  std::optional<std::string> Search(const std::string& module_path, const std::string& build_id);
  // Whether the ELF file at `path` exists and has build-id `build_id`; warns about a mismatch.
  bool Matches(const std::string& path, const std::string& module_path,
               const std::string& build_id);

  Options options_;
  std::unique_ptr<Debuginfod> debuginfod_;                             // created on the first use
  std::unordered_map<std::string, std::optional<std::string>> found_;  // "path\nbuild-id"
  // path -> its ElfBuildId; nullopt when the file is missing or refused (memo).
  std::unordered_map<std::string, std::optional<std::string>> build_ids_;
  std::unordered_set<std::string> warned_;  // candidates refused for their build-id, warned once
  std::vector<std::string> warnings_;
};

// Where the .build-id layout keeps the separate debug file of `build_id` (lower-case hex) below a
// debug directory: "/.build-id/xx/rest.debug", xx its first byte; "" for a build-id of one byte
// or none.
std::string BuildIdDebugPath(const std::string& build_id);

// The build-id of the ELF file at `path` as lower-case hex; "" when the file is missing, no ELF, or
// has no build-id note. Throws RecordingError when the path is no regular file.
std::string ElfBuildId(const std::string& path);

}  // namespace heapgraph::report
