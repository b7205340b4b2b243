#include "heap/pressure/MemoryLimit.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "heap/platform/ProcCgroup.h"
#include "heap/platform/SmallFile.h"

namespace heapgraph {
namespace {

// The decimal number at `text` (after spaces); false when there is none.
bool ParseNumber(const char* text, uint64_t* out) {
  while (*text == ' ') ++text;
  if (*text < '0' || *text > '9') return false;
  uint64_t v = 0;
  for (; *text >= '0' && *text <= '9'; ++text) v = v * 10 + static_cast<uint64_t>(*text - '0');
  *out = v;
  return true;
}

// The value of `key` in "key value\n" lines.
bool KeyValue(const char* text, const char* key, uint64_t* out) {
  size_t length = strlen(key);
  for (const char* line = text; line != nullptr && *line != '\0';) {
    if (strncmp(line, key, length) == 0 && line[length] == ' ') {
      return ParseNumber(line + length, out);
    }
    line = strchr(line, '\n');
    if (line != nullptr) ++line;
  }
  return false;
}

uint32_t PercentOf(uint64_t used, uint64_t limit) {
  if (limit == 0) return 0;
  unsigned __int128 percent = static_cast<unsigned __int128>(used) * 100 / limit;
  return percent > 1000000 ? 1000000 : static_cast<uint32_t>(percent);
}

}  // namespace

MemoryLimit::~MemoryLimit() {
  if (cgroup_fd_ >= 0) close(cgroup_fd_);
  if (psi_fd_ >= 0) close(psi_fd_);
}

// mountinfo: "id parent major:minor root mountpoint options [optional...] - fstype source ...".
bool MemoryLimit::ParseCgroup2Mount(const char* mountinfo, char* out, size_t size) {
  for (const char* line = mountinfo; line != nullptr && *line != '\0';) {
    const char* end = strchr(line, '\n');
    const char* dash = strstr(line, " - cgroup2 ");
    if (dash != nullptr && (end == nullptr || dash < end)) {
      const char* field = line;
      for (int i = 0; i < 4 && field != nullptr; ++i) {
        field = strchr(field, ' ');
        if (field != nullptr) ++field;
      }
      const char* stop = field != nullptr ? strchr(field, ' ') : nullptr;
      if (stop != nullptr && static_cast<size_t>(stop - field) < size) {
        memcpy(out, field, static_cast<size_t>(stop - field));
        out[stop - field] = '\0';
        return true;
      }
    }
    line = end != nullptr ? end + 1 : nullptr;
  }
  return false;
}

void MemoryLimit::ParseEvents(const char* memory_events, MemoryReading* reading) {
  KeyValue(memory_events, "oom", &reading->oom_events);
  KeyValue(memory_events, "oom_kill", &reading->oom_kills);
}

// Opens <mount><path> as the cgroup's directory when it has memory.current.
bool MemoryLimit::OpenCgroupDir(const char* mount, const char* path) {
  if (snprintf(cgroup_dir_, sizeof(cgroup_dir_), "%s%s", mount, path) >=
      static_cast<int>(sizeof(cgroup_dir_))) {
    cgroup_dir_[0] = '\0';
    return false;
  }
  cgroup_fd_ = open(cgroup_dir_, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgroup_fd_ >= 0 && faccessat(cgroup_fd_, "memory.current", R_OK, 0) == 0) return true;
  if (cgroup_fd_ >= 0) close(cgroup_fd_);
  cgroup_fd_ = -1;
  cgroup_dir_[0] = '\0';
  return false;
}

// The unified hierarchy's directory of this process, when it has the memory controller. A memory
// controller bound to a v1 hierarchy (a "memory" line in /proc/self/cgroup) cannot also be in
// the unified one: nothing more is read. Otherwise the usual mount point is tried before
// /proc/self/mountinfo, which is long in containers and on desktops (every process starts here).
bool MemoryLimit::FindCgroup() {
  char text[8192], mount[kMaxPath], path[kMaxPath];
  const ssize_t n = SmallFile::Read("/proc/self/cgroup", text, sizeof(text));
  if (n <= 0) return false;
  const ProcCgroup where = ProcCgroup::Parse({text, static_cast<size_t>(n)});
  if (!where.has_unified || where.has_memory_v1 || where.unified.size() >= sizeof(path)) {
    return false;
  }
  memcpy(path, where.unified.data(), where.unified.size());
  path[where.unified.size()] = '\0';
  if (OpenCgroupDir("/sys/fs/cgroup", path)) return true;
  // mountinfo can be long; the cgroup2 line is usually early.
  return SmallFile::Read("/proc/self/mountinfo", text, sizeof(text)) > 0 &&
         ParseCgroup2Mount(text, mount, sizeof(mount)) && strcmp(mount, "/sys/fs/cgroup") != 0 &&
         OpenCgroupDir(mount, path);
}

bool MemoryLimit::PressureTriggerPossible() const {
  if (cgroup_fd_ >= 0 && faccessat(cgroup_fd_, "memory.pressure", W_OK, 0) == 0) return true;
  return access("/proc/pressure/memory", W_OK) == 0;
}

bool MemoryLimit::ArmPressureTrigger(uint64_t stall_us, uint64_t window_us) {
  if (psi_fd_ >= 0) return true;
  int fd = -1;
  if (cgroup_fd_ >= 0) fd = openat(cgroup_fd_, "memory.pressure", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fd = open("/proc/pressure/memory", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  char trigger[64];
  int length = snprintf(trigger, sizeof(trigger), "some %llu %llu",
                        static_cast<unsigned long long>(stall_us),
                        static_cast<unsigned long long>(window_us));
  if (write(fd, trigger, static_cast<size_t>(length) + 1) < 0) {
    close(fd);
    return false;
  }
  psi_fd_ = fd;
  sources_ |= kPsi;
  return true;
}

void MemoryLimit::Discover(uint64_t configured) {
  configured_ = configured;
  sources_ = kRss;
  if (FindCgroup()) sources_ |= kCgroup;
}

MemoryReading MemoryLimit::Read() const {
  MemoryReading r;
  char text[1024];
  uint64_t pages;
  if (SmallFile::Read("/proc/self/statm", text, sizeof(text)) > 0) {
    const char* second = strchr(text, ' ');
    if (second != nullptr && ParseNumber(second, &pages)) {
      r.rss = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    }
  }
  if (cgroup_fd_ < 0) return r;
  if (SmallFile::Read(cgroup_fd_, "memory.current", text, sizeof(text)) > 0)
    ParseNumber(text, &r.cgroup_current);
  if (SmallFile::Read(cgroup_fd_, "memory.max", text, sizeof(text)) > 0)
    ParseNumber(text, &r.cgroup_max);
  if (SmallFile::Read(cgroup_fd_, "memory.events", text, sizeof(text)) > 0) ParseEvents(text, &r);
  return r;
}

uint32_t MemoryLimit::Percent(const MemoryReading& reading) const {
  uint32_t by_rss = PercentOf(reading.rss, configured_);
  uint32_t by_cgroup = PercentOf(reading.cgroup_current, reading.cgroup_max);
  return by_rss > by_cgroup ? by_rss : by_cgroup;
}

uint64_t MemoryLimit::EffectiveLimit(const MemoryReading& reading) const {
  uint32_t by_rss = PercentOf(reading.rss, configured_);
  uint32_t by_cgroup = PercentOf(reading.cgroup_current, reading.cgroup_max);
  if (configured_ != 0 && (by_rss >= by_cgroup || reading.cgroup_max == 0)) return configured_;
  return reading.cgroup_max;
}

bool MemoryLimit::HasLimit() const {
  if (configured_ != 0) return true;
  char text[64];
  uint64_t max = 0;
  return cgroup_fd_ >= 0 && SmallFile::Read(cgroup_fd_, "memory.max", text, sizeof(text)) > 0 &&
         ParseNumber(text, &max) && max != 0;
}

}  // namespace heapgraph
