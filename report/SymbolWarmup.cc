#include "report/SymbolWarmup.h"

#include <exception>
#include <vector>

#include "report/StackResolver.h"

namespace heapgraph::report {

void SymbolWarmup::Run(const std::string& recording_dir,
                       const std::function<bool()>& marking_done) {
  try {
    reader_.emplace(recording_dir, RecordingReader::Content::kStacksAndModules);
    std::vector<uint64_t> addresses = reader_->ReturnAddresses(marking_done);
    StackResolver resolver(*reader_, symbolizer_);
    for (uint64_t address : addresses) {
      if (marking_done()) return;
      resolver.Warm(address);
      ++warmed_;
    }
    complete_ = true;
  } catch (const std::exception&) {
    reader_.reset();  // Reader() opens it again and reports the error
  }
}

const RecordingReader& SymbolWarmup::Reader(const std::string& recording_dir,
                                            const RecordingReader::OpenFiles& open_files) {
  if (!reader_ || reader_->directory() != recording_dir) {
    reader_.emplace(recording_dir, RecordingReader::Content::kStacksAndModules, open_files);
  }
  return *reader_;
}

}  // namespace heapgraph::report
