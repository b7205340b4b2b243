// report/: the text lines of one symbolized stack, as the FOOM and lag reports print it: one line
// per frame ("#0 0x401136 SleepingHandler (hg_lag.cc:51)", FrameLabel), indented, cut to the first
// frames with a line saying how many were left out (the JSON reports have every stack whole).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report/ReportFrame.h"

namespace heapgraph::report {

// Appends frames #0.. of `frames`, the first `max_frames` (0: all), each line starting with
// `indent`.
void AppendStackLines(std::string& out, const std::vector<ReportFrame>& frames, size_t max_frames,
                      const std::string& indent = "      ");

}  // namespace heapgraph::report
