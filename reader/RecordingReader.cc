#include "reader/RecordingReader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>
#include <utility>

#include "reader/ByteSize.h"

namespace heapgraph {

using format::AllocFunction;
using format::FileHeader;
using format::HashShardHeader;
using format::HashSlot;
using format::ModuleHeader;
using format::ModuleRecord;
using format::SessionHeader;
using format::ShardHeader;
using format::StackHeader;
using format::TreeHeader;
using format::TreeNode;

namespace {

// The writer puts the ShardHeaders right after the TreeHeader, at the ShardHeader alignment.
constexpr uint64_t kShardHeadersOffset = alignof(ShardHeader);
static_assert(sizeof(TreeHeader) <= kShardHeadersOffset);
constexpr uint32_t kMaxShards = 4096;
constexpr uint64_t kMaxShardCapacity = uint64_t{1} << 32;  // node indices are 32-bit
constexpr uint64_t kMaxHashCapacity = uint64_t{1} << 31;   // `writing` holds 1 + a slot index
constexpr uint32_t kMinSlotBits = 10, kMaxSlotBits = 30;
constexpr uint64_t kNodesPerRead = 4096;
// A module-map rewrite takes microseconds; a writer that died mid-rewrite never finishes.
constexpr int kModuleReadAttempts = 5;
constexpr std::chrono::microseconds kModuleRetryDelay{100};
constexpr uint64_t kLowMask = (uint64_t{1} << format::kStackLowBits) - 1;
constexpr uint32_t kParentShift = format::kStackLowBits + format::kStackPrefixBits;

[[noreturn]] void Fail(const std::string& file, const std::string& problem) {
  throw RecordingError(file + ": " + problem);
}

std::string Num(uint64_t value) {
  return std::to_string(value);
}

// `name` in `directory`: nullopt only when it does not exist (InputFile refuses links, FIFOs and
// devices with one line).
std::optional<InputFile> OpenInput(const std::string& directory, const char* name) {
  return InputFile::Open(directory + "/" + name, name);
}

// `name` through the caller's descriptor when it gave one, else opened in `directory`.
std::optional<InputFile> OpenInput(const std::string& directory,
                                   const RecordingReader::OpenFiles& open_files, const char* name) {
  auto open = open_files.find(name);
  if (open == open_files.end()) return OpenInput(directory, name);
  return InputFile::Adopt(open->second, name);
}

std::string MagicName(const char (&magic)[8]) {
  std::string name;
  for (char c : magic) name += (c >= 0x21 && c <= 0x7e) ? c : '?';
  return name;
}

void CheckMagic(const InputFile& file, const FileHeader& header, const char (&expected)[8]) {
  if (memcmp(header.magic, expected, sizeof(expected)) == 0) return;
  for (const char* other :
       {format::kTreeMagic, format::kStackMagic, format::kModuleMagic, format::kSessionMagic}) {
    if (memcmp(header.magic, other, sizeof(header.magic)) == 0) {
      Fail(file.name(), "wrong file type (magic " + MagicName(header.magic) + ", expected " +
                            MagicName(expected) + ")");
    }
  }
  Fail(file.name(), "not a heapgraph file (bad magic)");
}

// Reads and checks the FileHeader, then reads the whole header struct H into `out`. Invariant
// afterwards: header_size >= sizeof(H) and the file holds at least header_size bytes.
// Versions kVersion..max_version are accepted (only tree files have a version 2).
// `min_size`: the smallest header_size accepted (older versions of H are shorter); only the
// first min(header_size, sizeof(H)) bytes are read, the rest of *out is left as it was.
template <typename H>
void ReadHeader(const InputFile& file, const char (&magic)[8], H* out,
                uint32_t max_version = format::kVersion, uint64_t min_size = sizeof(H)) {
  FileHeader header;
  if (file.size() < sizeof(header)) {
    Fail(file.name(), "truncated (file is " + Num(file.size()) + " bytes, header needs " +
                          Num(sizeof(header)) + ")");
  }
  file.ReadAt(0, &header, sizeof(header), "file header");
  CheckMagic(file, header, magic);
  if (header.version < format::kVersion || header.version > max_version) {
    std::string known = Num(format::kVersion);
    for (uint32_t v = format::kVersion + 1; v <= max_version; ++v) {
      known += (v == max_version ? " and " : ", ") + Num(v);
    }
    Fail(file.name(), "unsupported format version " + Num(header.version) + " (this reader knows " +
                          known + ")");
  }
  if (header.header_size < min_size) {
    Fail(file.name(),
         "corrupt header (header_size " + Num(header.header_size) + " < " + Num(min_size) + ")");
  }
  if (file.size() < header.header_size) {
    Fail(file.name(), "truncated (file is " + Num(file.size()) + " bytes, header needs " +
                          Num(header.header_size) + ")");
  }
  file.ReadAt(0, out, std::min<uint64_t>(header.header_size, sizeof(H)), "header");
}

[[noreturn]] void CorruptHeader(const InputFile& file, const char* field, uint64_t value) {
  Fail(file.name(), std::string("corrupt header (") + field + " " + Num(value) + ")");
}

bool IsPowerOfTwo(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

// Version 1 (splay nodes) and version 2 (hash slots) share TreeHeader and the 64-byte shard
// header stride; they differ in node_size and in the shard header's fields.
void ValidateTreeHeader(const InputFile& file, const TreeHeader& h) {
  bool hash = h.file.version >= format::kHashTreeVersion;
  uint64_t node_size = hash ? sizeof(HashSlot) : sizeof(TreeNode);
  if (h.node_size != node_size) {
    Fail(file.name(), "unsupported node size " + Num(h.node_size) + " (version " +
                          Num(h.file.version) + " has " + Num(node_size) + ")");
  }
  if (h.shard_count > kMaxShards || !IsPowerOfTwo(h.shard_count)) {
    CorruptHeader(file, "shard_count", h.shard_count);
  }
  if (h.shard_shift >= 64) CorruptHeader(file, "shard_shift", h.shard_shift);
  if (h.shard_capacity == 0 || h.shard_capacity > (hash ? kMaxHashCapacity : kMaxShardCapacity)) {
    CorruptHeader(file, "shard_capacity", h.shard_capacity);
  }
  static_assert(sizeof(ShardHeader) == sizeof(HashShardHeader));
  uint64_t headers_end = kShardHeadersOffset + uint64_t{h.shard_count} * sizeof(ShardHeader);
  if (h.nodes_offset % format::kPageSize != 0 || h.nodes_offset < headers_end) {
    CorruptHeader(file, "nodes_offset", h.nodes_offset);
  }
}

bool IsKnownFunction(AllocFunction f) {
  switch (f) {
    case AllocFunction::kMalloc:
    case AllocFunction::kCalloc:
    case AllocFunction::kRealloc:
    case AllocFunction::kReallocArray:
    case AllocFunction::kMemalign:
    case AllocFunction::kPosixMemalign:
    case AllocFunction::kAlignedAlloc:
    case AllocFunction::kValloc:
    case AllocFunction::kPvalloc:
    case AllocFunction::kMmap:
    case AllocFunction::kMremap:
      return true;
    case AllocFunction::kNone:
      break;
  }
  return false;
}

enum class NodeState { kFree, kLive, kInvalid };

// Free nodes are all-zero in address and function; live ones carry a known function and a
// nonzero address. Anything else is inconsistent and is never turned into a block.
NodeState Classify(const TreeNode& node) {
  if (node.function == AllocFunction::kNone) {
    return node.address() == 0 ? NodeState::kFree : NodeState::kInvalid;
  }
  if (!IsKnownFunction(node.function) || node.address() == 0) return NodeState::kInvalid;
  return NodeState::kLive;
}

// Where ReadTree appends what it finds.
struct TreeOutput {
  std::vector<LiveBlock>* blocks;
  std::vector<TornNode>* torn;
  std::vector<ShardStats>* shards;
};

ShardStats ReadShardHeader(const InputFile& file, TreeKind kind, const TreeHeader& h,
                           uint32_t shard, uint32_t* writing) {
  ShardHeader header;
  file.ReadAt(kShardHeadersOffset + uint64_t{shard} * sizeof(ShardHeader), &header, sizeof(header),
              "shard header");
  std::string where = "shard " + Num(shard) + " corrupt (";
  if (header.used > h.shard_capacity) {
    Fail(file.name(),
         where + "used " + Num(header.used) + " > capacity " + Num(h.shard_capacity) + ")");
  }
  if (header.writing > h.shard_capacity) {
    Fail(file.name(),
         where + "writing " + Num(header.writing) + " > capacity " + Num(h.shard_capacity) + ")");
  }
  *writing = header.writing;
  return ShardStats{
      kind,          shard, header.used, h.shard_capacity, header.live_count, header.live_bytes,
      header.dropped};
}

// Reads nodes [1, used) of one shard in bounded chunks (memory stays O(kNodesPerRead) however
// large `used` claims to be; the extent check already proved the file holds them).
void ReadShardNodes(const InputFile& file, const TreeHeader& h, const ShardStats& stats,
                    uint32_t writing, const TreeOutput& out) {
  if (writing != 0) out.torn->push_back({stats.tree, stats.shard, writing - 1, true, 1});
  if (stats.used <= 1) return;
  // shard * capacity * 28 < 2^12 * 2^32 * 2^5 cannot overflow; adding nodes_offset can.
  uint64_t base;
  if (__builtin_add_overflow(h.nodes_offset,
                             uint64_t{stats.shard} * h.shard_capacity * sizeof(TreeNode), &base)) {
    Fail(file.name(), "corrupt (shard node array lies beyond 2^64)");
  }
  file.CheckExtent(base, uint64_t{stats.used} * sizeof(TreeNode), "shard node array");
  std::vector<TreeNode> chunk(std::min<uint64_t>(kNodesPerRead, stats.used - 1));
  for (uint32_t first = 1; first < stats.used;) {
    uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(chunk.size(), stats.used - first));
    file.ReadAt(base + uint64_t{first} * sizeof(TreeNode), chunk.data(), n * sizeof(TreeNode),
                "shard node array");
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t index = first + i;
      if (writing != 0 && index == writing - 1) continue;  // torn: already reported
      const TreeNode& node = chunk[i];
      NodeState state = Classify(node);
      if (state == NodeState::kInvalid) {
        out.torn->push_back({stats.tree, stats.shard, index, false, 1});
      }
      if (state != NodeState::kLive) continue;
      out.blocks->push_back({node.address(), node.size(), node.function, node.stack, node.seq,
                             stats.shard, stats.tree});
    }
    first += n;
  }
}

// Free hash slots are all zero; live ones carry a known function, a nonzero address and zero in
// the size word's unused bits 40-54 (bit 55 is the ignored flag).
NodeState ClassifySlot(const HashSlot& slot) {
  constexpr uint64_t kUnusedBits =
      ((uint64_t{1} << 56) - 1) & ~format::kMaxBlockSize & ~HashSlot::kIgnoredBit;
  if (slot.address == 0) {
    bool zero = slot.size_function == 0 && slot.stack == 0 && slot.seq == 0;
    return zero ? NodeState::kFree : NodeState::kInvalid;
  }
  if (!IsKnownFunction(slot.function()) || (slot.size_function & kUnusedBits) != 0) {
    return NodeState::kInvalid;
  }
  return NodeState::kLive;
}

// Reads a version-2 shard header. ShardStats.used is the table's current capacity (slots
// [0, used) are read), ShardStats.capacity the most slots the shard may grow to.
ShardStats ReadHashShardHeader(const InputFile& file, TreeKind kind, const TreeHeader& h,
                               uint32_t shard, uint32_t* writing) {
  HashShardHeader header;
  file.ReadAt(kShardHeadersOffset + uint64_t{shard} * sizeof(HashShardHeader), &header,
              sizeof(header), "shard header");
  std::string where = "shard " + Num(shard) + " corrupt (";
  if (header.capacity > h.shard_capacity) {
    Fail(file.name(), where + "capacity " + Num(header.capacity) + " > shard_capacity " +
                          Num(h.shard_capacity) + ")");
  }
  // The owner counts its inserts and its own frees, other threads their frees (SlabShard.h).
  const uint64_t live_count = header.live_count - header.freed_elsewhere_count;
  const uint64_t live_bytes = header.live_bytes - header.freed_elsewhere_bytes;
  if (live_count > header.capacity) {
    Fail(file.name(),
         where + "live_count " + Num(live_count) + " > capacity " + Num(header.capacity) + ")");
  }
  if (header.writing > header.capacity && header.writing != format::kRehashing) {
    Fail(file.name(),
         where + "writing " + Num(header.writing) + " > capacity " + Num(header.capacity) + ")");
  }
  *writing = header.writing;
  return ShardStats{kind,
                    shard,
                    static_cast<uint32_t>(header.capacity),
                    h.shard_capacity,
                    live_count,
                    live_bytes,
                    header.dropped};
}

// Reads slots [0, capacity) of one version-2 shard in bounded chunks. A shard caught mid-rehash
// (hash-table writers before session 16) is reported as one torn entry holding its live_count
// records, and none of its slots is read.
void ReadHashShardSlots(const InputFile& file, const TreeHeader& h, const ShardStats& stats,
                        uint32_t writing, const TreeOutput& out) {
  uint64_t base;  // shard * capacity * 24 < 2^12 * 2^31 * 2^5 cannot overflow; the sum can
  if (__builtin_add_overflow(h.nodes_offset,
                             uint64_t{stats.shard} * h.shard_capacity * sizeof(HashSlot), &base)) {
    Fail(file.name(), "corrupt (shard slot array lies beyond 2^64)");
  }
  if (stats.used == 0) return;  // no table yet (writing is 0: validated against capacity)
  file.CheckExtent(base, uint64_t{stats.used} * sizeof(HashSlot), "shard slot array");
  if (writing == format::kRehashing) {
    out.torn->push_back({stats.tree, stats.shard, format::kRehashing, true, stats.live_count});
    return;
  }
  if (writing != 0) out.torn->push_back({stats.tree, stats.shard, writing - 1, true, 1});
  std::vector<HashSlot> chunk(std::min<uint64_t>(kNodesPerRead, stats.used));
  for (uint32_t first = 0; first < stats.used;) {
    uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(chunk.size(), stats.used - first));
    file.ReadAt(base + uint64_t{first} * sizeof(HashSlot), chunk.data(), n * sizeof(HashSlot),
                "shard slot array");
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t index = first + i;
      if (writing != 0 && index == writing - 1) continue;  // torn: already reported
      const HashSlot& slot = chunk[i];
      NodeState state = ClassifySlot(slot);
      if (state == NodeState::kInvalid)
        out.torn->push_back({stats.tree, stats.shard, index, false, 1});
      if (state != NodeState::kLive) continue;
      out.blocks->push_back({slot.address, slot.size(), slot.function(), slot.stack, slot.seq,
                             stats.shard, stats.tree});
    }
    first += n;
  }
}

// Returns the sample mean of a sampled heap.tree (version 3), else 0.
uint64_t ReadTree(const InputFile& file, TreeKind kind, const TreeOutput& out,
                  uint32_t max_version) {
  TreeHeader h{};  // shard_group stays 0 in a file written before it existed (a shorter header)
  ReadHeader(file, format::kTreeMagic, &h, max_version, offsetof(TreeHeader, shard_group));
  ValidateTreeHeader(file, h);
  uint64_t sample_mean = h.file.version == format::kSampledTreeVersion ? h.sample_mean : 0;
  if (h.file.version == format::kSampledTreeVersion && sample_mean == 0) {
    CorruptHeader(file, "sample_mean", 0);
  }
  if (h.file.version >= format::kHashTreeVersion) {
    for (uint32_t shard = 0; shard < h.shard_count; ++shard) {
      uint32_t writing = 0;
      ShardStats stats = ReadHashShardHeader(file, kind, h, shard, &writing);
      out.shards->push_back(stats);
      ReadHashShardSlots(file, h, stats, writing, out);
    }
    return sample_mean;
  }
  for (uint32_t shard = 0; shard < h.shard_count; ++shard) {
    uint32_t writing = 0;
    ShardStats stats = ReadShardHeader(file, kind, h, shard, &writing);
    out.shards->push_back(stats);
    ReadShardNodes(file, h, stats, writing, out);
  }
  return 0;
}

// A reason the record is unusable, or empty.
std::string ModuleProblem(const ModuleRecord& r) {
  if (memchr(r.path, '\0', sizeof(r.path)) == nullptr) return "path not NUL-terminated";
  if (r.segment_count > format::kMaxSegments) return "segment_count " + Num(r.segment_count);
  if (r.build_id_len > format::kMaxBuildId) return "build_id_len " + Num(r.build_id_len);
  if (r.state != format::kModuleLoaded && r.state != format::kModuleUnloaded) {
    return "state " + Num(r.state);
  }
  if (r.start > r.end) return "start above end";
  return "";
}

// One attempt at a consistent copy of the module records. True when the sequence was even and
// unchanged across the read (no writer was active).
bool ReadModuleSnapshot(const InputFile& file, uint32_t records_offset,
                        std::vector<ModuleRecord>* records) {
  ModuleHeader before, after;
  file.ReadAt(0, &before, sizeof(before), "header");
  uint32_t count = before.count.load(std::memory_order_relaxed);
  if (count > before.capacity) {
    Fail(file.name(),
         "corrupt header (count " + Num(count) + " > capacity " + Num(before.capacity) + ")");
  }
  uint64_t length = uint64_t{count} * sizeof(ModuleRecord);
  file.CheckExtent(records_offset, length, "module record array");
  records->assign(count, ModuleRecord{});
  file.ReadAt(records_offset, records->data(), length, "module record array");
  file.ReadAt(0, &after, sizeof(after), "header");
  uint32_t sequence = before.sequence.load(std::memory_order_relaxed);
  return sequence % 2 == 0 && sequence == after.sequence.load(std::memory_order_relaxed);
}

}  // namespace

std::string CategoryName(AllocFunction function, uint64_t size) {
  if (format::IsVmFunction(function)) return "VM: anonymous";
  return "Malloc " + ByteSize::Readable(size, ByteSize::Style::kCompact);
}

RecordingReader::RecordingReader(const std::string& directory)
    : RecordingReader(directory, Content::kEverything) {}

RecordingReader::RecordingReader(const std::string& directory, Content content)
    : RecordingReader(directory, content, {}) {}

RecordingReader::RecordingReader(const std::string& directory, Content content,
                                 OpenFiles open_files)
    : directory_(directory), open_files_(std::move(open_files)) {
  struct stat st;
  if (open_files_.empty() && stat(directory.c_str(), &st) != 0) {
    Fail(directory, std::string("cannot open recording directory (") + strerror(errno) + ")");
  }
  if (open_files_.empty() && !S_ISDIR(st.st_mode)) Fail(directory, "not a directory");
  if (content == Content::kEverything) {
    ReadTrees();
  } else if (!OpenInput(directory_, open_files_, format::kHeapTreeFile)) {
    Fail(directory_, std::string("not a recording directory (no ") + format::kHeapTreeFile + ")");
  }
  ReadStacks();
  ReadModules();
  ReadSession();
}

void RecordingReader::ReadTrees() {
  std::optional<InputFile> heap = OpenInput(directory_, open_files_, format::kHeapTreeFile);
  if (!heap) {
    Fail(directory_, std::string("not a recording directory (no ") + format::kHeapTreeFile + ")");
  }
  TreeOutput out{&blocks_, &torn_, &shards_};
  sample_mean_ = ReadTree(*heap, TreeKind::kHeap, out, format::kSampledTreeVersion);
  std::optional<InputFile> vm = OpenInput(directory_, open_files_, format::kVmTreeFile);
  if (!vm) {
    warnings_.push_back(std::string(format::kVmTreeFile) + ": missing (no VM blocks read)");
    return;
  }
  ReadTree(*vm, TreeKind::kVm, out, format::kHashTreeVersion);
}

void RecordingReader::ReadStacks() {
  std::optional<InputFile> file = OpenInput(directory_, open_files_, format::kStackFile);
  if (!file) Fail(format::kStackFile, "missing");
  auto h = std::make_unique<StackHeader>();
  ReadHeader(*file, format::kStackMagic, h.get());
  if (h->slot_bits < kMinSlotBits || h->slot_bits > kMaxSlotBits) {
    CorruptHeader(*file, "slot_bits", h->slot_bits);
  }
  if (h->max_depth > format::kMaxStackDepth) CorruptHeader(*file, "max_depth", h->max_depth);
  uint32_t prefix_count = h->prefix_count.load(std::memory_order_relaxed);
  if (prefix_count > format::kMaxStackPrefixes) {
    CorruptHeader(*file, "prefix_count", prefix_count);
  }
  if (h->slots_offset < sizeof(StackHeader) || h->slots_offset % sizeof(uint64_t) != 0) {
    CorruptHeader(*file, "slots_offset", h->slots_offset);
  }
  uint64_t slots = uint64_t{1} << h->slot_bits;
  file->CheckExtent(h->slots_offset, slots * sizeof(uint64_t), "slot table");
  stacks_ = file;
  slots_offset_ = h->slots_offset;
  stack_stats_ = {h->node_count.load(std::memory_order_relaxed),
                  h->stack_count.load(std::memory_order_relaxed),
                  slots,
                  h->dropped.load(std::memory_order_relaxed),
                  h->max_depth,
                  prefix_count};
  std::copy(std::begin(h->prefixes), std::end(h->prefixes), std::begin(prefixes_));
}

void RecordingReader::ReadModules() {
  std::optional<InputFile> file = OpenInput(directory_, open_files_, format::kModuleFile);
  if (!file) Fail(format::kModuleFile, "missing");
  ModuleHeader h;
  ReadHeader(*file, format::kModuleMagic, &h);
  if (h.record_size != sizeof(ModuleRecord)) {
    Fail(file->name(), "unsupported record size " + Num(h.record_size) + " (this reader knows " +
                           Num(sizeof(ModuleRecord)) + ")");
  }
  std::vector<ModuleRecord> records;
  bool stable = false;
  for (int attempt = 0; attempt < kModuleReadAttempts && !stable; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(kModuleRetryDelay);
    stable = ReadModuleSnapshot(*file, h.file.header_size, &records);
  }
  if (!stable) warnings_.push_back(file->name() + ": torn (writer was active)");
  // A stable snapshot must be fully valid; a torn one loses only the records it cannot trust.
  for (size_t i = 0; i < records.size(); ++i) {
    std::string problem = ModuleProblem(records[i]);
    if (problem.empty()) {
      modules_.push_back(records[i]);
    } else if (stable) {
      Fail(file->name(), "corrupt record " + Num(i) + " (" + problem + ")");
    }
  }
}

void RecordingReader::ReadSession() {
  std::optional<InputFile> file = OpenInput(directory_, open_files_, format::kSessionFile);
  if (!file) {
    warnings_.push_back(std::string(format::kSessionFile) + ": missing");
    return;
  }
  auto h = std::make_unique<SessionHeader>();
  memset(static_cast<void*>(h.get()), 0, sizeof(SessionHeader));
  ReadHeader(*file, format::kSessionMagic, h.get(), format::kSessionVersion,
             format::kSessionV1Size);
  if (memchr(h->executable, '\0', sizeof(h->executable)) == nullptr) {
    Fail(file->name(), "corrupt header (executable not NUL-terminated)");
  }
  bool has_record = h->file.version >= format::kSessionVersion;
  if (has_record && h->file.header_size < sizeof(SessionHeader)) {
    Fail(file->name(), "corrupt header (version 2 header_size " + Num(h->file.header_size) + " < " +
                           Num(sizeof(SessionHeader)) + ")");
  }
  format::SessionRecord& r = h->record;
  if (memchr(r.boot_id, '\0', sizeof(r.boot_id)) == nullptr ||
      memchr(r.oom_counter_path, '\0', sizeof(r.oom_counter_path)) == nullptr) {
    Fail(file->name(), "corrupt header (boot_id or oom_counter_path not NUL-terminated)");
  }
  if (r.exe_build_id_len > format::kMaxBuildId) {
    CorruptHeader(*file, "exe_build_id_len", r.exe_build_id_len);
  }
  session_ = SessionInfo{h->pid,
                         h->max_depth,
                         h->start_time_ns,
                         h->boot_time_ticks,
                         h->sequence.load(std::memory_order_relaxed),
                         h->state.load(std::memory_order_relaxed),
                         h->executable,
                         has_record,
                         r};
}

uint64_t RecordingReader::live_bytes() const {
  uint64_t total = 0;
  for (const LiveBlock& b : blocks_) total += b.size;
  return total;
}

uint64_t RecordingReader::dropped() const {
  uint64_t total = 0;
  for (const ShardStats& s : shards_) total += s.dropped;
  return total;
}

uint64_t RecordingReader::ReadSlot(uint64_t slot) const {
  uint64_t node = 0;
  stacks_->ReadAt(slots_offset_ + slot * sizeof(uint64_t), &node, sizeof(node), "slot table");
  return node;
}

std::vector<uint64_t> RecordingReader::Frames(uint32_t stack_id) const {
  std::vector<uint64_t> frames;
  if (stack_id == 0) return frames;
  const std::string corrupt = "corrupt node ";
  if (stack_id >= stack_stats_.slots) {
    Fail(format::kStackFile,
         corrupt + Num(stack_id) + " (stack id >= slot count " + Num(stack_stats_.slots) + ")");
  }
  // Invariant: `slot` < slots at the top of every iteration; the depth bound ends any cycle.
  for (uint64_t slot = stack_id;;) {
    if (frames.size() >= stack_stats_.max_depth) {
      Fail(format::kStackFile, corrupt + Num(slot) + " (stack " + Num(stack_id) +
                                   " longer than max_depth " + Num(stack_stats_.max_depth) + ")");
    }
    uint64_t node = ReadSlot(slot);
    if (node == 0) Fail(format::kStackFile, corrupt + Num(slot) + " (empty slot)");
    uint32_t prefix =
        static_cast<uint32_t>(node >> format::kStackLowBits) & (format::kMaxStackPrefixes - 1);
    if (prefix == 0 || prefix >= stack_stats_.prefix_count) {
      Fail(format::kStackFile, corrupt + Num(slot) + " (prefix index " + Num(prefix) +
                                   " not in [1, " + Num(stack_stats_.prefix_count) + "))");
    }
    frames.push_back((prefixes_[prefix] << format::kStackLowBits) | (node & kLowMask));
    uint64_t parent = node >> kParentShift;
    if (parent == 0) return frames;
    if (parent >= stack_stats_.slots) {
      Fail(format::kStackFile, corrupt + Num(slot) + " (parent " + Num(parent) + " >= slot count " +
                                   Num(stack_stats_.slots) + ")");
    }
    slot = parent;
  }
}

std::vector<uint64_t> RecordingReader::ReturnAddresses(const std::function<bool()>& stop) const {
  constexpr uint64_t kChunkSlots = 1 << 16;
  std::vector<uint64_t> chunk(std::min(kChunkSlots, stack_stats_.slots));
  std::vector<uint64_t> addresses;
  for (uint64_t first = 0; first < stack_stats_.slots; first += chunk.size()) {
    if (stop && stop()) break;
    // The table is sparse (nodes are appended from id 1 on, the rest of the file is a hole):
    // holes are skipped, not read as zeroes; where SEEK_DATA is unsupported everything is read.
    off_t offset = static_cast<off_t>(slots_offset_ + first * sizeof(uint64_t));
    off_t data = lseek(stacks_->fd(), offset, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;
    if (data > offset) {
      first = (static_cast<uint64_t>(data) - slots_offset_) / sizeof(uint64_t);
      if (first >= stack_stats_.slots) break;
    }
    uint64_t count = std::min<uint64_t>(chunk.size(), stack_stats_.slots - first);
    stacks_->ReadAt(slots_offset_ + first * sizeof(uint64_t), chunk.data(),
                    count * sizeof(uint64_t), "slot table");
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t node = chunk[i];
      uint32_t prefix =
          static_cast<uint32_t>(node >> format::kStackLowBits) & (format::kMaxStackPrefixes - 1);
      if (node == 0 || prefix == 0 || prefix >= stack_stats_.prefix_count) continue;
      addresses.push_back((prefixes_[prefix] << format::kStackLowBits) | (node & kLowMask));
    }
  }
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  return addresses;
}

std::optional<ModuleLocation> RecordingReader::Locate(uint64_t address) const {
  for (uint32_t wanted : {uint32_t{format::kModuleLoaded}, uint32_t{format::kModuleUnloaded}}) {
    for (size_t i = modules_.size(); i-- > 0;) {
      const ModuleRecord& m = modules_[i];
      if (m.state == wanted && address >= m.start && address < m.end) {
        return ModuleLocation{i, address - m.load_bias};
      }
    }
  }
  return std::nullopt;
}

std::vector<StackGroup> RecordingReader::GroupByStack() const {
  std::map<std::pair<uint32_t, std::string>, std::pair<StackGroup, SampleEstimate>> groups;
  for (const LiveBlock& b : blocks_) {
    std::string category = CategoryName(b.function, b.size);
    auto [it, added] = groups.try_emplace({b.stack, category}, StackGroup{}, SampleEstimate(0));
    auto& [g, estimate] = it->second;
    if (added) {
      g.stack = b.stack;
      g.category = std::move(category);
      estimate = SampleEstimate(SampleMeanOf(b));
    }
    ++g.count;
    g.bytes += b.size;
    estimate.Add(b.size);
  }
  std::vector<StackGroup> sorted;
  sorted.reserve(groups.size());
  for (auto& [key, entry] : groups) {
    StackGroup& g = entry.first;
    g.estimate = entry.second;
    sorted.push_back(std::move(g));
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const StackGroup& a, const StackGroup& b) {
    if (a.estimate.bytes() != b.estimate.bytes()) return a.estimate.bytes() > b.estimate.bytes();
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.count > b.count;
  });
  return sorted;
}

uint64_t RecordingReader::SampleMeanOf(const LiveBlock& block) const {
  return block.tree == TreeKind::kHeap ? sample_mean_ : 0;
}

SampleEstimate RecordingReader::EstimateLive() const {
  SampleEstimate heap(sample_mean_), vm(0);
  for (const LiveBlock& b : blocks_) (b.tree == TreeKind::kHeap ? heap : vm).Add(b.size);
  heap.Merge(vm);
  return heap;
}

}  // namespace heapgraph
