// scanner/: the typed part of a leak scan. In the snapshot child, after marking: every live block
// is offered to the type readers (scanner/types), the references out of typed blocks into typed
// blocks are collected with their word offsets (the strong-reference graph is a subgraph of
// them; graph/ decides which own), untyped blocks are counted per size key, and if a reachable
// strongly connected group of typed blocks exists, one retention path from the roots to each such
// group is searched (scanner/RetentionPaths). The result goes to its own memfd, which the
// checking process reads into a TypedScanResult. Cost: the readers' pass over every block (the
// std::function reader reads every word: about one marking pass without lookups), one more pass
// over the words of typed blocks, and the path search only when needed. No host malloc in the
// child. May include heap/ and roots/.
#pragma once

#include <span>
#include <string>

#include "roots/ProcessMappings.h"
#include "roots/ThreadInfo.h"
#include "scanner/BlockIndex.h"
#include "scanner/HeapMarker.h"
#include "scanner/RootRanges.h"
#include "scanner/ScanResult.h"
#include "scanner/TypedScanResult.h"
#include "scanner/types/ReaderSet.h"

namespace heapgraph::scanner {

namespace TypedScan {

struct Input {
  const BlockIndex& index;
  const HeapMarker& marker;                // final marks; its lookup rules define the references
  std::span<const LeakedBlock> blocks;     // every live block, by address (index order)
  std::span<const uint32_t> leaked_index;  // per block: index into the leaked list, or ~0u
  const types::ReaderSet& readers;         // prepared
  const roots::ProcessMappings& mappings;  // the snapshot's map
  const RootRanges& roots;
  std::span<const roots::ThreadInfo> threads;
  uint64_t static_tls_size;  // glibc's, TCB included; 0 if unknown (no root is then kTls)
  // Empty: every block is identified here. Else one entry per block, each block's own identity
  // already in it (ReaderSet::IdentifyRange, e.g. half by another process); completed here.
  std::span<types::TypeIdentity> identities = {};
  uint64_t tcb_size = 0;  // glibc's sizeof(struct pthread); 0 if unknown (scanner/RootOrigin.h)
};

// Snapshot child: computes everything and writes it to `fd` from offset 0. False if writing
// failed.
bool WriteTo(int fd, const Input& input);
// Checking process: reads what WriteTo wrote. False and `error` set on a short or bad result.
bool ReadFrom(int fd, TypedScanResult* out, std::string* error);

}  // namespace TypedScan

}  // namespace heapgraph::scanner
