#include "heap/store/RecordingDirectory.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "heap/platform/LineBuffer.h"
#include "heap/platform/ProcessStartTicks.h"

namespace heapgraph {
namespace {

void SetError(char* error, size_t error_size, const LineBuffer& line) {
  size_t n = line.size() < error_size - 1 ? line.size() : error_size - 1;
  memcpy(error, line.data(), n);
  error[n] = '\0';
}

void SetErrno(char* error, size_t error_size, const char* what, const char* path) {
  LineBuffer line;
  line.Append(what).Append(" ").Append(path).Append(": ").Append(strerror(errno));
  SetError(error, error_size, line);
}

void DefaultRoot(char* out, size_t size) {
  const char* tmp = getenv("TMPDIR");
  if (tmp == nullptr || tmp[0] != '/' || strlen(tmp) > size - 40) tmp = "/tmp";
  LineBuffer line;
  line.Append(tmp).Append("/heapgraph-").AppendDecimal(geteuid()).AppendChar('\0');
  memcpy(out, line.data(), line.size());
}

}  // namespace

bool RecordingDirectory::OpenRoot(const char* root, char* error, size_t error_size) {
  char path[kMaxPath];
  if (root[0] == '\0') {
    DefaultRoot(path, sizeof(path));
  } else {
    size_t n = strlen(root);
    if (n >= sizeof(path)) {
      LineBuffer line;
      line.Append("recording root is too long (").AppendDecimal(n).Append(" bytes)");
      SetError(error, error_size, line);
      return false;
    }
    memcpy(path, root, n + 1);
  }
  if (!MakeRoot(path)) {
    SetErrno(error, error_size, "cannot create recording root", path);
    return false;
  }
  root_fd_ = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root_fd_ < 0) {
    SetErrno(error, error_size, "cannot open recording root (symlinks are refused)", path);
    return false;
  }
  struct stat st;
  bool sticky = fstat(root_fd_, &st) == 0 && (st.st_mode & S_ISVTX) != 0;
  // Ours and private, or ours/root's with the sticky bit (/tmp): nobody else can rename our
  // entries.
  bool safe = st.st_uid == geteuid() ? (st.st_mode & 022) == 0 || sticky : st.st_uid == 0 && sticky;
  if (!safe) {
    LineBuffer line;
    line.Append("recording root ")
        .Append(path)
        .Append(
            " is not owned by this user (nor a sticky directory of root's) or is writable by "
            "others; "
            "refusing to use it");
    SetError(error, error_size, line);
    close(root_fd_);
    root_fd_ = -1;
    return false;
  }
  LineBuffer line;
  line.Append(path).AppendChar('/').AppendChar('\0');
  memcpy(root_path_, line.data(), line.size() < kMaxPath ? line.size() : kMaxPath - 1);
  return true;
}

namespace {

// The decimal number at *p (at least one digit, at most 19); advances *p past it.
bool ParseDecimal(const char** p, uint64_t* value) {
  const char* start = *p;
  uint64_t v = 0;
  while (**p >= '0' && **p <= '9' && *p - start < 19)
    v = v * 10 + static_cast<uint64_t>(*(*p)++ - '0');
  *value = v;
  return *p != start && !(**p >= '0' && **p <= '9');
}

}  // namespace

bool RecordingDirectory::ParseName(const char* name, uint32_t* pid, uint64_t* ticks) {
  const char* p = name;
  uint64_t id = 0, start = 0, attempt = 0;
  if (!ParseDecimal(&p, &id) || id == 0 || id > UINT32_MAX || *p++ != '-') return false;
  if (!ParseDecimal(&p, &start)) return false;
  if (*p == '.' && (++p, !ParseDecimal(&p, &attempt))) return false;
  if (*p != '\0') return false;
  *pid = static_cast<uint32_t>(id);
  *ticks = start;
  return true;
}

void RecordingDirectory::SetName(const char* name) {
  size_t n = strnlen(name, kMaxName - 1);
  memcpy(name_, name, n);
  name_[n] = '\0';
  LineBuffer line;
  line.Append(root_path_).Append(name_).AppendChar('\0');
  size_t length = line.size() < kMaxPath ? line.size() : kMaxPath;
  memcpy(path_, line.data(), length);
  path_[kMaxPath - 1] = '\0';
}

bool RecordingDirectory::MakeDirectory(const char* name) {
  if (mkdirat(root_fd_, name, 0700) != 0) return false;
  fd_ = openat(root_fd_, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) return false;
  SetName(name);
  return true;
}

bool RecordingDirectory::ClaimSpare(const char* name) {
  for (uint32_t slot = 0; slot < kSpareSlots; ++slot) {
    LineBuffer spare;
    spare.Append(kSparePrefix).AppendDecimal(slot).AppendChar('\0');
    // RENAME_NOREPLACE: never clobber another process's recording.
    if (renameat2(root_fd_, spare.data(), root_fd_, name, RENAME_NOREPLACE) != 0) continue;
    fd_ = openat(root_fd_, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd_ < 0) return false;
    SetName(name);
    return true;
  }
  return false;
}

bool RecordingDirectory::MakeOwnDirectory() {
  uint64_t ticks = ProcessStartTicks::OfSelf();
  for (int attempt = 0; attempt < 100; ++attempt) {
    LineBuffer name;
    name.AppendDecimal(static_cast<uint64_t>(getpid())).AppendChar('-').AppendDecimal(ticks);
    if (attempt > 0) name.AppendChar('.').AppendDecimal(static_cast<uint64_t>(attempt));
    name.AppendChar('\0');
    if (ClaimSpare(name.data()) || MakeDirectory(name.data())) return true;
    if (errno != EEXIST) return false;
  }
  errno = EEXIST;
  return false;
}

bool RecordingDirectory::CreateForForkedChild(RecordingDirectory* child) const {
  child->root_fd_ = root_fd_;
  child->fd_ = -1;
  memcpy(child->root_path_, root_path_, sizeof(root_path_));
  return child->MakeOwnDirectory();
}

void RecordingDirectory::CloseDirectory() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool RecordingDirectory::Create(const char* root, char* error, size_t error_size) {
  if (!OpenRoot(root, error, error_size)) return false;
  if (MakeOwnDirectory()) return true;
  if (errno == EEXIST) {
    SetErrno(error, error_size, "too many stale recording directories for this pid in", root_path_);
  } else {
    SetErrno(error, error_size, "cannot create recording directory in", root_path_);
  }
  return false;
}

bool RecordingDirectory::MakeRoot(const char* path) {
  char buffer[RecordingDirectory::kMaxPath];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof(buffer)) {
    errno = n == 0 ? EINVAL : ENAMETOOLONG;
    return false;
  }
  memcpy(buffer, path, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (buffer[i] != '/' && buffer[i] != '\0') continue;
    char saved = buffer[i];
    buffer[i] = '\0';
    if (mkdir(buffer, 0700) != 0 && errno != EEXIST) return false;
    buffer[i] = saved;
  }
  return true;
}

}  // namespace heapgraph
