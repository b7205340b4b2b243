#include "report/SymbolCache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <utility>

#include "heap/store/PersistedFormat.h"
#include "reader/InputFile.h"
#include "reader/RecordingError.h"
#include "report/DebugFileSearch.h"
#include "report/Fnv1a64.h"

namespace heapgraph::report {
namespace {

// A record: kMagic, the payload's length, the Fnv1a64 of the payload, then the payload: the
// address, the frame count, and per frame its line, inlined flag, function and file (each string
// a u32 length and its bytes). Native byte order: the cache never leaves the machine.
constexpr uint32_t kMagic = 0x59534748;  // "HGSY"
constexpr size_t kHeaderBytes = 16;
constexpr uint32_t kMaxRecordBytes = 64 << 10;
constexpr uint32_t kMaxFrames = 1024;
constexpr size_t kWriteBytes = 64 << 10;  // pending records written at once

uint64_t Check(std::string_view payload) {
  Fnv1a64 hash;
  hash.Add(payload);
  return hash.value();
}

template <typename T>
void Put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

void PutString(std::string& out, const std::string& text) {
  Put(out, static_cast<uint32_t>(text.size()));
  out += text;
}

// Reads the payload front to back; any read past its end fails the record.
class PayloadReader {
 public:
  explicit PayloadReader(std::string_view bytes) : rest_(bytes) {}

  template <typename T>
  bool Get(T* value) {
    if (rest_.size() < sizeof(T)) return false;
    std::memcpy(value, rest_.data(), sizeof(T));
    rest_.remove_prefix(sizeof(T));
    return true;
  }
  bool GetString(std::string* text) {
    uint32_t size = 0;
    if (!Get(&size) || rest_.size() < size) return false;
    text->assign(rest_.data(), size);
    rest_.remove_prefix(size);
    return true;
  }
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// One frame; false when it breaks SourceFrame's invariant (no file exactly when line 0).
bool GetFrame(PayloadReader& in, SourceFrame* frame) {
  uint32_t line = 0;
  uint8_t inlined = 0;
  if (!in.Get(&line) || !in.Get(&inlined) || !in.GetString(&frame->function) ||
      !in.GetString(&frame->file) || line > INT_MAX || inlined > 1 ||
      frame->file.empty() != (line == 0)) {
    return false;
  }
  frame->line = static_cast<int>(line);
  frame->inlined = inlined == 1;
  return true;
}

bool ParsePayload(std::string_view payload, uint64_t* vaddr, std::vector<SourceFrame>* frames) {
  PayloadReader in(payload);
  uint32_t count = 0;
  if (!in.Get(vaddr) || !in.Get(&count) || count > kMaxFrames) return false;
  frames->resize(count);
  for (SourceFrame& frame : *frames) {
    if (!GetFrame(in, &frame)) return false;
  }
  return in.done();
}

// A build-id as frames carry it: lower-case hex, an even count of digits, at most kMaxBuildId
// bytes. Anything else never becomes a file name.
bool ValidBuildId(const std::string& build_id) {
  if (build_id.empty() || build_id.size() % 2 != 0 ||
      build_id.size() > 2 * size_t{format::kMaxBuildId}) {
    return false;
  }
  for (char c : build_id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// A regular file opened for appending (made 0600 if absent), never following a link or blocking.
int OpenForAppend(const std::string& path) {
  int fd =
      open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

SymbolCache::SymbolCache(std::string dir, std::string debug_root)
    : dir_(std::move(dir)), debug_root_(std::move(debug_root)) {}

std::string SymbolCache::FileName(const std::string& build_id) const {
  std::string debug_file = debug_root_ + BuildIdDebugPath(build_id);
  struct stat st;
  if (stat(debug_file.c_str(), &st) != 0) return build_id + ".n";
  const uint64_t mtime_ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000u +
                            static_cast<uint64_t>(st.st_mtim.tv_nsec);
  return fmt::format("{}.d{:x}-{:x}", build_id, static_cast<uint64_t>(st.st_size), mtime_ns);
}

SymbolCache::~SymbolCache() {
  CloseFiles();
}

SymbolCache::Records SymbolCache::Parse(std::string_view bytes) {
  Records records;
  while (bytes.size() >= kHeaderBytes) {
    uint32_t magic = 0;
    uint32_t size = 0;
    uint64_t check = 0;
    std::memcpy(&magic, bytes.data(), sizeof(magic));
    std::memcpy(&size, bytes.data() + 4, sizeof(size));
    std::memcpy(&check, bytes.data() + 8, sizeof(check));
    if (magic != kMagic || size > kMaxRecordBytes || bytes.size() - kHeaderBytes < size) break;
    std::string_view payload = bytes.substr(kHeaderBytes, size);
    uint64_t vaddr = 0;
    std::vector<SourceFrame> frames;
    if (Check(payload) != check || !ParsePayload(payload, &vaddr, &frames)) break;
    records.try_emplace(vaddr, std::move(frames));
    bytes.remove_prefix(kHeaderBytes + size);
  }
  return records;
}

std::string SymbolCache::Encode(uint64_t elf_vaddr, const std::vector<SourceFrame>& frames) {
  std::string payload;
  Put(payload, elf_vaddr);
  Put(payload, static_cast<uint32_t>(frames.size()));
  for (const SourceFrame& frame : frames) {
    Put(payload, static_cast<uint32_t>(frame.line));
    Put(payload, static_cast<uint8_t>(frame.inlined ? 1 : 0));
    PutString(payload, frame.function);
    PutString(payload, frame.file);
  }
  std::string record;
  Put(record, kMagic);
  Put(record, static_cast<uint32_t>(payload.size()));
  Put(record, Check(payload));
  return record + payload;
}

SymbolCache::File& SymbolCache::Load(const std::string& build_id) {
  auto [it, inserted] = files_.try_emplace(build_id);
  if (!inserted) return it->second;
  File& file = it->second;
  file.name = FileName(build_id);
  try {
    std::optional<InputFile> input = InputFile::Open(dir_ + "/" + file.name, build_id);
    if (input && input->size() <= kMaxFileBytes) {
      file.bytes = input->size();
      file.records = Parse(input->ReadAll(kMaxFileBytes));
    } else if (input) {
      file.bytes = input->size();  // too large: neither read nor appended to
    }
  } catch (const RecordingError&) {  // unreadable, or not a regular file: nothing cached
    file.bytes = kMaxFileBytes + 1;
  }
  return file;
}

std::optional<std::vector<SourceFrame>> SymbolCache::Find(const std::string& build_id,
                                                          uint64_t elf_vaddr) {
  if (dir_.empty() || !ValidBuildId(build_id)) return std::nullopt;
  const File& file = Load(build_id);
  auto it = file.records.find(elf_vaddr);
  if (it == file.records.end()) return std::nullopt;
  return it->second;
}

void SymbolCache::Add(const std::string& build_id, uint64_t elf_vaddr,
                      const std::vector<SourceFrame>& frames) {
  if (dir_.empty() || !ValidBuildId(build_id)) return;
  File& file = Load(build_id);
  std::string record = Encode(elf_vaddr, frames);
  if (record.size() - kHeaderBytes > kMaxRecordBytes ||
      file.bytes + record.size() > kMaxFileBytes) {
    return;
  }
  file.pending += record;
  file.bytes += record.size();
  file.records.try_emplace(elf_vaddr, frames);
  if (file.pending.size() >= kWriteBytes) Write(build_id, file);
}

void SymbolCache::Write(const std::string& build_id, File& file) {
  if (file.pending.empty()) return;
  if (file.fd < 0) {
    mkdir(dir_.c_str(), 0700);  // EEXIST is the usual answer
    file.fd = OpenForAppend(dir_ + "/" + file.name);
  }
  // One write: O_APPEND places it whole after every record already there. A short one (a full
  // disk) leaves a cut record, which ends the file for its readers.
  if (file.fd >= 0) (void)!write(file.fd, file.pending.data(), file.pending.size());
  file.pending.clear();
}

void SymbolCache::CloseFiles() {
  for (auto& [build_id, file] : files_) {
    Write(build_id, file);
    if (file.fd >= 0) close(file.fd);
    file.fd = -1;
  }
}

}  // namespace heapgraph::report
