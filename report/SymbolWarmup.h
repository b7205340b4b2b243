// report/: symbolizes a recording's return addresses while the snapshot process marks, so the
// leak report finds its stacks' symbols ready. May include heap/ (the reader) and report/.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "reader/RecordingReader.h"
#include "report/Symbolizer.h"

namespace heapgraph::report {

// Owns the leak check's RecordingReader and Symbolizer. Run() is the scan's while_marking callback
// (scanner::ScanOptions): it opens the recording (stacks and modules) and symbolizes every distinct
// recorded return address, as StackResolver would, until the marking is done. Invariant: the
// Symbolizer only memoizes results, so a report resolved through a warmed Symbolizer is identical
// to one resolved through a fresh one; the warm-up only moves work earlier.
class SymbolWarmup {
 public:
  // With a Symbolizer of its own.
  SymbolWarmup() : own_(std::make_unique<Symbolizer>()), symbolizer_(*own_) {}
  // With `shared`, e.g. one kept from check to check (its memo is the warm-up of the next check).
  explicit SymbolWarmup(Symbolizer& shared) : symbolizer_(shared) {}
  SymbolWarmup(const SymbolWarmup&) = delete;
  SymbolWarmup& operator=(const SymbolWarmup&) = delete;

  // Never throws: a recording it cannot read is left for Reader() to report.
  void Run(const std::string& recording_dir, const std::function<bool()>& marking_done);

  // The reader Run() opened on `recording_dir`, else a new one (kStacksAndModules); throws
  // RecordingError as RecordingReader does.
  // `open_files`: the recording's files already open (RecordingReader), for a new reader.
  const RecordingReader& Reader(const std::string& recording_dir,
                                const RecordingReader::OpenFiles& open_files = {});
  Symbolizer& symbolizer() { return symbolizer_; }

  // How many return addresses Run() symbolized, and whether it got through all of them.
  size_t warmed() const { return warmed_; }
  bool complete() const { return complete_; }

 private:
  std::optional<RecordingReader> reader_;
  std::unique_ptr<Symbolizer> own_;
  Symbolizer& symbolizer_;
  size_t warmed_ = 0;
  bool complete_ = false;
};

}  // namespace heapgraph::report
