// reader/: the reader of a per-process recording directory (PersistedFormat.h: version 1, heap.tree
// version 1, 2 or 3), used by `heapgraph dump`, the tests and the reports. Full C++ (exceptions,
// allocation).
//
// Safety invariant: every file is opened through reader/InputFile (regular files only, no links,
// never blocking), every offset and length read from a file is checked against the file's real
// size (fstat) before any byte of it is read, and every read goes through pread into memory the
// reader owns; nothing is mapped. A truncated, corrupt or hostile directory therefore produces a
// RecordingError with a one-line message "<file>: <problem>", never SIGBUS, a wild read or an
// allocation larger than the file itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heap/store/PersistedFormat.h"
#include "reader/InputFile.h"
#include "reader/RecordingError.h"
#include "reader/SampleEstimate.h"

namespace heapgraph {

// Which tree file a block or node came from.
enum class TreeKind : uint8_t { kHeap, kVm };

struct LiveBlock {
  uint64_t address = 0;
  uint64_t size = 0;
  format::AllocFunction function = format::AllocFunction::kNone;
  uint32_t stack = 0;  // stack id (0 = none captured)
  uint32_t seq = 0;    // low 32 bits of the allocation sequence number
  uint32_t shard = 0;
  TreeKind tree = TreeKind::kHeap;
};

// A node or hash slot the reader did not turn into a block. `marked` ones were named by the
// shard's `writing` field (the writer died while changing them); unmarked ones failed validation
// (unknown function, or a free-looking node with an address) and were skipped rather than
// misread. index == format::kRehashing: the writer died rehashing the whole (version 2) shard;
// none of its slots was read and `records` is the shard's live_count.
struct TornNode {
  TreeKind tree = TreeKind::kHeap;
  uint32_t shard = 0;
  uint32_t index = 0;
  bool marked = true;
  uint64_t records = 1;  // blocks this entry may have held
};

// A shard's own counters, as the writer left them.
struct ShardStats {
  TreeKind tree = TreeKind::kHeap;
  uint32_t shard = 0;
  uint32_t used = 0;      // v1: nodes [1, used) were handed out; v2: slots in the current table
  uint64_t capacity = 0;  // v1: nodes per shard; v2: the most slots the table may grow to
  uint64_t live_count = 0;
  uint64_t live_bytes = 0;
  uint64_t dropped = 0;  // inserts refused (shard or disk full)
};

struct StackStats {
  uint64_t node_count = 0;
  uint64_t stack_count = 0;
  uint64_t slots = 0;  // 1 << slot_bits
  uint64_t dropped = 0;
  uint32_t max_depth = 0;
  uint32_t prefix_count = 0;
};

struct ModuleLocation {
  size_t module = 0;    // index into RecordingReader::modules()
  uint64_t offset = 0;  // address - load_bias: the ELF virtual address
};

struct SessionInfo {
  int32_t pid = 0;
  uint32_t max_depth = 0;
  uint64_t start_time_ns = 0;
  uint64_t boot_time_ticks = 0;
  uint64_t sequence = 0;
  uint32_t state = 0;  // format::SessionState
  std::string executable;
  bool has_record = false;         // version 2: `record` holds the FOOM fields
  format::SessionRecord record{};  // zero for version 1
};

// Live blocks that share a stack and a category.
struct StackGroup {
  uint32_t stack = 0;
  uint64_t count = 0;
  uint64_t bytes = 0;
  std::string category;  // CategoryName() of every block in the group
  // The group's estimated true count and bytes (= count and bytes in a full recording).
  SampleEstimate estimate;
};

// The report category of a block: "VM: anonymous" for mmap/mremap, otherwise "Malloc 48 B" below
// 1 KiB and "Malloc 48.00KiB" / "Malloc 8.00MiB" / "Malloc 1.50GiB" above.
std::string CategoryName(format::AllocFunction function, uint64_t size);

class RecordingReader {
 public:
  // Reads and validates the whole directory except the stack table's slots, which Frames() reads
  // on demand. Required: heap.tree, stacks, modules. Missing vm.tree or session only adds a
  // warning. Throws RecordingError.
  explicit RecordingReader(const std::string& directory);
  // What to read. kStacksAndModules skips the trees (blocks(), torn() and shards() stay empty):
  // a leak report gets its blocks from the scan and needs only stacks and modules. heap.tree must
  // still exist.
  enum class Content { kEverything, kStacksAndModules };
  RecordingReader(const std::string& directory, Content content);
  // Files of the recording the caller already holds open, by file name (format::kStackFile, ...):
  // read through these instead of opening them in `directory`, which a process that dropped
  // privileges may no longer search (a leak check reading its own recording). Owned descriptors,
  // closed with the last copy (InputFile::Own); the directory itself is then not opened at all.
  using OpenFiles = std::map<std::string, std::shared_ptr<const int>>;
  RecordingReader(const std::string& directory, Content content, OpenFiles open_files);

  const std::string& directory() const { return directory_; }

  // Live blocks of heap.tree then vm.tree, each in shard then node order.
  const std::vector<LiveBlock>& blocks() const { return blocks_; }
  const std::vector<TornNode>& torn() const { return torn_; }
  const std::vector<ShardStats>& shards() const { return shards_; }
  uint64_t live_bytes() const;
  uint64_t dropped() const;  // sum of every shard's dropped count
  // heap.tree holds a Poisson-by-bytes sample with this mean (version 3); 0 = every block.
  uint64_t sample_mean() const { return sample_mean_; }
  // The SampleEstimate a block of this recording belongs to (vm.tree is never sampled).
  uint64_t SampleMeanOf(const LiveBlock& block) const;
  // Estimated true totals of every live block (exact in a full recording).
  SampleEstimate EstimateLive() const;

  // Return addresses of stack `stack_id`, innermost first; empty for id 0. Throws
  // RecordingError("stacks: corrupt node ...") on an id outside the table, an empty slot, an
  // invalid prefix index, a parent outside the table, or a chain longer than max_depth (cycles).
  std::vector<uint64_t> Frames(uint32_t stack_id) const;
  // Every distinct return address of the stack table (one per node), ascending: the addresses any
  // recorded stack can hold. Reads the slot table in large chunks; nodes with an invalid prefix
  // index are skipped (Frames() reports them when a stack uses them). When `stop` is given and
  // returns true between chunks, the addresses of the chunks read so far are returned.
  std::vector<uint64_t> ReturnAddresses(const std::function<bool()>& stop = nullptr) const;
  const StackStats& stack_stats() const { return stack_stats_; }

  const std::vector<format::ModuleRecord>& modules() const { return modules_; }
  // The module whose [start, end) holds `address`, preferring loaded over unloaded modules and
  // later records over earlier ones.
  std::optional<ModuleLocation> Locate(uint64_t address) const;

  const std::optional<SessionInfo>& session() const { return session_; }
  // Non-fatal problems, one line each ("session: missing", "modules: torn (writer was active)").
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Blocks grouped by (stack id, CategoryName), sorted by estimated bytes desc, bytes desc, count
  // desc, then stack id and category ascending.
  std::vector<StackGroup> GroupByStack() const;

 private:
  void ReadTrees();
  void ReadStacks();
  void ReadModules();
  void ReadSession();
  uint64_t ReadSlot(uint64_t slot) const;

  std::string directory_;
  OpenFiles open_files_;
  std::vector<LiveBlock> blocks_;
  std::vector<TornNode> torn_;
  std::vector<ShardStats> shards_;
  std::vector<format::ModuleRecord> modules_;
  std::optional<SessionInfo> session_;
  std::vector<std::string> warnings_;
  uint64_t sample_mean_ = 0;

  // The stack table stays open (shared by copies, closed with the last): Frames() preads single
  // slots. Invariant after construction: slots_offset_ + stack_stats_.slots * 8 <= stacks_->size().
  std::optional<InputFile> stacks_;
  uint64_t slots_offset_ = 0;
  StackStats stack_stats_;
  uint64_t prefixes_[format::kMaxStackPrefixes] = {};
};

}  // namespace heapgraph
