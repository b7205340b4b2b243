// report/: a LeakReport as a SARIF 2.1.0 log, for code review tools (GitHub / GitLab code
// scanning). One run of the tool "heapgraph"; one result per leak signature, largest first:
//   - every unsuppressed direct record (indirect ones are what a direct leak retains: they are
//     counted in its message, not reported again), rule "heapgraph/direct-leak", or, when the
//     record is a leaked cycle's representative, the cycle's rule
//     "heapgraph/leaked-cycle/<kind>" (kind: graph/CycleKind);
//   - a leaked cycle without a representative (another leak references it), the same rule, at the
//     record of its first member;
//   - every reachable retain cycle, rule "heapgraph/reachable-cycle/<kind>", level "note", its
//     root and retention path in the message (the report has no stack for reachable blocks, so
//     such a result has no source location).
// The primary location is the first application frame (CallerSelector's Caller1 onward) with a
// source line; the whole stack, outermost first, is the result's code flow. partialFingerprints
// "heapgraphLeakSignature/v1" hashes the rule and each frame's module and function (offsets when
// unsymbolized), never addresses or lines, so a re-upload of the same leak deduplicates. Within
// GitHub code scanning's documented display limits: at most kMaxResults results (the rest counted
// in the run's properties) and kMaxFlowLocations code flow locations per result.
#pragma once

#include <cstddef>
#include <string>

#include "report/LeakReport.h"

namespace heapgraph::report {

inline constexpr size_t kSarifMaxResults = 5000;
inline constexpr size_t kSarifMaxFlowLocations = 1000;

// The log, indented JSON. Invalid UTF-8 becomes U+FFFD.
std::string LeakReportSarifText(const LeakReport& report);

}  // namespace heapgraph::report
