#include "reader/TypesFile.h"

#include <algorithm>
#include <cstring>

#include "reader/InputFile.h"
#include "reader/RecordingError.h"

namespace heapgraph {
namespace {

constexpr uint64_t kMaxNames = 1u << 20;

uint64_t Product(uint64_t count, uint64_t size, const char* what) {
  uint64_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes))
    throw RecordingError(format::kTypesFile, std::string("corrupt ") + what + " count");
  return bytes;
}

}  // namespace

std::optional<TypesFile> TypesFile::Read(const std::string& directory) {
  std::optional<InputFile> f =
      InputFile::Open(directory + "/" + format::kTypesFile, format::kTypesFile);
  if (!f) return std::nullopt;
  uint64_t size = f->size();
  format::TypesHeader h;
  f->ReadAt(0, &h, sizeof(h), "header");
  if (memcmp(h.file.magic, format::kTypesMagic, 8) != 0)
    throw RecordingError(format::kTypesFile, "not a heapgraph types file");
  if (h.file.version != format::kVersion) {
    throw RecordingError(format::kTypesFile,
                         "unsupported format version " + std::to_string(h.file.version));
  }
  if (h.file.header_size < sizeof(h) || h.record_size != sizeof(format::TypeRecord)) {
    throw RecordingError(format::kTypesFile, "corrupt header");
  }
  if (h.name_count > kMaxNames || h.strings_size > size)
    throw RecordingError(format::kTypesFile, "corrupt header (counts)");
  uint64_t names_bytes = Product(h.name_count, sizeof(format::TypeName), "name");
  f->CheckExtent(h.names_offset, names_bytes, "names");
  f->CheckExtent(h.strings_offset, h.strings_size, "strings");
  if (h.record_count > size / sizeof(format::TypeRecord))
    throw RecordingError(format::kTypesFile, "corrupt header (record_count)");
  uint64_t records_bytes = Product(h.record_count, sizeof(format::TypeRecord), "record");
  f->CheckExtent(h.records_offset, records_bytes, "records");
  std::vector<format::TypeName> entries(h.name_count);
  f->ReadAt(h.names_offset, entries.data(), names_bytes, "names");
  std::string strings(h.strings_size, '\0');
  f->ReadAt(h.strings_offset, strings.data(), h.strings_size, "strings");
  TypesFile types;
  types.records_.resize(h.record_count);
  f->ReadAt(h.records_offset, types.records_.data(), records_bytes, "records");
  for (const format::TypeName& e : entries) {
    if (e.length > format::kMaxTypeNameLength || uint64_t{e.offset} + e.length > strings.size()) {
      throw RecordingError(format::kTypesFile, "corrupt type name entry");
    }
    types.names_.emplace_back(strings, e.offset, e.length);
  }
  for (const format::TypeRecord& r : types.records_) {
    if (r.type >= types.names_.size())
      throw RecordingError(format::kTypesFile,
                           "corrupt record (type " + std::to_string(r.type) + ")");
  }
  std::sort(types.records_.begin(), types.records_.end(), [](const auto& a, const auto& b) {
    return a.address != b.address ? a.address < b.address : a.seq < b.seq;
  });
  return types;
}

const std::string* TypesFile::TypeOf(uint64_t address, uint32_t seq) const {
  auto it = std::lower_bound(records_.begin(), records_.end(), address,
                             [](const format::TypeRecord& r, uint64_t a) { return r.address < a; });
  for (; it != records_.end() && it->address == address; ++it) {
    if (it->seq == seq) return &names_[it->type];
  }
  return nullptr;
}

}  // namespace heapgraph
