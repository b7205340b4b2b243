// heap/: what the next start of a program does with the FOOM dumps its earlier runs left in the
// recording root: classifies each finished run of the same executable that has no `exit` file yet
// (ExitClassifier, written as <dir>/exit, mode 0600, via exit.tmp + rename), then removes the
// oldest finished runs of that executable beyond `keep`. Directories of running processes and of
// other executables are never touched. Runs on the recorder's tool thread, whose allocations are
// not recorded; libc only, no exceptions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heap/ExitClassifier.h"
#include "heap/LineBuffer.h"
#include "heap/PersistedFormat.h"

namespace heapgraph {

class DumpRetention {
 public:
  static constexpr size_t kMaxRuns = 512;  // directories considered per root

  // `own_name`: this process's directory (never classified or removed). `keep` 0: keep all.
  // Returns the number of directories removed.
  static size_t Run(int root_fd, const char* own_name, const char* executable, uint32_t keep);

  // The `exit` file text for a classification (docs/foom-report.md).
  static void Format(const ExitClassification& c, uint64_t realtime_ns, int classifier_pid,
                     LineBuffer* out);
  // Reads a session header (version 1 or 2) from `dir_fd`; false when missing or not a session.
  static bool ReadSession(int dir_fd, format::SessionHeader* out, bool* has_record);

 private:
  static bool WriteExitFile(int dir_fd, const ExitClassification& c);
  static bool RemoveDirectory(int root_fd, const char* name);
};

}  // namespace heapgraph
