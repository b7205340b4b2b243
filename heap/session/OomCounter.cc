#include "heap/session/OomCounter.h"

#include <unistd.h>

#include <cstring>
#include <initializer_list>

#include "heap/platform/LineBuffer.h"
#include "heap/platform/ProcCgroup.h"
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
  const ProcCgroup where = ProcCgroup::Parse({text, static_cast<size_t>(n)});
  // A memory controller on a v1 hierarchy has no files in the unified one.
  if (where.has_memory_v1) {
    if (Join("/sys/fs/cgroup/memory", where.memory_v1.data(), where.memory_v1.size(),
             "memory.oom_control", out, size) &&
        Readable(out)) {
      return true;
    }
  } else if (where.has_unified) {
    for (const char* mount : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
      if (Join(mount, where.unified.data(), where.unified.size(), "memory.events", out, size) &&
          Readable(out)) {
        return true;
      }
    }
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
