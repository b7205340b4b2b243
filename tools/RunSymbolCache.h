// tools/: the directory where the at-exit checks of `heapgraph run`'s processes share the
// addresses they symbolized (option symbol_cache, report/SymbolCache). It is the user's cache,
// kept from one run to the next: $XDG_CACHE_HOME/heapgraph/symbols, else
// $HOME/.cache/heapgraph/symbols. A run whose processes leak symbolizes their stacks, which all
// end in libc, and opening libc's debug information is tens of milliseconds of decompression with
// Debian's libc6-dbg: once per run with a per-run cache, once per machine with this one
// (docs/performance.md, session 20). SymbolCache names its files after each module's build-id and
// the state of its debug file, so results never outlive the debug files they came from.
// Falls back to a directory of the run's own, in the recording root and removed when the run ends,
// when debuginfod servers are named (their answers may change), when neither variable gives an
// absolute path, or when the directory is not one only this user can write (0700, owned by the
// effective user, no symbolic link). The user's cache is pruned at most once a day: files not
// written for 30 days are removed.
#pragma once

#include <string>

namespace heapgraph::tools {

class RunSymbolCache {
 public:
  // `root`: the run's recording root, a valid option value (OptionsPath), for the fallback.
  explicit RunSymbolCache(const std::string& root);
  ~RunSymbolCache();
  RunSymbolCache(const RunSymbolCache&) = delete;
  RunSymbolCache& operator=(const RunSymbolCache&) = delete;

  // The option value; "" when no directory could be had: every check then symbolizes alone.
  const std::string& option() const { return option_; }
  // Whether it is the user's cache (kept) rather than the run's own (removed at the end).
  bool kept() const { return kept_; }

  // The user's cache directory as the environment names it; "" when it gives none.
  static std::string UserDirectory();

 private:
  std::string path_;
  std::string option_;
  bool kept_ = false;
};

}  // namespace heapgraph::tools
