#include "reader/InputFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "reader/RecordingError.h"

namespace heapgraph {
namespace {

[[noreturn]] void Refuse(const std::string& name, const std::string& problem) {
  throw RecordingError(name + ": " + problem);
}

std::string Errno(const char* what) {
  return std::string(what) + " (" + strerror(errno) + ")";
}

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not regular";
}

}  // namespace

InputFile::InputFile(std::string name, std::shared_ptr<const int> fd)
    : name_(std::move(name)), fd_(std::move(fd)) {}

std::shared_ptr<const int> InputFile::Own(int fd) {
  return std::shared_ptr<const int>(new int(fd), [](const int* p) {
    close(*p);
    delete p;
  });
}

InputFile InputFile::Adopt(std::shared_ptr<const int> fd, const std::string& name) {
  InputFile file(name, std::move(fd));
  struct stat st;
  if (fstat(file.fd(), &st) != 0) Refuse(name, Errno("cannot stat"));
  if (!S_ISREG(st.st_mode)) {
    Refuse(name, std::string("not a regular file (") + KindOf(st.st_mode) + ", refused)");
  }
  file.size_ = static_cast<uint64_t>(st.st_size);
  return file;
}

std::optional<InputFile> InputFile::Open(const std::string& path, const std::string& name,
                                         Links links) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. It is harmless on
  // the regular files that are kept (reads of regular files never block).
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (links == Links::kRefuse ? O_NOFOLLOW : 0);
  int fd = open(path.c_str(), flags);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    if (errno == ELOOP && links == Links::kRefuse) Refuse(name, "is a symbolic link (refused)");
    Refuse(name, Errno("cannot open"));
  }
  return Adopt(Own(fd), name);
}

void InputFile::Fail(const std::string& problem) const {
  Refuse(name_, problem);
}

void InputFile::CheckExtent(uint64_t offset, uint64_t length, const char* what) const {
  uint64_t end;
  if (__builtin_add_overflow(offset, length, &end)) {
    Fail(std::string("corrupt (") + what + " lies beyond 2^64)");
  }
  if (end > size_) {
    Fail(std::string("truncated (") + what + " ends at " + std::to_string(end) + ", file is " +
         std::to_string(size_) + " bytes)");
  }
}

void InputFile::ReadAt(uint64_t offset, void* out, uint64_t length, const char* what) const {
  CheckExtent(offset, length, what);
  auto* bytes = static_cast<char*>(out);
  while (length > 0) {
    ssize_t n = pread(*fd_, bytes, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Fail(Errno("read failed"));
    if (n == 0) Fail("truncated (file shrank while being read)");
    bytes += n;
    offset += static_cast<uint64_t>(n);
    length -= static_cast<uint64_t>(n);
  }
}

std::string InputFile::ReadAll(uint64_t max_size) const {
  if (size_ > max_size) {
    Fail("too large (" + std::to_string(size_) + " bytes, at most " + std::to_string(max_size) +
         ")");
  }
  std::string bytes(size_, '\0');
  ReadAt(0, bytes.data(), size_, "file");
  return bytes;
}

}  // namespace heapgraph
