#include "scanner/ResultChannel.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "heap/platform/WriteAt.h"

namespace heapgraph::scanner {
namespace {

enum class Outcome { kComplete, kTruncated, kGarbled };

// The file's size as the header's counts say it must be; false if that overflows.
bool ExpectedSize(const ResultChannel::Header& header, uint64_t* size) {
  uint64_t blocks, edges;
  return !__builtin_mul_overflow(header.leaked_count, sizeof(LeakedBlock), &blocks) &&
         !__builtin_mul_overflow(header.edge_count, sizeof(ResultChannel::Edge), &edges) &&
         !__builtin_add_overflow(blocks, edges, size) &&
         !__builtin_add_overflow(*size, sizeof(ResultChannel::Header), size);
}

// Whether the header's counts fit the file `fd` exactly.
Outcome CheckSize(int fd, const ResultChannel::Header& header) {
  struct stat file;
  uint64_t expected;
  if (!ExpectedSize(header, &expected)) return Outcome::kGarbled;
  if (fstat(fd, &file) != 0 || static_cast<uint64_t>(file.st_size) < expected) {
    return Outcome::kTruncated;
  }
  return static_cast<uint64_t>(file.st_size) == expected ? Outcome::kComplete : Outcome::kGarbled;
}

// Appends `count` Ts read from `fd` at `offset`, each accepted by valid(t): through a small buffer
// into reserved capacity, so the vector's fresh pages are written once (resize would zero them
// first) and the file's pages are never mapped here. `count` fits the file (CheckSize).
template <typename T, typename Valid>
Outcome ReadArray(int fd, off_t offset, uint64_t count, std::vector<T>* out, Valid valid) {
  constexpr size_t kChunk = (16u << 10) / sizeof(T);
  out->clear();
  out->reserve(count);
  alignas(T) unsigned char buffer[kChunk * sizeof(T)];
  while (out->size() < count) {
    size_t want = std::min<uint64_t>(kChunk, count - out->size());
    ssize_t bytes = static_cast<ssize_t>(want * sizeof(T));
    if (pread(fd, buffer, static_cast<size_t>(bytes), offset) != bytes) return Outcome::kTruncated;
    auto* first = reinterpret_cast<const T*>(buffer);
    if (!std::all_of(first, first + want, valid)) return Outcome::kGarbled;
    out->insert(out->end(), first, first + want);
    offset += bytes;
  }
  return Outcome::kComplete;
}

Outcome ReadArrays(int fd, const ResultChannel::Header& header, ScanResult* result) {
  const uint64_t leaked = header.leaked_count;
  Outcome outcome = ReadArray(fd, sizeof(header), leaked, &result->leaked,
                              [](const LeakedBlock&) { return true; });
  if (outcome != Outcome::kComplete) return outcome;
  off_t edges_offset = static_cast<off_t>(sizeof(header) + leaked * sizeof(LeakedBlock));
  return ReadArray(
      fd, edges_offset, header.edge_count, &result->edges,
      [leaked](const ResultChannel::Edge& e) { return e.first < leaked && e.second < leaked; });
}

void SetStats(const ResultChannel::Totals& totals, ScanStats* stats) {
  stats->live_blocks = totals.live_blocks;
  stats->live_bytes = totals.live_bytes;
  stats->root_ranges = totals.root_ranges;
  stats->root_bytes = totals.root_bytes;
  stats->heap_words_scanned = totals.heap_words;
  stats->unreadable_pages = totals.unreadable_pages;
  stats->absent_pages = totals.absent_pages;
}

}  // namespace

bool ResultChannel::Write(int fd, const Totals& totals, std::span<const LeakedBlock> leaked,
                          std::span<const Edge> edges) {
  Header header = {};
  header.magic = kMagic;
  header.leaked_count = leaked.size();
  header.edge_count = edges.size();
  header.totals = totals;
  return WriteAt(fd, &header, sizeof(header), 0) &&
         WriteAt(fd, leaked.data(), leaked.size_bytes(), sizeof(header)) &&
         WriteAt(fd, edges.data(), edges.size_bytes(),
                 static_cast<off_t>(sizeof(header) + leaked.size_bytes()));
}

bool ResultChannel::WriteError(int fd, const char* what, const char* detail) {
  Header header = {};
  header.magic = kMagic;
  if (detail != nullptr) {
    snprintf(header.error, sizeof(header.error), "%s: %s", what, detail);
  } else {
    snprintf(header.error, sizeof(header.error), "%s", what);
  }
  return WriteAt(fd, &header, sizeof(header), 0);
}

bool ResultChannel::Read(int fd, ScanResult* result) {
  Header header;
  if (pread(fd, &header, sizeof(header), 0) != static_cast<ssize_t>(sizeof(header)) ||
      header.magic != kMagic) {
    result->error = "the snapshot process wrote no result";
    return false;
  }
  if (header.error[0] != '\0') {
    result->error = std::string(header.error, strnlen(header.error, sizeof(header.error)));
    return false;
  }
  Outcome outcome = CheckSize(fd, header);
  if (outcome == Outcome::kComplete) outcome = ReadArrays(fd, header, result);
  if (outcome != Outcome::kComplete) {
    result->error = outcome == Outcome::kTruncated ? "the snapshot process wrote a truncated result"
                                                   : "the snapshot process wrote a garbled result";
    return false;
  }
  SetStats(header.totals, &result->stats);
  return true;
}

}  // namespace heapgraph::scanner
