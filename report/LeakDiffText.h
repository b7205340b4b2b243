// report/: the text form of a LeakDiff (report/LeakDiff.h): one verdict line, then one line per
// new, gone and grown signature, largest first: kind, blocks, bytes and up to three frames.
#pragma once

#include <string>

#include "report/LeakDiff.h"

namespace heapgraph::report {

// "leak diff: N new leak signatures, N gone, N grew, N unchanged\n" and the lines.
std::string FormatLeakDiff(const LeakDiff& diff);

}  // namespace heapgraph::report
