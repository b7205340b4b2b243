// scanner/: what the typed part of a leak scan found (scanner/TypedScan), as graph/ and report/
// consume it: every typed live block with its identity, the references out of typed blocks into
// typed blocks with the referencing word's offset, the live and leaked totals of untyped blocks
// per size key, and one retention path for each reachable group of typed blocks that may form a
// cycle. Plain data (the reader set that describes the identities rides along).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heap/store/PersistedFormat.h"
#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::scanner {

namespace types {
class ReaderSet;
}

struct TypedObject {
  uint64_t address = 0;
  uint64_t size = 0;
  types::TypeIdentity identity;
  uint32_t stack = 0;
  uint32_t seq = 0;
  format::AllocFunction function = format::AllocFunction::kNone;
  uint8_t leaked = 0;
  uint8_t reserved[2] = {};
  uint32_t leaked_index = UINT32_MAX;  // index into ScanResult::leaked when leaked
};

// A word of typed object `from` at byte `offset` pointing `target_offset` bytes into `to`.
struct TypedEdge {
  uint32_t from = 0;
  uint32_t to = 0;
  uint32_t offset = 0;
  uint32_t target_offset = 0;
};

// Untyped blocks of one size category key: size, or UINT64_MAX for VM blocks (mmap/mremap).
struct UntypedCategory {
  uint64_t size_key = 0;
  format::AllocFunction function = format::AllocFunction::kNone;
  uint64_t live_count = 0;
  uint64_t live_bytes = 0;
  uint64_t leaked_count = 0;
  uint64_t leaked_bytes = 0;
};

enum class RootKind : uint8_t {
  kRegisters = 0,  // a stopped thread's registers
  kStack = 1,      // a thread's stack (its static TLS and pthread struct included)
  kGlobal = 2,     // a module's writable data (.data/.bss)
  kOther = 3,      // other private writable memory: dynamic TLS, the program's anonymous mmaps
  kTls = 4,        // a thread's static TLS or control block (x86-64: below / at its fs_base)
};

// Where the root word of a retention path lies (scanner/RootOrigin.h classifies it).
struct RootOrigin {
  RootKind kind = RootKind::kOther;
  int32_t thread = 0;            // tid for kRegisters / kStack / kTls
  uint32_t module = UINT32_MAX;  // kGlobal: index into the module segments' modules
  uint64_t address = 0;          // the root word's address (0 for a register)
  uint32_t reg = UINT32_MAX;     // kRegisters: index into roots::ThreadInfo::regs
  uint32_t reserved = 0;
  uint64_t region_begin = 0;  // the mapping holding the word (0, 0 when none is known)
  uint64_t region_end = 0;
  uint64_t stack_pointer = 0;  // kStack: the thread's SP (the check's thread: its program frame's)
  uint64_t frame_pc = 0;       // kStack: the frame's code address (RootOrigin.h); 0 if unknown
};

// One block on a retention path: the root's word, then each block's pointer word.
struct PathStep {
  uint64_t address = 0;  // the block
  uint64_t size = 0;
  uint32_t offset = 0;  // byte offset in the previous block of the word pointing here (0: root)
  uint32_t typed = UINT32_MAX;  // index into TypedScanResult::objects, or UINT32_MAX
  format::AllocFunction function = format::AllocFunction::kNone;
};

struct RetentionPath {
  RootKind root_kind = RootKind::kOther;
  int32_t thread = 0;            // tid for kRegisters / kStack / kTls
  uint64_t root_address = 0;     // the root word's address (0 for registers)
  uint32_t module = UINT32_MAX;  // kGlobal: index into the reader set's modules
  std::vector<PathStep> steps;   // root's block first, the reached typed object last
};

struct TypedScanResult {
  bool enabled = false;  // typing ran (ScanOptions::types and a snapshot that completed it)
  std::vector<TypedObject> objects;  // by address
  std::vector<TypedEdge> edges;
  std::vector<UntypedCategory> untyped;
  std::vector<RetentionPath> paths;  // each ends at a typed object of a reachable candidate
  std::shared_ptr<types::ReaderSet> readers;  // describes the identities (checking process)
  double typing_ms = 0;  // the child's typing work (identify, edges, components, paths)
  double path_ms = 0;    // of which the retention paths' search
};

}  // namespace heapgraph::scanner
