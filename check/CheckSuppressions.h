// check/: the suppression rules of one in-process check (report/Suppressions.h): the recorder's
// `suppressions` files (';'-separated, HeapgraphRecorderView::suppressions, as
// scanner::ScanResult::suppressions carries them) and the text of the program's
// __lsan_default_suppressions(), which libheapgraph_scan.so refers to weakly (bound when the
// program exports it: docs/lsan-compatibility.md). heapgraph has no built-in suppressions
// (none was needed: docs/lsan-compatibility.md). Every file that cannot be read and every bad line
// is one "heapgraph: ..." line on stderr; the check goes on with the rules that parsed.
#pragma once

#include <string>

#include "report/Suppressions.h"

namespace heapgraph::report {

Suppressions LoadCheckSuppressions(const std::string& files);

}  // namespace heapgraph::report
