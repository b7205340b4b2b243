// report/: the human-readable form of a FoomReport, the verdict first: how the run ended, the
// totals, torn records, the feature value (the suspect), the memory time line, then every
// category (count, bytes, suspect marks) with the first stacks of the top categories, each cut
// to its first frames (the JSON report has every stack whole).
#pragma once

#include <cstddef>
#include <string>

#include "report/FoomReport.h"

namespace heapgraph::report {

struct FoomTextOptions {
  size_t max_stacks = 3;  // stacks printed per category (of the report's top-M); 0: all
  size_t max_frames = 8;  // frames printed per stack; 0: all
};

std::string FoomReportToText(const FoomReport& report, const FoomTextOptions& options = {});

}  // namespace heapgraph::report
