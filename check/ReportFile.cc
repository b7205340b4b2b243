#include "check/ReportFile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "heap/platform/WriteAt.h"

namespace heapgraph::report {
namespace {

constexpr const char* kNotRegular = "not a regular file or a character device (refused)";

bool Refuse(const std::string& path, const std::string& why, std::string* error) {
  *error = "cannot write " + path + ": " + why;
  return false;
}

bool RefuseErrno(const std::string& path, std::string* error) {
  return Refuse(path, strerror(errno), error);
}

// A character device, opened without following a link and without blocking (a FIFO swapped in
// since the lstat is refused by the fstat, not waited on), then written sequentially.
bool WriteDevice(const std::string& path, const std::string& text, std::string* error) {
  int fd = open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return RefuseErrno(path, error);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
    close(fd);
    return Refuse(path, kNotRegular, error);
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const char* data = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      bool ok = RefuseErrno(path, error);
      close(fd);
      return ok;
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  close(fd);
  return true;
}

// A fresh 0600 file beside `path`, renamed over it when complete. rename() replaces whatever name
// `path` is by then (a link planted after the lstat included) and never writes through it.
bool WriteReplacing(const std::string& path, const std::string& text, std::string* error) {
  std::string temporary = path + ".XXXXXX";
  int fd = mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) return RefuseErrno(path, error);
  bool written = WriteAt(fd, text.data(), text.size(), 0);
  int saved = errno;
  if (close(fd) != 0 && written) {
    written = false;
    saved = errno;
  }
  if (written && rename(temporary.c_str(), path.c_str()) == 0) return true;
  if (written) saved = errno;
  unlink(temporary.c_str());
  errno = saved;
  return RefuseErrno(path, error);
}

}  // namespace

bool ReportFile::Write(const std::string& path, const std::string& text, std::string* error) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stderr);
    return true;
  }
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) return Refuse(path, "is a symbolic link (not followed)", error);
    if (S_ISCHR(st.st_mode)) return WriteDevice(path, text, error);
    if (!S_ISREG(st.st_mode)) return Refuse(path, kNotRegular, error);
  } else if (errno != ENOENT) {
    return RefuseErrno(path, error);
  }
  return WriteReplacing(path, text, error);
}

}  // namespace heapgraph::report
