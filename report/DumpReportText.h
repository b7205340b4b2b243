// report/: the terminal form of a DumpReport, as `heapgraph dump` prints it: one summary line (and
// one more with the estimated totals of a sampled recording), one line per torn record, then each
// top group with its stack, one line per return address ("#0 0x... module+0x... (build-id ...)"
// and the innermost source frame), its inlined callers on "in ..." lines; last, how many groups
// were left out.
#pragma once

#include <string>

#include "report/DumpReport.h"

namespace heapgraph::report {

// The whole report, newline-terminated lines.
std::string DumpReportToText(const DumpReport& report);

}  // namespace heapgraph::report
