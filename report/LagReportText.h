// report/: the human-readable form of a LagReport: the monitor's options, then one paragraph per
// lag (kind, thread, unit, start in UTC, duration, whether it ended, CPU share, records written)
// with its most time-consuming stack (how many of the ring's samples held its top frame), cut to
// its first frames (the JSON report has every stack whole); a torn last record and the warnings
// last. A directory without a lag file says that the monitor did not run.
#pragma once

#include <cstddef>
#include <string>

#include "report/LagReport.h"

namespace heapgraph::report {

struct LagTextOptions {
  size_t max_frames = 12;  // frames printed per stack; 0: all
};

std::string LagReportToText(const LagReport& report, const LagTextOptions& options = {});

}  // namespace heapgraph::report
