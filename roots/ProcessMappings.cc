#include "roots/ProcessMappings.h"

#include <fcntl.h>

#include <algorithm>
#include <cstdio>

#include "roots/RawSyscall.h"

namespace heapgraph::roots {
namespace {

constexpr size_t kInitialTextBytes = 64 * 1024;

// A forward-only reader over one maps line. Every Take* returns false on malformed input and
// leaves the cursor unspecified; the caller then drops the whole line.
class LineCursor {
 public:
  explicit LineCursor(std::string_view line) : rest_(line) {}

  bool TakeHex(uint64_t* out) { return TakeNumber(16, out); }
  bool TakeDecimal(uint64_t* out) { return TakeNumber(10, out); }
  bool TakeChar(char expected) {
    if (rest_.empty() || rest_.front() != expected) return false;
    rest_.remove_prefix(1);
    return true;
  }
  // Requires at least one space or tab, then skips all of them.
  bool TakeBlanks() {
    size_t n = 0;
    while (n < rest_.size() && (rest_[n] == ' ' || rest_[n] == '\t')) ++n;
    rest_.remove_prefix(n);
    return n > 0;
  }
  bool TakeToken(size_t length, std::string_view* out) {
    if (rest_.size() < length) return false;
    *out = rest_.substr(0, length);
    rest_.remove_prefix(length);
    return rest_.empty() || rest_.front() == ' ' || rest_.front() == '\t';
  }
  std::string_view Rest() const { return rest_; }
  bool AtEnd() const { return rest_.empty(); }

 private:
  static int DigitValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 99;
  }
  bool TakeNumber(int base, uint64_t* out) {
    uint64_t value = 0;
    size_t n = 0;
    for (; n < rest_.size() && DigitValue(rest_[n]) < base; ++n) {
      const auto digit = static_cast<uint64_t>(DigitValue(rest_[n]));
      if (value > (UINT64_MAX - digit) / static_cast<uint64_t>(base)) return false;  // overflow
      value = value * static_cast<uint64_t>(base) + digit;
    }
    rest_.remove_prefix(n);
    *out = value;
    return n > 0;
  }

  std::string_view rest_;
};

bool ParsePermissions(std::string_view perms, ProcessMappings::Mapping* out) {
  if (perms.size() != 4) return false;
  if ((perms[0] != 'r' && perms[0] != '-') || (perms[1] != 'w' && perms[1] != '-') ||
      (perms[2] != 'x' && perms[2] != '-') || (perms[3] != 'p' && perms[3] != 's')) {
    return false;
  }
  out->readable = perms[0] == 'r';
  out->writable = perms[1] == 'w';
  out->executable = perms[2] == 'x';
  out->shared = perms[3] == 's';
  return true;
}

bool ParseRange(LineCursor& cursor, ProcessMappings::Mapping* out) {
  uint64_t start = 0, end = 0;
  if (!cursor.TakeHex(&start) || !cursor.TakeChar('-') || !cursor.TakeHex(&end)) return false;
  if (start >= end) return false;
  out->start = static_cast<uintptr_t>(start);
  out->end = static_cast<uintptr_t>(end);
  return true;
}

bool ParseDevice(LineCursor& cursor, ProcessMappings::Mapping* out) {
  uint64_t major = 0, minor = 0;
  if (!cursor.TakeHex(&major) || !cursor.TakeChar(':') || !cursor.TakeHex(&minor)) return false;
  if (major > UINT32_MAX || minor > UINT32_MAX) return false;
  out->dev_major = static_cast<uint32_t>(major);
  out->dev_minor = static_cast<uint32_t>(minor);
  return true;
}

}  // namespace

ProcessMappings::Kind ProcessMappings::Classify(std::string_view name, uint64_t inode) {
  if (name.empty()) return inode != 0 ? Kind::kFile : Kind::kAnonymous;
  if (name == "[stack]") return Kind::kMainStack;
  if (name == "[heap]") return Kind::kHeap;
  if (name.starts_with("[anon:") || name.starts_with("[anon_shmem:")) return Kind::kAnonymous;
  if (name.front() == '[') return Kind::kSpecial;
  if (name.front() == '/' || inode != 0) return Kind::kFile;
  return Kind::kAnonymous;
}

bool ProcessMappings::ParseLine(std::string_view line, Mapping* out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  LineCursor cursor(line);
  Mapping m;
  std::string_view perms;
  if (!ParseRange(cursor, &m) || !cursor.TakeBlanks() || !cursor.TakeToken(4, &perms) ||
      !ParsePermissions(perms, &m) || !cursor.TakeBlanks() || !cursor.TakeHex(&m.offset) ||
      !cursor.TakeBlanks() || !ParseDevice(cursor, &m) || !cursor.TakeBlanks() ||
      !cursor.TakeDecimal(&m.inode)) {
    return false;
  }
  // After the inode: nothing, or blanks and the name (which may itself contain blanks).
  if (!cursor.AtEnd() && !cursor.TakeBlanks()) return false;
  m.name = cursor.Rest();
  m.kind = Classify(m.name, m.inode);
  *out = m;
  return true;
}

void ProcessMappings::ParseText(std::string_view text) {
  text_.assign(text.begin(), text.end());
  text_size_ = text.size();
  ParseBuffer(/*may_grow=*/true);
}

bool ProcessMappings::Read(pid_t pid) {
  char path[64];
  if (pid == 0) {
    std::snprintf(path, sizeof(path), "/proc/self/maps");
  } else {
    std::snprintf(path, sizeof(path), "/proc/%d/maps", static_cast<int>(pid));
  }
  if (text_.size() < kInitialTextBytes) text_.resize(kInitialTextBytes);
  return ReadFile(path, /*may_grow=*/true) && ParseBuffer(/*may_grow=*/true);
}

void ProcessMappings::Reserve(size_t text_bytes, size_t mappings) {
  if (text_.size() < text_bytes) text_.resize(text_bytes);
  mappings_.reserve(mappings);
}

bool ProcessMappings::ReadWithoutAllocating() {
  return ReadFile("/proc/self/maps", /*may_grow=*/false) && ParseBuffer(/*may_grow=*/false);
}

bool ProcessMappings::ReadFile(const char* path, bool may_grow) {
  const long fd = RawSyscall::Open(path, O_RDONLY | O_CLOEXEC);
  if (RawSyscall::Failed(fd)) {
    error_ = "cannot open the maps file";
    return false;
  }
  text_size_ = 0;
  bool ok = true;
  for (;;) {
    if (text_size_ == text_.size()) {
      if (!may_grow) {
        error_ = "maps text exceeds the reserved buffer";
        ok = false;
        break;
      }
      text_.resize(std::max(kInitialTextBytes, text_.size() * 2));
    }
    const long n = RawSyscall::Read(static_cast<int>(fd), text_.data() + text_size_,
                                    text_.size() - text_size_);
    if (n == -EINTR) continue;
    if (n <= 0) {
      if (n < 0) error_ = "cannot read the maps file";
      ok = n == 0;
      break;
    }
    text_size_ += static_cast<size_t>(n);
  }
  RawSyscall::Close(static_cast<int>(fd));
  return ok;
}

bool ProcessMappings::ParseBuffer(bool may_grow) {
  mappings_.clear();
  malformed_lines_ = 0;
  std::string_view text(text_.data(), text_size_);
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.empty()) continue;
    Mapping m;
    if (!ParseLine(line, &m)) {
      ++malformed_lines_;
      continue;
    }
    if (!may_grow && mappings_.size() == mappings_.capacity()) {
      error_ = "more mappings than reserved";
      return false;
    }
    mappings_.push_back(m);
  }
  // The kernel emits ascending addresses; given text may not. Find() relies on the order.
  std::sort(mappings_.begin(), mappings_.end(),
            [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
  return true;
}

bool ProcessMappings::Cut(std::span<const std::pair<uint64_t, uint64_t>> ranges) {
  for (const auto& [begin, end] : ranges) {
    if (begin >= end) continue;
    auto it = std::upper_bound(mappings_.begin(), mappings_.end(), begin,
                               [](uintptr_t a, const Mapping& m) { return a < m.end; });
    while (it != mappings_.end() && it->start < end) {
      if (it->start >= begin && it->end <= end) {
        it = mappings_.erase(it);  // covered
        continue;
      }
      if (it->start < begin && it->end > end) {  // split: the part above goes after it
        if (mappings_.size() == mappings_.capacity()) {
          error_ = "no room in the reserve to cut a mapping in two";
          return false;
        }
        Mapping above = *it;
        above.offset += end - it->start;
        above.start = end;
        it->end = begin;
        it = mappings_.insert(it + 1, above) + 1;
        continue;
      }
      if (it->start < begin) {
        it->end = begin;
      } else {
        it->offset += end - it->start;
        it->start = end;
      }
      ++it;
    }
  }
  return true;
}

const ProcessMappings::Mapping* ProcessMappings::Find(uintptr_t address) const {
  // First mapping whose end is past `address`; it contains `address` unless there is a gap.
  auto it = std::upper_bound(mappings_.begin(), mappings_.end(), address,
                             [](uintptr_t a, const Mapping& m) { return a < m.end; });
  if (it == mappings_.end() || !it->Contains(address)) return nullptr;
  return &*it;
}

const ProcessMappings::Mapping* ProcessMappings::MainStack() const {
  for (const Mapping& m : mappings_) {
    if (m.kind == Kind::kMainStack) return &m;
  }
  return nullptr;
}

std::array<std::pair<uint64_t, uint64_t>, 2> ProcessMappings::BufferRanges() const {
  auto text = reinterpret_cast<uint64_t>(text_.data());
  auto mappings = reinterpret_cast<uint64_t>(mappings_.data());
  return {{{text, text + text_.capacity()},
           {mappings, mappings + mappings_.capacity() * sizeof(Mapping)}}};
}

}  // namespace heapgraph::roots
