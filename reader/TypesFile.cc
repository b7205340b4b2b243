#include "reader/TypesFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "reader/RecordingReader.h"

namespace heapgraph {
namespace {

constexpr uint64_t kMaxNames = 1u << 20;

[[noreturn]] void Fail(const std::string& problem) {
  throw RecordingError(std::string(format::kTypesFile) + ": " + problem);
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

void ReadAt(int fd, uint64_t file_size, uint64_t offset, void* out, uint64_t length,
            const char* what) {
  uint64_t end;
  if (__builtin_add_overflow(offset, length, &end) || end > file_size) {
    Fail(std::string("truncated (") + what + " ends past the file's " + std::to_string(file_size) +
         " bytes)");
  }
  auto* bytes = static_cast<char*>(out);
  while (length > 0) {
    ssize_t n = pread(fd, bytes, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Fail("read failed");
    bytes += n;
    offset += static_cast<uint64_t>(n);
    length -= static_cast<uint64_t>(n);
  }
}

uint64_t Product(uint64_t count, uint64_t size, const char* what) {
  uint64_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) Fail(std::string("corrupt ") + what + " count");
  return bytes;
}

}  // namespace

std::optional<TypesFile> TypesFile::Read(const std::string& directory) {
  Fd f;
  f.fd = open((directory + "/" + format::kTypesFile).c_str(),
              O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (f.fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    Fail(std::string("cannot open (") + strerror(errno) + ")");
  }
  struct stat st;
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) Fail("not a regular file");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  format::TypesHeader h;
  ReadAt(f.fd, size, 0, &h, sizeof(h), "header");
  if (memcmp(h.file.magic, format::kTypesMagic, 8) != 0) Fail("not a heapgraph types file");
  if (h.file.version != format::kVersion) {
    Fail("unsupported format version " + std::to_string(h.file.version));
  }
  if (h.file.header_size < sizeof(h) || h.record_size != sizeof(format::TypeRecord)) {
    Fail("corrupt header");
  }
  if (h.name_count > kMaxNames || h.strings_size > size) Fail("corrupt header (counts)");
  std::vector<format::TypeName> entries(h.name_count);
  ReadAt(f.fd, size, h.names_offset, entries.data(),
         Product(h.name_count, sizeof(format::TypeName), "name"), "names");
  std::string strings(h.strings_size, '\0');
  ReadAt(f.fd, size, h.strings_offset, strings.data(), h.strings_size, "strings");
  if (h.record_count > size / sizeof(format::TypeRecord)) Fail("corrupt header (record_count)");
  TypesFile types;
  types.records_.resize(h.record_count);
  ReadAt(f.fd, size, h.records_offset, types.records_.data(),
         Product(h.record_count, sizeof(format::TypeRecord), "record"), "records");
  for (const format::TypeName& e : entries) {
    if (e.length > format::kMaxTypeNameLength || uint64_t{e.offset} + e.length > strings.size()) {
      Fail("corrupt type name entry");
    }
    types.names_.emplace_back(strings, e.offset, e.length);
  }
  for (const format::TypeRecord& r : types.records_) {
    if (r.type >= types.names_.size()) Fail("corrupt record (type " + std::to_string(r.type) + ")");
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
