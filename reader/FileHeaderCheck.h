// reader/: the checks every appended recording file shares (`pressure`, `lag`): its header
// (format::FileHeader first) is read from the start of the file's bytes and must be whole, carry
// the file's magic and version 1, and give a header_size between the struct's size and the file's.
// Anything else is a RecordingError "<name>: <problem>" (truncated header; not a heapgraph <name>
// file (bad magic); unsupported format version N (this reader knows 1); corrupt header). The
// reader then checks its own fields (record sizes) and the records.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {

// Throws RecordingError "<name>: <problem>".
[[noreturn]] void FileHeaderError(const char* name, const std::string& problem);

// The FileHeader part of a header of `header_size` bytes in a file of `file_size` bytes.
void CheckFileHeader(const format::FileHeader& file, size_t header_size, size_t file_size,
                     const char* name, const char (&magic)[8]);

// Copies the `Header` at the start of `bytes` into *header and checks it (CheckFileHeader).
template <typename Header>
void ReadFileHeader(const std::string& bytes, const char* name, const char (&magic)[8],
                    Header* header) {
  if (bytes.size() < sizeof(Header)) FileHeaderError(name, "truncated header");
  memcpy(header, bytes.data(), sizeof(Header));
  CheckFileHeader(header->file, sizeof(Header), bytes.size(), name, magic);
}

}  // namespace heapgraph
