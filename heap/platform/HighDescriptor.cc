#include "heap/platform/HighDescriptor.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace heapgraph {
namespace {

// kPreferredMinimum, or three quarters of a lower soft limit (at least 3).
int MinimumNumber() {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur > static_cast<rlim_t>(HighDescriptor::kPreferredMinimum) + 64) {
    return HighDescriptor::kPreferredMinimum;
  }
  int minimum = static_cast<int>(limit.rlim_cur * 3 / 4);
  return minimum > 3 ? minimum : 3;
}

}  // namespace

bool HighDescriptor::Adopt(int fd) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    return false;
  }
  int minimum = MinimumNumber();
  if (fd < minimum) {
    int high = fcntl(fd, F_DUPFD_CLOEXEC, minimum);
    if (high >= 0) {
      close(fd);
      fd = high;
    }
  }
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  return true;
}

bool HighDescriptor::TakeOver(int fd, const struct stat& st) {
  if (fd_ < 0) return Adopt(fd);
  if (dup3(fd, fd_, O_CLOEXEC) < 0) {
    close(fd);
    return false;
  }
  close(fd);
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  return true;
}

bool HighDescriptor::StillOurs() const {
  struct stat st;
  return fd_ >= 0 && fstat(fd_, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

}  // namespace heapgraph
