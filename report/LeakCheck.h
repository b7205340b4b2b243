// report/: one complete leak check of the calling process: scan (scanner/LeakScan), leak graph
// (graph/LeakGraph), report (LeakReport) and the report files. The C++ form of the C API in
// report/heapgraph_leaks.h; what a debug menu, a GoogleTest leak test or the at-exit check calls.
#pragma once

#include <string>

#include "report/LeakReport.h"

namespace heapgraph::report {

struct LeakCheckOptions {
  std::string json_path;  // "" = none
  std::string text_path;  // "" = none, "-" = stderr
  bool interior_pointers = true;
};

// Never throws; a failed check has report.ok == false and report.error set (one line).
LeakReport RunLeakCheck(const LeakCheckOptions& options);

}  // namespace heapgraph::report
