// tests/reader: the bytes of a synthetic `lag` file (format::LagHeader, format::LagRecord), for the
// tests of reader/LagRecords and report/LagReport.
#pragma once

#include <cstring>
#include <string>

#include "heap/store/PersistedFormat.h"

namespace heapgraph::lagfile {

inline std::string LagHeaderBytes() {
  format::LagHeader h = {};
  memcpy(h.file.magic, format::kLagMagic, 8);
  h.file.version = 1;
  h.file.header_size = sizeof(h);
  h.record_size = sizeof(format::LagRecord);
  h.interval_ms = 1000;
  h.threshold_ms = 2000;
  h.sample_ms = 50;
  h.ring = 20;
  h.cpu_percent = 80;
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h));
}

// `r` with its tag and check word set.
inline std::string LagRecordBytes(format::LagRecord r) {
  r.tag = format::kLagRecordTag;
  r.check = format::LagCheck(r);
  return std::string(reinterpret_cast<const char*>(&r), sizeof(r));
}

// A record of thread 42.
inline std::string LagRecordBytes(uint32_t kind, uint64_t unit, uint32_t stack) {
  format::LagRecord r = {};
  r.kind = kind;
  r.unit = unit;
  r.tid = 42;
  r.stack = stack;
  return LagRecordBytes(r);
}

}  // namespace heapgraph::lagfile
