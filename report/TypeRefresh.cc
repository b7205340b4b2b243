#include "report/TypeRefresh.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <unordered_map>

#include "heap/PersistedFormat.h"
#include "scanner/VtableTypeReader.h"

namespace heapgraph::report {
namespace {

struct Candidate {
  uint64_t address;
  uint32_t seq;
};

// Blocks of at least two words (a vptr and something), shard by shard. Capacity is reserved
// before a shard is locked: growing the vector there would free the old buffer, and that free
// could need the very shard lock this thread holds.
std::vector<Candidate> CopyBlocks(LiveAllocationTree& heap, uint64_t* read) {
  std::vector<Candidate> blocks;
  for (uint32_t s = 0; s < heap.shard_count(); ++s) {
    HashShard& shard = heap.shard(s);
    blocks.reserve(blocks.size() + shard.live_count() + 256);
    shard.Lock();
    shard.ForEach([&](const BlockRecord& b) {
      ++*read;
      if (b.size >= 2 * sizeof(uint64_t) && blocks.size() < blocks.capacity()) {
        blocks.push_back({b.address, b.seq});
      }
    });
    shard.Unlock();
  }
  return blocks;
}

// First words of blocks [first, first + count) into `words`, one by one (a batch of single-word
// reads); an unreadable block reads as 0.
void ReadEachFirstWord(const std::vector<Candidate>& blocks, size_t first, size_t count,
                       uint64_t* words) {
  constexpr size_t kBatch = 512;  // below IOV_MAX
  struct iovec local[kBatch], remote[kBatch];
  size_t done = 0;
  while (done < count) {
    size_t n = std::min(kBatch, count - done);
    for (size_t i = 0; i < n; ++i) {
      words[done + i] = 0;
      local[i] = {&words[done + i], sizeof(uint64_t)};
      remote[i] = {reinterpret_cast<void*>(blocks[first + done + i].address), sizeof(uint64_t)};
    }
    ssize_t got = process_vm_readv(getpid(), local, n, remote, n, 0);
    // Stops at the first unreadable block: skip it and go on after it.
    size_t whole = got < 0 ? 0 : static_cast<size_t>(got) / sizeof(uint64_t);
    done += whole < n ? whole + 1 : n;
  }
}

// First words of address-sorted blocks [first, first + count). Blocks close together are read as
// one range (kRun bytes at most, no gap over a page), which costs one copy instead of one page
// walk per block; a range that is not wholly readable falls back to ReadEachFirstWord.
void ReadFirstWords(const std::vector<Candidate>& blocks, size_t first, size_t count,
                    uint64_t* words, std::vector<char>& buffer) {
  constexpr uint64_t kRun = 64 * 1024, kMaxGap = 4096;
  for (size_t begin = 0; begin < count;) {
    uint64_t start = blocks[first + begin].address;
    size_t end = begin + 1;
    while (end < count && blocks[first + end].address + sizeof(uint64_t) - start <= kRun &&
           blocks[first + end].address - blocks[first + end - 1].address <= kMaxGap) {
      ++end;
    }
    uint64_t length = blocks[first + end - 1].address + sizeof(uint64_t) - start;
    buffer.resize(kRun);
    struct iovec local = {buffer.data(), length};
    struct iovec remote = {reinterpret_cast<void*>(start), length};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(length)) {
      for (size_t i = begin; i < end; ++i) {
        memcpy(&words[i], buffer.data() + (blocks[first + i].address - start), sizeof(uint64_t));
      }
    } else {
      ReadEachFirstWord(blocks, first + begin, end - begin, words + begin);
    }
    begin = end;
  }
}

uint64_t Align8(uint64_t v) {
  return (v + 7) & ~uint64_t{7};
}

}  // namespace

TypeSnapshot TypeRefresh::Take(LiveAllocationTree& heap) {
  TypeSnapshot snapshot;
  std::vector<Candidate> blocks = CopyBlocks(heap, &snapshot.blocks_read);
  std::sort(blocks.begin(), blocks.end(),
            [](const Candidate& a, const Candidate& b) { return a.address < b.address; });
  scanner::VtableTypeReader reader;
  std::unordered_map<const std::string*, uint32_t> index;
  constexpr size_t kChunk = 4096;
  uint64_t words[kChunk];
  std::vector<char> buffer;
  constexpr uint32_t kUntyped = UINT32_MAX;
  uint64_t last_word = 0;
  uint32_t last_type = kUntyped;
  for (size_t first = 0; first < blocks.size(); first += kChunk) {
    size_t count = std::min(kChunk, blocks.size() - first);
    ReadFirstWords(blocks, first, count, words, buffer);
    for (size_t i = 0; i < count; ++i) {
      if (words[i] == 0) continue;
      if (words[i] != last_word) {  // neighbours are often of one type: skip the lookups
        const std::string* name = reader.TypeOf(words[i]);
        last_word = words[i];
        last_type = kUntyped;
        if (name != nullptr) {
          auto [it, added] = index.try_emplace(name, static_cast<uint32_t>(snapshot.names.size()));
          if (added) snapshot.names.push_back(*name);
          last_type = it->second;
        }
      }
      if (last_type == kUntyped) continue;
      snapshot.blocks.push_back({blocks[first + i].address, blocks[first + i].seq, last_type});
    }
  }
  return snapshot;
}

bool TypeRefresh::Write(const TypeSnapshot& snapshot, int dir_fd, uint64_t sequence) {
  format::TypesHeader h = {};
  memcpy(h.file.magic, format::kTypesMagic, sizeof(h.file.magic));
  h.file.version = 1;
  h.file.header_size = sizeof(h);
  h.record_size = sizeof(format::TypeRecord);
  h.name_count = static_cast<uint32_t>(snapshot.names.size());
  std::vector<format::TypeName> names;
  std::string strings;
  for (const std::string& n : snapshot.names) {
    uint32_t length = static_cast<uint32_t>(std::min<size_t>(n.size(), format::kMaxTypeNameLength));
    names.push_back({static_cast<uint32_t>(strings.size()), length});
    strings.append(n, 0, length);
    strings.push_back('\0');
  }
  std::vector<format::TypeRecord> records;
  records.reserve(snapshot.blocks.size());
  for (const TypedBlock& b : snapshot.blocks) records.push_back({b.address, b.seq, b.type});
  h.names_offset = Align8(sizeof(h));
  h.strings_offset = Align8(h.names_offset + names.size() * sizeof(format::TypeName));
  h.strings_size = strings.size();
  h.records_offset = Align8(h.strings_offset + strings.size());
  h.record_count = records.size();
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  h.written_realtime_ns =
      static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
  h.sequence = sequence;
  std::string tmp = std::string(format::kTypesFile) + ".tmp";
  int fd = openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = pwrite(fd, &h, sizeof(h), 0) == sizeof(h) &&
            pwrite(fd, names.data(), names.size() * sizeof(format::TypeName),
                   static_cast<off_t>(h.names_offset)) >= 0 &&
            pwrite(fd, strings.data(), strings.size(), static_cast<off_t>(h.strings_offset)) >= 0 &&
            pwrite(fd, records.data(), records.size() * sizeof(format::TypeRecord),
                   static_cast<off_t>(h.records_offset)) >= 0 &&
            ftruncate(fd, static_cast<off_t>(h.records_offset +
                                             records.size() * sizeof(format::TypeRecord))) == 0;
  close(fd);
  return ok && renameat(dir_fd, tmp.c_str(), dir_fd, format::kTypesFile) == 0;
}

}  // namespace heapgraph::report

// libheapgraph_scan.so's entry for the memory-pressure watcher (heap/PressureWatcher).
extern "C" __attribute__((visibility("default"))) int heapgraph_internal_refresh_types(
    const HeapgraphTypeRefresh* request) {
  if (request == nullptr || request->heap == nullptr) return -1;
  try {
    heapgraph::report::TypeSnapshot snapshot = heapgraph::report::TypeRefresh::Take(*request->heap);
    if (!heapgraph::report::TypeRefresh::Write(snapshot, request->dir_fd, request->sequence)) {
      return -1;
    }
    return static_cast<int>(snapshot.blocks.size());
  } catch (const std::exception&) {
    return -1;
  }
}
