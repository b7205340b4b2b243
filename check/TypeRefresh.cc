#include "check/TypeRefresh.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <unordered_map>

#include "heap/platform/WriteAt.h"
#include "heap/plugin/ExclusiveCheck.h"
#include "heap/store/PersistedFormat.h"
#include "heapgraph/heapgraph.h"
#include "report/TypeNamer.h"
#include "scanner/BlockIndex.h"
#include "scanner/types/BuiltInReaders.h"
#include "scanner/types/LiveMemory.h"
#include "scanner/types/SnapshotMemory.h"

namespace heapgraph::report {
namespace {

using scanner::BlockIndex;
using scanner::BlockRange;
using scanner::MmapAllocator;
namespace types = scanner::types;

struct Candidate {
  uint64_t address;
  uint64_t size;
  uint32_t seq;
};

// Every live block, shard by shard. Capacity is reserved before a shard is locked: growing the
// vector there would free the old buffer, and that free could need the very shard lock this
// thread holds (blocks added meanwhile beyond the reserve are left out).
std::vector<Candidate> CopyBlocks(LiveAllocationTree& heap, uint64_t* read) {
  std::vector<Candidate> blocks;
  for (uint32_t s = 0; s < heap.shard_count(); ++s) {
    SlabShard& shard = heap.shard(s);
    blocks.reserve(blocks.size() + shard.live_count() + 256);
    shard.Lock();
    shard.ForEach([&](const BlockRecord& b) {
      if (blocks.size() < blocks.capacity()) blocks.push_back({b.address, b.size, b.seq});
    });
    shard.Unlock();
  }
  *read = blocks.size();
  return blocks;
}

// Sorted by address without overlaps (BlockIndex's precondition): shards are copied at different
// moments, so a block freed in one shard's copy and a block reusing its memory in a later shard's
// may both appear; the later-starting one is dropped.
void SortDisjoint(std::vector<Candidate>& blocks) {
  std::sort(blocks.begin(), blocks.end(),
            [](const Candidate& a, const Candidate& b) { return a.address < b.address; });
  size_t kept = 0;
  uint64_t end = 0;
  for (const Candidate& c : blocks) {
    if (kept != 0 && c.address < end) continue;
    blocks[kept++] = c;
    end = c.address + std::max<uint64_t>(c.size, 1);
  }
  blocks.resize(kept);
}

uint64_t Align8(uint64_t v) {
  return (v + 7) & ~uint64_t{7};
}

}  // namespace

TypeRefresh::TypeRefresh() : readers_(/*field_layouts=*/false) {}

std::string TypeRefresh::Name(const types::TypeDescription& d, const types::ReaderSet& readers) {
  if (symbolizer_ == nullptr) symbolizer_ = std::make_unique<Symbolizer>();
  return TypeNamer::Name(d, readers.modules(), *symbolizer_);
}

TypeSnapshot TypeRefresh::Take(LiveAllocationTree& heap) {
  TypeSnapshot snapshot;
  std::shared_ptr<types::ReaderSet> readers = readers_.Get();
  std::vector<Candidate> blocks = CopyBlocks(heap, &snapshot.blocks_read);
  SortDisjoint(blocks);
  std::vector<BlockRange, MmapAllocator<BlockRange>> ranges;
  ranges.reserve(blocks.size());
  for (const Candidate& c : blocks) ranges.push_back({c.address, c.size});
  BlockIndex index(std::move(ranges));
  types::LiveMemory live;
  types::SnapshotMemory memory(index, readers->modules(), live);
  std::vector<types::TypeIdentity> identities(blocks.size());
  readers->IdentifyAll(memory, identities);
  snapshot.copies = live.copies();
  // Descriptions live in the set's cache (stable addresses): one name per distinct description.
  std::unordered_map<const types::TypeDescription*, uint32_t> type_of;
  std::unordered_map<std::string, uint32_t> by_name;
  types::TypeIdentity last;  // neighbours are often of one type: skip the lookups
  uint32_t last_type = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (!identities[i].typed()) continue;
    if (!(identities[i] == last)) {
      const types::TypeDescription& d = readers->Describe(identities[i]);
      auto [it, added] = type_of.try_emplace(&d, 0);
      if (added) {
        auto [named, fresh] =
            by_name.try_emplace(Name(d, *readers), static_cast<uint32_t>(snapshot.names.size()));
        if (fresh) snapshot.names.push_back(named->first);
        it->second = named->second;
      }
      last = identities[i];
      last_type = it->second;
    }
    snapshot.blocks.push_back({blocks[i].address, blocks[i].seq, last_type});
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
  uint64_t end = h.records_offset + records.size() * sizeof(format::TypeRecord);
  bool ok =
      WriteAt(fd, &h, sizeof(h), 0) &&
      WriteAt(fd, names.data(), names.size() * sizeof(format::TypeName), h.names_offset) &&
      WriteAt(fd, strings.data(), strings.size(), h.strings_offset) &&
      WriteAt(fd, records.data(), records.size() * sizeof(format::TypeRecord), h.records_offset) &&
      ftruncate(fd, static_cast<off_t>(end)) == 0;
  close(fd);
  // A partial file is never renamed into place: the previous types file (if any) stays.
  if (ok && renameat(dir_fd, tmp.c_str(), dir_fd, format::kTypesFile) == 0) return true;
  unlinkat(dir_fd, tmp.c_str(), 0);
  return false;
}

}  // namespace heapgraph::report

// libheapgraph_scan.so's entry for the memory-pressure watcher (heap/PressureWatcher).
extern "C" HEAPGRAPH_API int heapgraph_internal_refresh_types(const HeapgraphTypeRefresh* request) {
  if (request == nullptr || request->heap == nullptr) return -1;
  // No check runs meanwhile: the refresh's arrays hold every live block's address, and those
  // of an unrecorded tool thread that malloc mmaps are plain anonymous memory, a root for a check.
  heapgraph::ExclusiveCheck exclusive(heapgraph::RecorderEntries::Get(), 0);
  if (exclusive.refused()) return -1;
  try {
    // One refresh at a time (the watcher's thread); the readers stay prepared between refreshes.
    // Never destroyed: the watcher may still run while the process exits.
    static auto* refresh = new heapgraph::report::TypeRefresh();
    heapgraph::report::TypeSnapshot snapshot = refresh->Take(*request->heap);
    if (!heapgraph::report::TypeRefresh::Write(snapshot, request->dir_fd, request->sequence)) {
      return -1;
    }
    return static_cast<int>(snapshot.blocks.size());
  } catch (const std::exception&) {
    return -1;
  }
}
