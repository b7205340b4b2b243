#include "reader/PressureTimeline.h"

#include <cstring>
#include <optional>
#include <utility>

#include "reader/FileHeaderCheck.h"
#include "reader/InputFile.h"
#include "reader/RecordingError.h"

namespace heapgraph {
namespace {

constexpr uint64_t kMaxCategories = (uint64_t{1} << 16) + 2;  // CategoryTotals' table

}  // namespace

PressureTimeline::PressureTimeline(const std::string& directory) {
  std::optional<InputFile> file =
      InputFile::Open(directory + "/" + format::kPressureFile, format::kPressureFile);
  if (!file) return;
  present_ = true;
  Parse(file->ReadAll(kMaxFileSize));
}

PressureTimeline::PressureTimeline(const format::PressureHeader& header,
                                   std::vector<PressureEntry> entries, bool truncated)
    : present_(true), truncated_(truncated), header_(header), entries_(std::move(entries)) {}

void PressureTimeline::Parse(const std::string& bytes) {
  ReadFileHeader(bytes, format::kPressureFile, format::kPressureMagic, &header_);
  if (header_.record_size != sizeof(format::PressureRecord) ||
      header_.category_size != sizeof(format::CategoryTotal) ||
      header_.watermark_count > format::kMaxWatermarks) {
    throw RecordingError(format::kPressureFile, "corrupt header");
  }
  header_.cgroup_dir[sizeof(header_.cgroup_dir) - 1] = '\0';
  size_t at = header_.file.header_size;
  while (at < bytes.size()) {
    PressureEntry e;
    if (bytes.size() - at < sizeof(e.record)) {
      truncated_ = true;
      return;
    }
    memcpy(&e.record, bytes.data() + at, sizeof(e.record));
    if (e.record.tag != format::kPressureRecordTag) {
      throw RecordingError(format::kPressureFile,
                           "corrupt entry at offset " + std::to_string(at) + " (bad tag)");
    }
    if (e.record.category_count > kMaxCategories) {
      throw RecordingError(format::kPressureFile,
                           "corrupt entry at offset " + std::to_string(at) + " (category_count " +
                               std::to_string(e.record.category_count) + ")");
    }
    at += sizeof(e.record);
    size_t length = e.record.category_count * sizeof(format::CategoryTotal);
    if (bytes.size() - at < length) {
      truncated_ = true;
      return;
    }
    e.categories.resize(e.record.category_count);
    if (length != 0) memcpy(e.categories.data(), bytes.data() + at, length);
    at += length;
    entries_.push_back(std::move(e));
  }
}

}  // namespace heapgraph
