#include "reader/LagRecords.h"

#include <cstring>
#include <optional>

#include "reader/FileHeaderCheck.h"
#include "reader/InputFile.h"
#include "reader/RecordingError.h"

namespace heapgraph {

LagRecords::LagRecords(const std::string& directory) {
  std::optional<InputFile> file =
      InputFile::Open(directory + "/" + format::kLagFile, format::kLagFile);
  if (!file) return;
  present_ = true;
  Parse(file->ReadAll(kMaxFileSize));
}

void LagRecords::Parse(const std::string& bytes) {
  ReadFileHeader(bytes, format::kLagFile, format::kLagMagic, &header_);
  if (header_.record_size != sizeof(format::LagRecord))
    throw RecordingError(format::kLagFile, "corrupt header");
  for (size_t at = header_.file.header_size; at < bytes.size(); at += sizeof(format::LagRecord)) {
    format::LagRecord r;
    if (bytes.size() - at < sizeof(r)) {
      torn_ = true;
      return;
    }
    memcpy(&r, bytes.data() + at, sizeof(r));
    if (r.tag != format::kLagRecordTag || r.check != format::LagCheck(r) ||
        r.sample_count > format::kMaxLagSamples) {
      torn_ = true;
      return;
    }
    records_.push_back(r);
  }
}

const format::LagRecord* LagRecords::InProgress() const {
  const format::LagRecord* open = nullptr;
  for (const format::LagRecord& r : records_) {
    if (r.kind == format::kLagLong) {
      open = &r;
    } else if (r.kind == format::kLagEnded && open != nullptr && open->tid == r.tid &&
               open->unit == r.unit) {
      open = nullptr;
    }
  }
  return open;
}

}  // namespace heapgraph
