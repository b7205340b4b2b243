// report/: the symbols of a saved report's frames, filled in when `heapgraph report` renders it
// again, on any machine (docs/report-format.md, "Symbols when rendering"). Every frame keeps its
// module path, build-id and offset, so an address the recording could not name (a stripped binary,
// a missing debug package) is symbolized now from the file DebugFileSearch finds for that build.
//
// Contract: the frames of one return address (consecutive frames with the same address: inlined
// callees, then the containing function) are replaced by the Symbolizer's frames of the file found,
// at (offset - 1) as the recording symbolizes return addresses, when the containing function is
// unnamed (or, with `all`, whenever the address has a module); they keep address, module, module
// path, build-id and offset. An address the search and Symbolizer cannot name keeps its frames as
// they were: never fewer, never blank. Each distinct (module, build-id, offset) is symbolized once.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/DebugFileSearch.h"
#include "report/FrameList.h"
#include "report/ReportDocument.h"
#include "report/Symbolizer.h"

namespace heapgraph::report {

class FrameResymbolizer {
 public:
  // `all`: symbolize every address with a module again (--resymbolize), not only unnamed ones.
  FrameResymbolizer(DebugFileSearch& search, Symbolizer& symbolizer, bool all = false);

  FrameList Resolve(const FrameList& stack);
  std::vector<ReportFrame> Resolve(const std::vector<ReportFrame>& frames);
  // Every stack of the document: a leak report's records, a FOOM report's category stacks and its
  // crash-lag stack; a FOOM report's feature value (Caller1/Caller2) is computed again when any of
  // its stacks got names. (Explanation lines keep their recorded text.)
  void Resolve(ReportDocument& document);

  // Addresses that got new frames so far.
  size_t symbolized() const { return symbolized_; }

 private:
  // Whether the address whose outermost frame is `outer` is to be symbolized again.
  bool Wanted(const ReportFrame& outer) const;
  // Whether any address of `frames` is (the usual saved report has every frame named: its stacks
  // are then left as they are, not copied).
  template <typename Frames>
  bool AnyWanted(const Frames& frames) const;
  // The new frames of the address of `outer`; empty when it cannot be named.
  const FrameList& AddressFrames(const ReportFrame& outer);
  // Calls append(i, n, replacement) for each address's run [i, i + n) of `frames`; `replacement`
  // is null when the run stays as it is.
  template <typename Frames, typename Append>
  void ForEachAddress(const Frames& frames, Append append);

  DebugFileSearch& search_;
  Symbolizer& symbolizer_;
  bool all_;
  size_t symbolized_ = 0;
  // module path -> build-id -> offset -> frames (empty: cannot be named).
  std::unordered_map<std::string,
                     std::unordered_map<std::string, std::unordered_map<uint64_t, FrameList>>>
      memo_;
};

}  // namespace heapgraph::report
