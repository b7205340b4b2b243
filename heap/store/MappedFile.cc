#include "heap/store/MappedFile.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "heap/platform/WriteAt.h"

namespace heapgraph {
namespace {

// Raw syscalls: the preload library interposes mmap/munmap, and its own mappings must not be
// recorded as the host's VM regions.
void* RawMmap(void* addr, uint64_t length, int prot, int flags, int fd, uint64_t offset) {
  long r = syscall(SYS_mmap, addr, length, prot, flags, fd, offset);
  if (r < 0 && r > -4096) return MAP_FAILED;
  return reinterpret_cast<void*>(r);
}

// fallocate, retried on EINTR; a file system without it (EOPNOTSUPP) counts as reserved.
bool Fallocate(int fd, uint64_t offset, uint64_t length) {
  int r;
  do {
    r = fallocate(fd, 0, static_cast<off_t>(offset), static_cast<off_t>(length));
  } while (r != 0 && errno == EINTR);
  return r == 0 || errno == EOPNOTSUPP;
}

}  // namespace

int MappedFile::TakeParked(int dir_fd, const char* name) {
  char parked[128];
  size_t prefix = sizeof(kReusePrefix) - 1, length = strlen(name);
  if (prefix + length >= sizeof(parked)) return -1;
  memcpy(parked, kReusePrefix, prefix);
  memcpy(parked + prefix, name, length + 1);
  // RENAME_NOREPLACE: an existing `name` stays an error, as for a new file.
  if (renameat2(dir_fd, parked, dir_fd, name, RENAME_NOREPLACE) != 0) return -1;
  int fd = openat(dir_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
      st.st_size == 0 && st.st_uid == geteuid()) {
    return fd;
  }
  if (fd >= 0) close(fd);
  unlinkat(dir_fd, name, 0);
  return -1;
}

bool MappedFile::OpenNew(int dir_fd, const char* name, uint64_t size, int* fd_out) {
  int fd = TakeParked(dir_fd, name);
  if (fd < 0) fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return false;
  }
  *fd_out = fd;
  return true;
}

bool MappedFile::Create(int dir_fd, const char* name, uint64_t size) {
  int fd;
  if (!OpenNew(dir_fd, name, size, &fd)) return false;
  void* p = RawMmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int saved = errno;
    close(fd);
    errno = saved;
    return false;
  }
  data_ = static_cast<uint8_t*>(p);
  size_ = size;
  fd_.Adopt(fd);
  AdviseRandom();
  return true;
}

bool MappedFile::Reserve(uint64_t offset, uint64_t length) {
  if (offset >= size_) return false;
  if (length > size_ - offset) length = size_ - offset;
  if (fallocate_unsupported_ || !fd_.StillOurs()) return true;
  int r;
  do {
    r = fallocate(fd_.fd(), 0, static_cast<off_t>(offset), static_cast<off_t>(length));
  } while (r != 0 && errno == EINTR);
  if (r == 0) return true;
  if (errno == EOPNOTSUPP) {
    fallocate_unsupported_ = true;
    return true;
  }
  return false;
}

bool MappedFile::CopyRanges(int fd, const Range* ranges, size_t range_count, bool reserve) const {
  for (size_t i = 0; i < range_count; ++i) {
    const Range& r = ranges[i];
    if (r.offset >= size_ || r.length == 0) continue;
    uint64_t length = r.length > size_ - r.offset ? size_ - r.offset : r.length;
    if (reserve && !Fallocate(fd, r.offset, length)) return false;
    if (!WriteAt(fd, data_ + r.offset, length, r.offset)) return false;
  }
  return true;
}

bool MappedFile::CopyTo(int dir_fd, const char* name, const Range* ranges,
                        size_t range_count) const {
  int fd;
  if (!OpenNew(dir_fd, name, size_, &fd)) return false;
  bool ok = CopyRanges(fd, ranges, range_count, true);
  close(fd);
  return ok;
}

int MappedFile::CopyToMemory(const char* name, const Range* ranges, size_t range_count) const {
  int fd = static_cast<int>(syscall(SYS_memfd_create, name, MFD_CLOEXEC));
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(size_)) != 0 ||
      !CopyRanges(fd, ranges, range_count, false)) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

bool MappedFile::Adopt(int dir_fd, const char* name) {
  int fd = openat(dir_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  return fd >= 0 && AdoptDescriptor(fd);
}

bool MappedFile::MapOver(int fd, struct stat* st) {
  if (fstat(fd, st) != 0 || static_cast<uint64_t>(st->st_size) != size_) {
    close(fd);  // a shorter file would raise SIGBUS later
    return false;
  }
  void* p = RawMmap(data_, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return false;
  }
  return true;
}

bool MappedFile::AdoptDescriptor(int fd) {
  struct stat st;
  if (!MapOver(fd, &st)) return false;
  if (fd_.StillOurs()) close(fd_.fd());
  fd_.Adopt(fd);
  AdviseRandom();
  return true;
}

bool MappedFile::AdoptMemoryCopy(int fd) {
  struct stat st;
  return MapOver(fd, &st) && fd_.TakeOver(fd, st);
}

// Records land at scattered offsets of large sparse files: without this, every first touch makes
// the kernel read ahead (zero-fill) up to read_ahead_kb around it, hundreds of MiB of page cache.
void MappedFile::AdviseRandom() const {
  syscall(SYS_madvise, data_, size_, MADV_RANDOM);
}

void MappedFile::Sync() const {
  if (data_ != nullptr) msync(data_, size_, MS_ASYNC);
}

void MappedFile::Unmap() {
  if (data_ != nullptr) syscall(SYS_munmap, data_, size_);
  if (fd_.StillOurs()) close(fd_.fd());
  fd_.Abandon();
  data_ = nullptr;
  size_ = 0;
}

}  // namespace heapgraph
