// report/: picks Caller1 and Caller2 (seed 000's feature value) from an allocation stack.
// Allocation plumbing is skipped: the allocator itself and the C++ runtime (malloc & co.,
// operator new, std:: and __gnu_cxx:: internals, frames in libc, libstdc++ or libheapgraph), and
// thin wrappers of the program's own (ThinWrapperDetector: small straight-line functions that only
// forward to the allocator). Caller1 is the first frame left; Caller2 the next frame of another
// function outside system libraries (/lib, /usr/lib), else the next frame of another function.
#pragma once

#include <string>
#include <vector>

#include "report/LeakReport.h"
#include "report/ThinWrapperDetector.h"

namespace heapgraph::report {

class CallerSelector {
 public:
  struct Callers {
    int caller1 = -1;  // index into the frames, -1 = none
    int caller2 = -1;
  };

  Callers Select(const std::vector<ReportFrame>& frames);
  // True for the allocator and the runtime's allocation plumbing (by function and module name).
  static bool IsAllocationPlumbing(const ReportFrame& frame);

 private:
  bool IsThinWrapper(const ReportFrame& frame);
  static bool IsSystemModule(const ReportFrame& frame);

  ThinWrapperDetector detector_;
};

}  // namespace heapgraph::report
