// scanner/: explaining blocks, in the snapshot child after marking (scanner/SnapshotProcess, only
// when the scan has explain targets): selects the target blocks (the block containing each
// address; per function, the first ExplainRequest::kMaxPerFunction live blocks by address whose
// allocation stack, read from the recorder's stack table, has a return address in the function),
// runs one breadth-first search from the roots (scanner/RetentionPaths) that stops when every
// reachable target is reached, and writes each target block's chain, its root described
// (scanner/RootOrigin), to its own memfd. A target the marking left unmarked is a leak: no search.
// Cost: with address targets only, at most one single-process marking pass plus 12 bytes per
// block; function targets add a walk of every block's stack. No host malloc in the child. May
// include heap/ and roots/.
#pragma once

#include <span>
#include <string>

#include "heap/store/StackStore.h"
#include "scanner/BlockIndex.h"
#include "scanner/ExplainScanResult.h"
#include "scanner/HeapMarker.h"
#include "scanner/RootOrigin.h"
#include "scanner/ScanResult.h"

namespace heapgraph::scanner {

namespace ExplainScan {

struct Input {
  const BlockIndex& index;
  const HeapMarker& marker;             // final marks
  std::span<const LeakedBlock> blocks;  // every live block, by address (index order)
  const RootContext& roots;
  const StackStore* stacks;  // null: function targets match nothing
  const ExplainRequest& request;
};

// Snapshot child: writes the chains to `fd` from offset 0. False if writing failed.
bool WriteTo(int fd, const Input& input);
// Checking process: reads what WriteTo wrote. False and `error` set on a short or bad result.
bool ReadFrom(int fd, uint32_t targets, ExplainScanResult* out, std::string* error);

}  // namespace ExplainScan

}  // namespace heapgraph::scanner
