// reader/: the reader of a recording's `types` file (PersistedFormat.h: TypesHeader, written by the
// memory-pressure watcher): the C++/ObjC type name of live heap blocks, looked up by (address,
// seq) so that a record of a block freed since (its address reused) never names the new block.
// Same safety rules as RecordingReader: pread only, every offset and count checked against the
// file size first; a bad file is a RecordingError "types: <problem>".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {

class TypesFile {
 public:
  // nullopt when `directory` has no types file. Throws RecordingError when it is not valid.
  static std::optional<TypesFile> Read(const std::string& directory);

  // The type of the live block (address, seq), or null.
  const std::string* TypeOf(uint64_t address, uint32_t seq) const;
  size_t record_count() const { return records_.size(); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
  std::vector<format::TypeRecord> records_;  // sorted by (address, seq)
};

}  // namespace heapgraph
