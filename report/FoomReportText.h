// report/: the human-readable form of a FoomReport: how the run ended, the totals, torn records,
// the feature value, every category (count, bytes, suspect marks) and the top stacks of the top
// categories.
#pragma once

#include <string>

#include "report/FoomReport.h"

namespace heapgraph::report {

std::string FoomReportToText(const FoomReport& report);

}  // namespace heapgraph::report
