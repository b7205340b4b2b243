#include "reader/FileHeaderCheck.h"

#include "reader/RecordingError.h"

namespace heapgraph {

void FileHeaderError(const char* name, const std::string& problem) {
  throw RecordingError(std::string(name) + ": " + problem);
}

void CheckFileHeader(const format::FileHeader& file, size_t header_size, size_t file_size,
                     const char* name, const char (&magic)[8]) {
  auto fail = [name](const std::string& problem) { FileHeaderError(name, problem); };
  if (file_size < header_size) fail("truncated header");
  if (memcmp(file.magic, magic, sizeof(file.magic)) != 0) {
    fail(std::string("not a heapgraph ") + name + " file (bad magic)");
  }
  if (file.version != 1) {
    fail("unsupported format version " + std::to_string(file.version) + " (this reader knows 1)");
  }
  if (file.header_size < header_size || file.header_size > file_size) fail("corrupt header");
}

}  // namespace heapgraph
