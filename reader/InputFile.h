// reader/: one file a reader reads: a recording's own files (heap.tree, stacks, modules, session,
// types, pressure, exit) and the module files the reports open for symbols and code. The one place
// where an input file is opened and bounded, so a hostile directory can neither hang a reader nor
// make it read or allocate without bound.
//
// Contract: Open() opens read-only, close-on-exec and non-blocking (a FIFO or device can never
// block the open) and, unless told to follow links, with O_NOFOLLOW; it then refuses anything
// fstat does not call a regular file (FIFO, device, socket, directory). Every read is a pread
// checked first against the size fstat reported; ReadAll() refuses a file larger than the bound
// the caller's format allows. Every refusal is a RecordingError with one line
// "<name>: <reason>" ("pressure: not a regular file (a FIFO)"). Copies share the descriptor,
// which the last one closes. Full C++ (exceptions, allocation).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace heapgraph {

class InputFile {
 public:
  // kRefuse for the files of a recording directory (the writer never makes links there);
  // kFollow for module paths, which the loader may have reached through a link (libstdc++.so.6).
  enum class Links { kRefuse, kFollow };

  // The file at `path`, called `name` in every message; nullopt when it does not exist. Throws
  // RecordingError when it cannot be opened or is not a regular file.
  static std::optional<InputFile> Open(const std::string& path, const std::string& name,
                                       Links links = Links::kRefuse);

  // An already open descriptor (shared: closed with its last owner), checked as Open checks the
  // file it opens: throws RecordingError unless it is a regular file.
  static InputFile Adopt(std::shared_ptr<const int> fd, const std::string& name);
  // Owns `fd`: closed when the last copy goes.
  static std::shared_ptr<const int> Own(int fd);

  const std::string& name() const { return name_; }
  uint64_t size() const { return size_; }  // as fstat reported it at open
  int fd() const { return *fd_; }

  // Throws RecordingError "<name>: truncated (<what> ends at E, file is S bytes)" unless
  // [offset, offset + length) lies inside the file.
  void CheckExtent(uint64_t offset, uint64_t length, const char* what) const;
  // Reads exactly `length` bytes at `offset` after CheckExtent.
  void ReadAt(uint64_t offset, void* out, uint64_t length, const char* what) const;
  // The whole file; throws RecordingError "<name>: too large (S bytes, at most M)" when it is
  // larger than `max_size`.
  std::string ReadAll(uint64_t max_size) const;

  // Throws RecordingError "<name>: <problem>".
  [[noreturn]] void Fail(const std::string& problem) const;

 private:
  InputFile(std::string name, std::shared_ptr<const int> fd);

  std::string name_;
  std::shared_ptr<const int> fd_;
  uint64_t size_ = 0;
};

}  // namespace heapgraph
