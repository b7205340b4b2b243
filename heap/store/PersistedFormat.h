// heap/store/: the on-disk layout of a recording directory (version 1; heap.tree version 2), shared
// by the recorder (writer, inside the host process) and the readers (heapgraph dump, FOOM reports).
// Plain structs only; no code. Every file starts with a 16-byte FileHeader.
// docs/recording-format.md describes the same.
#pragma once

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>

namespace heapgraph::format {

inline constexpr uint32_t kVersion = 1;
// heap.tree's version: 2 = per-shard arrays of HashSlots (hash tables until session 16, the same
// layout). vm.tree stays version 1 (TreeNode).
inline constexpr uint32_t kHashTreeVersion = 2;
// heap.tree version 3: version 2's layout, holding a Poisson-by-bytes sample of the heap blocks
// (TreeHeader.sample_mean != 0). Written only by sampling recorders, so a reader that does not
// know sampling refuses the file instead of taking the sample for every live block.
inline constexpr uint32_t kSampledTreeVersion = 3;
inline constexpr uint64_t kPageSize = 4096;

// Magic strings (8 bytes, not NUL-terminated when 8 chars long).
inline constexpr char kTreeMagic[8] = {'H', 'G', 'T', 'R', 'E', 'E', '0', '1'};
inline constexpr char kStackMagic[8] = {'H', 'G', 'S', 'T', 'A', 'C', 'K', '1'};
inline constexpr char kModuleMagic[8] = {'H', 'G', 'M', 'O', 'D', 'S', '0', '1'};
inline constexpr char kSessionMagic[8] = {'H', 'G', 'S', 'E', 'S', 'S', '0', '1'};

// File names inside a per-process recording directory.
inline constexpr const char* kHeapTreeFile = "heap.tree";
inline constexpr const char* kVmTreeFile = "vm.tree";
inline constexpr const char* kStackFile = "stacks";
inline constexpr const char* kModuleFile = "modules";
inline constexpr const char* kSessionFile = "session";
// The at-exit leak check's verdict (heap/runtime/LeakCheckTrigger), text: "leaked_blocks N\n
// leaked_bytes N\n" or "failed\n"; absent when no at-exit check ran. `heapgraph run` reads it
// (tools/RunSummary), whatever became of the report files.
inline constexpr const char* kExitCheckFile = "exit-check";

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;  // bytes before the payload this file describes
};

// Which allocation function produced a block. The report's category is derived from it: heap
// functions give the seed's size category ("Malloc 48.00KiB"), mmap/mremap give "VM: anonymous".
enum class AllocFunction : uint8_t {
  kNone = 0,  // a free tree node
  kMalloc = 1,
  kCalloc = 2,
  kRealloc = 3,
  kReallocArray = 4,
  kMemalign = 5,
  kPosixMemalign = 6,
  kAlignedAlloc = 7,
  kValloc = 8,
  kPvalloc = 9,
  kMmap = 16,
  kMremap = 17,
};
inline constexpr bool IsVmFunction(AllocFunction f) {
  return f == AllocFunction::kMmap || f == AllocFunction::kMremap;
}

// ---------------------------------------------------------------------------------------------
// vm.tree (version 1; heap.tree before version 2): one sharded, array-backed splay tree of live
// blocks (seed 000).
//
// [TreeHeader][ShardHeader x shard_count] ... padding to nodes_offset ...
// [shard 0: TreeNode x shard_capacity][shard 1: ...] ...
// Node 0 of each shard is the splay header/null sentinel and never holds a block.
// A block lives in shard ((address >> 26) * G + ((address >> shard_shift) & (G - 1))) &
// (shard_count - 1), G = shard_group (or shard_count when shard_group is 0); with G = shard_count
// this is (address >> shard_shift) & (shard_count - 1).
struct TreeHeader {
  FileHeader file;
  uint32_t node_size;  // sizeof(TreeNode)
  uint32_t shard_count;
  uint32_t shard_shift;
  uint32_t sample_mean;     // heap.tree version 3: mean bytes between sample points; else 0
  uint64_t shard_capacity;  // nodes per shard, including node 0
  uint64_t nodes_offset;    // file offset of shard 0's node array; page aligned
  // Shards a 64 MiB window's blocks spread over (0 in files written before it existed: the plain
  // rule). Readers visit every shard and need it only to find a block's shard; heap.tree's
  // blocks follow no address rule since session 16 (a thread's blocks go to its shard).
  uint32_t shard_group;
};

// Invariant (writer): while a shard mutates a node, `writing` holds 1 + that node's index; it is 0
// when the shard is consistent. A reader that finds writing != 0 after a kill reports that one
// node as torn. Splay rotations change only left/right links, which readers never use.
struct alignas(64) ShardHeader {
  std::atomic<uint32_t> lock;  // meaningless on disk
  uint32_t root;
  uint32_t free_head;  // free nodes are chained through `left`
  uint32_t used;       // nodes [1, used) have been handed out at least once
  uint32_t writing;
  uint32_t reserved0;
  uint64_t live_count;
  uint64_t live_bytes;
  uint64_t dropped;       // inserts refused: shard full or disk full
  uint64_t backed_bytes;  // bytes of this shard's node array reserved on disk (fallocate)
};
static_assert(sizeof(ShardHeader) == 64);

// 28 bytes: address (48 bits), size (40 bits), function, stack id, sequence, two child indices.
// A free node has address 0 and function kNone.
struct TreeNode {
  uint32_t addr_lo;
  uint16_t addr_hi;
  uint8_t size_hi;
  AllocFunction function;
  uint32_t size_lo;
  uint32_t left;
  uint32_t right;
  uint32_t stack;  // StackStore id of the allocation stack (0 = none captured)
  uint32_t seq;    // low 32 bits of the process-wide allocation sequence number

  uint64_t address() const { return (uint64_t{addr_hi} << 32) | addr_lo; }
  uint64_t size() const { return (uint64_t{size_hi} << 32) | size_lo; }
  void set_address(uint64_t a) {
    addr_lo = static_cast<uint32_t>(a);
    addr_hi = static_cast<uint16_t>(a >> 32);
  }
  void set_size(uint64_t s) {
    size_lo = static_cast<uint32_t>(s);
    size_hi = static_cast<uint8_t>(s >> 32);
  }
};
static_assert(sizeof(TreeNode) == 28);
inline constexpr uint64_t kMaxBlockSize = (uint64_t{1} << 40) - 1;  // larger sizes are clamped

// ---------------------------------------------------------------------------------------------
// heap.tree version 2: per-shard arrays of 24-byte slots of live blocks.
//
// [TreeHeader][HashShardHeader x shard_count] ... padding to nodes_offset ...
// [shard 0: HashSlot x shard_capacity][shard 1: ...] ...
// TreeHeader.node_size = sizeof(HashSlot); shard_capacity = the most slots a shard may use.
// A shard's live blocks are in slots [0, capacity) of its region, in no order; slots past
// capacity are unused. Since session 16 the writer (SlabShard.h) gives each recording thread a
// shard and a block a slot it keeps until freed; until then each shard was a hash table in the
// same slots (home ((address >> 4) * kHashMultiplier) * capacity >> 64, Robin Hood order, rehashed
// while growing). Readers read every slot of [0, capacity) and depend on neither.
inline constexpr uint64_t kHashMultiplier = 0x9E3779B97F4A7C15ull;
// `writing` while a shard rehashed (hash-table writers until session 16): every slot of the shard
// may be torn. Today's writer never writes it; readers still accept it.
inline constexpr uint32_t kRehashing = UINT32_MAX;

// Invariant (writer): while a slot changes, `writing` holds 1 + its index (kRehashing during an
// old writer's rehash); otherwise 0 and every nonempty slot in [0, capacity) is one distinct live
// block. The one exception: a slot freed by a thread other than the shard's owner is cleared
// without the marker, its address first, so a writer killed there leaves a slot whose address
// is zero and whose other words are not (readers report it torn).
struct alignas(64) HashShardHeader {
  std::atomic<uint32_t> lock;  // meaningless on disk
  uint32_t writing;
  uint64_t capacity;  // the extent of slots used, [0, capacity) (0 before the first insert)
  uint64_t live_count;
  uint64_t live_bytes;
  uint64_t dropped;       // inserts refused: shard at its maximum capacity, or disk full
  uint64_t backed_bytes;  // bytes of this shard's region reserved on disk (fallocate)
  // Blocks of this shard freed by threads other than its owner (SlabShard.h), and their bytes:
  // the shard holds live_count - freed_elsewhere_count blocks (each counter written by one side;
  // zero in files of writers before session 25).
  uint64_t freed_elsewhere_count;
  uint64_t freed_elsewhere_bytes;
};
static_assert(sizeof(HashShardHeader) == 64);

// 24 bytes. An empty slot is all zero; a live one has a nonzero address and a known function.
struct HashSlot {
  uint64_t address;
  // size (40 bits) | ignored << 55 | function << 56; bits 40-54 are zero. Ignored: the program
  // asked that the block never be reported (LeakSanitizer's __lsan_ignore_object, or allocated
  // under __lsan_disable); a leak check scans it as a root.
  uint64_t size_function;
  uint32_t stack;  // StackStore id of the allocation stack (0 = none captured)
  uint32_t seq;    // low 32 bits of the process-wide allocation sequence number

  static constexpr uint64_t kIgnoredBit = uint64_t{1} << 55;

  uint64_t size() const { return size_function & kMaxBlockSize; }
  AllocFunction function() const { return static_cast<AllocFunction>(size_function >> 56); }
  bool ignored() const { return (size_function & kIgnoredBit) != 0; }
  static uint64_t Pack(uint64_t size, AllocFunction f, bool ignored = false) {
    return (size & kMaxBlockSize) | (ignored ? kIgnoredBit : 0) |
           (uint64_t{static_cast<uint8_t>(f)} << 56);
  }
};
static_assert(sizeof(HashSlot) == 24);

// ---------------------------------------------------------------------------------------------
// stacks: a suffix-sharing hash table of 64-bit nodes (seed 000). A node is
//   parent (28 bits) << 36 | prefix index (8 bits) << 28 | address low 28 bits.
// parent 0 means "outermost frame"; slot 0 is never used, so a stack id is the slot index of its
// innermost frame and id 0 is "no stack". The full return address of a node is
//   prefixes[prefix index] << 28 | low 28 bits.
// Prefix 0 is reserved so that an empty slot (0) is never a valid node.
inline constexpr uint32_t kStackParentBits = 28;
inline constexpr uint32_t kStackPrefixBits = 8;
inline constexpr uint32_t kStackLowBits = 28;
inline constexpr uint32_t kMaxStackPrefixes = 1u << kStackPrefixBits;
inline constexpr uint32_t kMaxStackDepth = 64;

struct StackHeader {
  FileHeader file;
  uint32_t slot_bits;  // table has 1 << slot_bits slots
  uint32_t max_depth;
  uint64_t slots_offset;
  std::atomic<uint32_t> prefix_count;  // prefixes [1, prefix_count) are valid
  std::atomic<int32_t> prefix_lock;    // pid of the process appending a prefix, 0 when free
  std::atomic<uint64_t> node_count;    // nodes stored
  std::atomic<uint64_t> stack_count;   // stacks whose innermost node was new
  std::atomic<uint64_t> dropped;       // stacks not stored: table full
  uint64_t prefixes[kMaxStackPrefixes];
};

// ---------------------------------------------------------------------------------------------
// modules: loaded-module map. Rewritten under a sequence counter (odd while a writer is active).
inline constexpr uint32_t kMaxSegments = 8;
inline constexpr uint32_t kMaxBuildId = 32;
inline constexpr uint32_t kMaxModulePath = 256;

struct ModuleSegment {
  uint64_t vaddr;  // p_vaddr (add load_bias for the runtime address)
  uint64_t memsz;
  uint32_t flags;  // PF_R | PF_W | PF_X
  uint32_t reserved0;
};

enum ModuleState : uint32_t { kModuleLoaded = 1, kModuleUnloaded = 2 };

struct ModuleRecord {
  uint64_t load_bias;
  uint64_t start;  // lowest runtime address of a PT_LOAD segment
  uint64_t end;    // one past the highest
  uint32_t state;  // ModuleState
  uint32_t segment_count;
  ModuleSegment segments[kMaxSegments];
  uint32_t build_id_len;
  uint8_t build_id[kMaxBuildId];
  char path[kMaxModulePath];  // NUL-terminated, truncated if longer
};

struct ModuleHeader {
  FileHeader file;
  uint32_t record_size;
  uint32_t capacity;
  std::atomic<uint32_t> count;
  std::atomic<uint32_t> sequence;  // odd while being written
};

// ---------------------------------------------------------------------------------------------
// session: who wrote this directory, and what is known about how it ended (FOOM dumps).
// Version 1 ends after `executable`; version 2 appends SessionRecord. A reader accepts both.
inline constexpr uint32_t kSessionVersion = 2;
inline constexpr uint32_t kBootIdSize = 40;    // 36 characters + NUL, padded
inline constexpr uint32_t kCounterPath = 256;  // cgroup counter file, NUL-terminated
inline constexpr uint64_t kUnknownCounter = UINT64_MAX;

enum SessionState : uint32_t { kSessionRecording = 1, kSessionExited = 2 };
// How the process left, as recorded by the process itself (0 = nothing recorded: killed).
enum ExitKind : uint32_t {
  kExitNone = 0,
  kExitCalled = 1,      // exit(status) was called (status valid)
  kExitImmediate = 2,   // _exit/_Exit(status) was called (status valid)
  kExitDestructor = 3,  // the library destructor ran (return from main; status unknown)
};
// Set through heapgraph_set_app_state(); 0 = never set (a program without a UI: foreground).
enum AppState : uint32_t { kAppUnknown = 0, kAppForeground = 1, kAppBackground = 2 };

// Version 2 fields: plain integers (copyable by readers); the recorder stores every field that
// changes after start with std::atomic_ref (aligned, so never torn; signal-safe).
// Invariant: heartbeat_boottime_ns >= progress_boottime_ns; both 0 until the first heartbeat.
struct SessionRecord {
  uint64_t start_boottime_ns;  // CLOCK_BOOTTIME at recorder start
  char boot_id[kBootIdSize];   // /proc/sys/kernel/random/boot_id ("" if unreadable)
  uint32_t exe_build_id_len;   // GNU build-id of the main executable (0: none)
  uint8_t exe_build_id[kMaxBuildId];
  uint32_t heartbeat_interval_ms;  // 0: no heartbeat thread (forked child, or heartbeat_ms=0)
  uint32_t hang_threshold_ms;      // no progress for this long before death = hang
  uint64_t heartbeat_count;
  uint64_t heartbeat_boottime_ns;  // the monitor thread's last tick
  uint64_t heartbeat_realtime_ns;
  uint64_t progress_boottime_ns;  // last tick at which the program had progressed
  uint64_t app_heartbeats;        // heapgraph_heartbeat() calls
  uint32_t app_state;             // AppState
  uint32_t exit_kind;             // ExitKind
  int32_t exit_status;
  uint32_t fatal_signal;  // first fatal/terminating signal delivered (0 = none)
  int32_t fatal_code;     // its si_code
  uint32_t reserved0;
  uint64_t fatal_address;      // si_addr
  uint64_t fatal_boottime_ns;  // when it was delivered
  // The OOM-kill counter of the process's memory cgroup: cgroup v2 memory.events or v1
  // memory.oom_control ("oom_kill N"). kUnknownCounter when there is none.
  char oom_counter_path[kCounterPath];
  uint64_t oom_kills_at_start;
  uint64_t oom_kills_at_heartbeat;  // refreshed (path too) at every heartbeat
};

struct SessionHeader {
  FileHeader file;
  int32_t pid;
  uint32_t max_depth;
  uint64_t start_time_ns;    // CLOCK_REALTIME at recorder start
  uint64_t boot_time_ticks;  // process start time from /proc/self/stat (clock ticks since boot)
  std::atomic<uint64_t> sequence;  // allocations recorded so far
  std::atomic<uint32_t> state;     // SessionState
  uint32_t run_tag;  // option run_tag: the `heapgraph run` of this process (0: none; was reserved)
  char executable[kMaxModulePath];
  SessionRecord record;  // version 2
};
inline constexpr uint32_t kSessionV1Size = offsetof(SessionHeader, record);
static_assert(kSessionV1Size == 312, "version 1 session layout changed");

// ---------------------------------------------------------------------------------------------
// exit: the classification of a finished run, written into its directory by the next start of the
// same executable (or by `heapgraph foom`). Text, one "key value" line each (docs/foom-report.md).
inline constexpr const char* kExitFile = "exit";

// ---------------------------------------------------------------------------------------------
// types (magic HGTYPES1, version 1): C++/ObjC type names of live heap blocks, written by the
// memory-pressure watcher at watermarks (not on the hook path). The writer builds "types.tmp" and
// renames it over "types", so a reader sees a whole file or the previous one, never a torn one.
// A record names one allocation by (address, seq): it applies to the live block with that
// address whose HashSlot.seq equals `seq`; records of blocks freed since are simply unmatched.
//
// [TypesHeader][TypeName x name_count][names: NUL-terminated UTF-8, names_size bytes]
// [TypeRecord x record_count], each part at the offset its header field gives (8-aligned).
inline constexpr char kTypesMagic[8] = {'H', 'G', 'T', 'Y', 'P', 'E', 'S', '1'};
inline constexpr const char* kTypesFile = "types";
inline constexpr uint32_t kMaxTypeNameLength = 1024;

struct TypesHeader {
  FileHeader file;
  uint32_t record_size;  // sizeof(TypeRecord)
  uint32_t name_count;
  uint64_t names_offset;    // TypeName[name_count]
  uint64_t strings_offset;  // the name bytes
  uint64_t strings_size;
  uint64_t records_offset;  // TypeRecord[record_count], sorted by address
  uint64_t record_count;
  uint64_t written_realtime_ns;  // when the watcher wrote the file
  uint64_t sequence;             // SessionHeader.sequence at that moment
};

struct TypeName {
  uint32_t offset;  // into the strings part; the name is `length` bytes, then a NUL
  uint32_t length;  // <= kMaxTypeNameLength
};

struct TypeRecord {
  uint64_t address;
  uint32_t seq;   // low 32 bits of the block's allocation sequence number (HashSlot.seq)
  uint32_t type;  // index into TypeName[]
};
static_assert(sizeof(TypeRecord) == 16);

// ---------------------------------------------------------------------------------------------
// pressure (magic HGPRESS1, version 1): the memory-pressure watcher's time line. Appended, one
// write() per entry: [PressureHeader] then, per rising watermark crossing,
// [PressureRecord][CategoryTotal x category_count]. A process killed mid-write leaves a short
// last entry, which readers ignore. Totals count the blocks in heap.tree: in a sampled recording
// (version 3) they are sampled blocks, which readers scale by size (SampleEstimate).
inline constexpr char kPressureMagic[8] = {'H', 'G', 'P', 'R', 'E', 'S', 'S', '1'};
inline constexpr const char* kPressureFile = "pressure";
inline constexpr uint32_t kMaxWatermarks = 8;
inline constexpr uint32_t kPressureRecordTag = 0x4B524D57;  // "WMRK"

enum PressureSource : uint32_t { kSourceRss = 1, kSourceCgroup = 2, kSourcePsi = 4 };

struct PressureHeader {
  FileHeader file;
  uint32_t record_size;       // sizeof(PressureRecord)
  uint32_t category_size;     // sizeof(CategoryTotal)
  uint64_t configured_limit;  // memory_limit= in bytes (0: none)
  uint32_t sources;           // PressureSource bits found at start
  uint32_t watermark_count;
  uint32_t watermarks[kMaxWatermarks];  // percent of the limit, ascending
  uint64_t sample_mean;                 // heap.tree's (0: full recording)
  char cgroup_dir[256];                 // cgroup v2 directory read ("" = none)
};

enum PressureTrigger : uint32_t { kTriggerPoll = 1, kTriggerPsi = 2 };

struct PressureRecord {
  uint32_t tag;        // kPressureRecordTag
  uint32_t watermark;  // percent crossed
  uint32_t percent;    // usage in percent of `limit` when read
  uint32_t trigger;    // PressureTrigger that woke the watcher
  uint64_t realtime_ns;
  uint64_t elapsed_ns;  // CLOCK_MONOTONIC since the watcher started
  uint64_t limit;       // the limit `percent` is of: configured or memory.max
  uint64_t rss;
  uint64_t cgroup_current;
  uint64_t cgroup_max;  // 0: none ("max")
  uint64_t oom_events;  // memory.events oom / oom_kill
  uint64_t oom_kills;
  uint64_t heap_blocks;  // heap.tree shard headers' live_count / live_bytes
  uint64_t heap_bytes;
  uint64_t vm_blocks;  // vm.tree
  uint64_t vm_bytes;
  uint64_t sequence;        // SessionHeader.sequence: allocations recorded so far
  uint64_t refresh_ns;      // time the watcher spent on this entry (totals, types)
  uint32_t category_count;  // CategoryTotal entries that follow
  uint32_t other_sizes;     // 1: more distinct sizes than kept; the rest is kCategoryOtherSizes
  uint32_t types_written;   // 1: the types file was refreshed for this entry
  uint32_t reserved0;
};
static_assert(sizeof(PressureRecord) == 144);

// One category: heap blocks of one exact size (the seed's "Malloc 48.00KiB"), or every VM region.
enum CategoryKind : uint32_t { kCategoryHeap = 1, kCategoryVm = 2, kCategoryOtherSizes = 3 };
struct CategoryTotal {
  uint64_t size;  // kCategoryHeap: the block size; else 0
  uint32_t kind;  // CategoryKind
  uint32_t reserved0;
  uint64_t count;
  uint64_t bytes;
};
static_assert(sizeof(CategoryTotal) == 32);

// ---------------------------------------------------------------------------------------------
// lag (magic HGLAG001, version 1): the lag monitor's records (heap/lag/). Appended, one write()
// per record: [LagHeader] then LagRecord after LagRecord. A record whose tag or check word is
// wrong, or a short last one, is torn (the process was killed in the middle of writing it):
// readers report it as such and stop there.
inline constexpr char kLagMagic[8] = {'H', 'G', 'L', 'A', 'G', '0', '0', '1'};
inline constexpr const char* kLagFile = "lag";
inline constexpr uint32_t kLagRecordTag = 0x4741414C;  // "LAAG"
inline constexpr uint32_t kMaxLagSamples = 64;

struct LagHeader {
  FileHeader file;
  uint32_t record_size;  // sizeof(LagRecord)
  uint32_t interval_ms;  // the options in force
  uint32_t threshold_ms;
  uint32_t sample_ms;  // 0: no sampling
  uint32_t ring;
  uint32_t cpu_percent;
};

// kLagLong: a unit of work ran longer than the threshold (written again while it goes on, when its
// most time-consuming stack changes); kLagCpu: a thread above the CPU share; kLagEnded: a unit
// that was reported as a lag ended (no such record = the process died during the lag).
enum LagKind : uint32_t { kLagLong = 1, kLagCpu = 2, kLagEnded = 3 };

struct LagRecord {
  uint32_t tag;   // kLagRecordTag
  uint32_t kind;  // LagKind
  uint64_t realtime_ns;
  uint64_t duration_ns;  // the unit's run time so far (kLagEnded: its whole run time)
  uint64_t unit;         // the thread's unit number (1 = its first heapgraph_work_begin)
  int32_t tid;
  uint32_t cpu_permille;  // the thread's CPU time over the last check interval, per mille of a core
  uint32_t stack;         // the most time-consuming stack (stacks.bin id; 0: none)
  uint32_t stack_repeats;   // samples of the ring with the same top frame
  uint32_t sample_count;    // ids in samples[] (the ring, oldest first)
  uint32_t samples_missed;  // sampling signals not answered (blocked signal, busy handler)
  uint32_t samples[kMaxLagSamples];
  uint64_t check;  // LagCheck() of everything before it
};
static_assert(sizeof(LagRecord) == 320);

// FNV-1a over the bytes of `r` before `check`.
inline uint64_t LagCheck(const LagRecord& r) {
  const auto* p = reinterpret_cast<const unsigned char*>(&r);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < offsetof(LagRecord, check); ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace heapgraph::format
