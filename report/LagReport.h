// report/: the lag report model and its builder (`heapgraph lag`, docs/lag.md). From one recording
// directory's `lag` file (reader/LagRecords, written by heap/lag/LagWatchdog): every lag, one
// entry per unit of work that ran longer than the threshold (its kLagLong records merged: the
// last one names the most time-consuming stack, a kLagEnded record gives the whole duration) and
// one per kLagCpu record (a thread above the CPU share), in file order; each with its thread,
// start, duration, CPU share, the most time-consuming stack symbolized (StackResolver), how many
// of the ring's samples held it, and the ring's stack ids. A torn last record (the process was
// killed while writing it) is reported as such, never read. LagReportText.h and LagReportJson.h
// format it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heap/store/PersistedFormat.h"
#include "report/ReportFrame.h"
#include "report/Symbolizer.h"

namespace heapgraph::report {

struct LagEntry {
  std::string kind;  // "long" (a unit over the threshold) or "cpu" (above the CPU share)
  int32_t tid = 0;
  uint64_t unit = 0;      // the thread's unit number (1 = its first heapgraph_work_begin)
  uint64_t start_ns = 0;  // realtime at which the unit began (its first record minus its run time)
  uint64_t last_ns = 0;   // realtime of its last record
  uint64_t duration_ns = 0;   // the unit's run time: whole when ended, else at its last record
  bool ended = false;         // a kLagEnded record closed it
  bool open = false;          // no end record: in progress when the file was read (or at death)
  uint32_t cpu_permille = 0;  // highest CPU share over its records, per mille of a core
  uint32_t records = 0;       // records written for it (annealing keeps this small)
  uint32_t stack_id = 0;      // the most time-consuming stack at its last record (0: none)
  uint32_t repeats = 0;       // samples of the ring with that stack's top frame
  uint32_t samples_missed = 0;
  std::vector<uint32_t> samples;    // the ring's stack ids at its last record, oldest first
  std::vector<ReportFrame> frames;  // the stack, innermost first (empty: stack 0 or unreadable)
};

struct LagReport {
  std::string directory;
  bool present = false;        // the directory has a lag file (the monitor ran)
  format::LagHeader header{};  // the options the monitor ran with (when present)
  std::vector<LagEntry> lags;
  bool torn = false;  // the last record was torn (the process was killed while writing it)
  std::vector<std::string> warnings;
};

// `symbolizer` may be null (frames keep module + offset only). Throws RecordingError when the lag
// file is not one (bad magic, version, header).
LagReport BuildLagReport(const std::string& directory, Symbolizer* symbolizer);

}  // namespace heapgraph::report
