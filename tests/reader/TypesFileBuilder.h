// tests/reader: builds a `types` file (PersistedFormat.h TypesHeader) byte by byte, as the
// memory-pressure watcher writes it, for the tests and the fuzzer.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "heap/store/PersistedFormat.h"

namespace heapgraph::synthetic {

// `records`: (address, seq, index into `names`).
inline std::string BuildTypesFile(const std::vector<std::string>& names,
                                  const std::vector<format::TypeRecord>& records) {
  format::TypesHeader h = {};
  memcpy(h.file.magic, format::kTypesMagic, 8);
  h.file.version = format::kVersion;
  h.file.header_size = sizeof(h);
  h.record_size = sizeof(format::TypeRecord);
  h.name_count = static_cast<uint32_t>(names.size());
  std::string strings;
  std::vector<format::TypeName> entries;
  for (const std::string& n : names) {
    entries.push_back({static_cast<uint32_t>(strings.size()), static_cast<uint32_t>(n.size())});
    strings += n;
    strings += '\0';
  }
  while (strings.size() % 8 != 0) strings += '\0';
  h.names_offset = sizeof(h);
  h.strings_offset = h.names_offset + entries.size() * sizeof(format::TypeName);
  h.strings_offset = (h.strings_offset + 7) / 8 * 8;
  h.strings_size = strings.size();
  h.records_offset = h.strings_offset + strings.size();
  h.record_count = records.size();
  std::string out(h.records_offset + records.size() * sizeof(format::TypeRecord), '\0');
  memcpy(out.data(), &h, sizeof(h));
  if (!entries.empty()) {
    memcpy(out.data() + h.names_offset, entries.data(), entries.size() * sizeof(entries[0]));
  }
  memcpy(out.data() + h.strings_offset, strings.data(), strings.size());
  if (!records.empty()) {
    memcpy(out.data() + h.records_offset, records.data(), records.size() * sizeof(records[0]));
  }
  return out;
}

}  // namespace heapgraph::synthetic
