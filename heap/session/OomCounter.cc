#include "heap/session/OomCounter.h"

#include <unistd.h>

#include <cstring>

#include "heap/platform/LineBuffer.h"
#include "heap/platform/SmallFile.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {
namespace {

bool Readable(const char* path) {
  return access(path, R_OK) == 0;
}

// Builds base + cgroup + leaf into `out`; false when it does not fit.
bool Join(const char* base, const char* cgroup, size_t cgroup_length, const char* leaf, char* out,
          size_t size) {
  LineBuffer line;
  line.Append(base).Append(cgroup, cgroup_length);
  if (cgroup_length == 0 || cgroup[cgroup_length - 1] != '/') line.AppendChar('/');
  line.Append(leaf);
  if (line.size() + 1 > size || line.size() + 1 > LineBuffer::kCapacity) return false;
  memcpy(out, line.data(), line.size());
  out[line.size()] = '\0';
  return true;
}

}  // namespace

bool OomCounter::ParseKey(const char* text, size_t length, const char* key, uint64_t* out) {
  size_t key_length = strlen(key);
  for (size_t i = 0; i + key_length < length;) {
    bool at_line_start = i == 0 || text[i - 1] == '\n';
    if (at_line_start && memcmp(text + i, key, key_length) == 0 && text[i + key_length] == ' ') {
      uint64_t v = 0;
      size_t j = i + key_length + 1;
      if (j >= length || text[j] < '0' || text[j] > '9') return false;
      for (; j < length && text[j] >= '0' && text[j] <= '9'; ++j) {
        v = v * 10 + static_cast<uint64_t>(text[j] - '0');
      }
      *out = v;
      return true;
    }
    const void* nl = memchr(text + i, '\n', length - i);
    if (nl == nullptr) break;
    i = static_cast<size_t>(static_cast<const char*>(nl) - text) + 1;
  }
  return false;
}

bool OomCounter::FindPath(int pid, char* out, size_t size) {
  out[0] = '\0';
  LineBuffer proc;
  proc.Append("/proc/");
  if (pid == 0) {
    proc.Append("self");
  } else {
    proc.AppendDecimal(static_cast<uint64_t>(pid));
  }
  proc.Append("/cgroup").AppendChar('\0');
  char text[4096];
  ssize_t n = SmallFile::Read(proc.data(), text, sizeof(text));
  if (n <= 0) return false;
  // Lines "hierarchy:controllers:path"; "0::path" is the unified (v2) hierarchy.
  const char* v1 = nullptr;
  size_t v1_length = 0;
  for (char* line = text; line < text + n;) {
    char* end = static_cast<char*>(memchr(line, '\n', static_cast<size_t>(text + n - line)));
    if (end == nullptr) end = text + n;
    char* first = static_cast<char*>(memchr(line, ':', static_cast<size_t>(end - line)));
    char* second =
        first == nullptr
            ? nullptr
            : static_cast<char*>(memchr(first + 1, ':', static_cast<size_t>(end - first - 1)));
    if (second != nullptr) {
      const char* controllers = first + 1;
      size_t controllers_length = static_cast<size_t>(second - controllers);
      const char* path = second + 1;
      size_t path_length = static_cast<size_t>(end - path);
      if (controllers_length == 0 && line[0] == '0') {
        if (Join("/sys/fs/cgroup", path, path_length, "memory.events", out, size) &&
            Readable(out)) {
          return true;
        }
        if (Join("/sys/fs/cgroup/unified", path, path_length, "memory.events", out, size) &&
            Readable(out)) {
          return true;
        }
      }
      // v1: a controller list containing "memory".
      for (const char* c = controllers; c < second;) {
        const char* comma =
            static_cast<const char*>(memchr(c, ',', static_cast<size_t>(second - c)));
        const char* c_end = comma == nullptr ? second : comma;
        if (c_end - c == 6 && memcmp(c, "memory", 6) == 0) {
          v1 = path;
          v1_length = path_length;
        }
        c = c_end + 1;
      }
    }
    line = end + 1;
  }
  if (v1 != nullptr &&
      Join("/sys/fs/cgroup/memory", v1, v1_length, "memory.oom_control", out, size) &&
      Readable(out)) {
    return true;
  }
  out[0] = '\0';
  return false;
}

uint64_t OomCounter::Read(const char* path) {
  if (path == nullptr || path[0] == '\0') return format::kUnknownCounter;
  char text[1024];
  ssize_t n = SmallFile::Read(path, text, sizeof(text));
  uint64_t value;
  if (n <= 0 || !ParseKey(text, static_cast<size_t>(n), "oom_kill", &value)) {
    return format::kUnknownCounter;
  }
  return value;
}

}  // namespace heapgraph
