#include "report/FrameResymbolizer.h"

#include <exception>
#include <optional>
#include <utility>

#include "report/StackResolver.h"

namespace heapgraph::report {

FrameResymbolizer::FrameResymbolizer(DebugFileSearch& search, Symbolizer& symbolizer, bool all)
    : search_(search), symbolizer_(symbolizer), all_(all) {}

bool FrameResymbolizer::Wanted(const ReportFrame& outer) const {
  return !outer.module_path.empty() && outer.offset != 0 && (all_ || outer.function.empty());
}

const FrameList& FrameResymbolizer::AddressFrames(const ReportFrame& outer) {
  auto [it, inserted] = memo_[outer.module_path][outer.build_id].try_emplace(outer.offset);
  if (!inserted) return it->second;
  std::optional<std::string> file = search_.Find(outer.module_path, outer.build_id);
  if (!file) return it->second;
  std::vector<SourceFrame> source;
  try {
    // A return address: the call instruction is the byte before it.
    source = symbolizer_.Symbolize(*file, outer.offset - 1);
  } catch (const std::exception&) {
    return it->second;
  }
  AppendSourceFrames(outer, std::move(source), it->second);
  if (!it->second.empty()) ++symbolized_;
  return it->second;
}

template <typename Frames>
bool FrameResymbolizer::AnyWanted(const Frames& frames) const {
  for (const ReportFrame& frame : frames) {
    if (!frame.inlined && Wanted(frame)) return true;
  }
  return false;
}

template <typename Frames, typename Append>
void FrameResymbolizer::ForEachAddress(const Frames& frames, Append append) {
  for (size_t i = 0; i < frames.size();) {
    size_t n = 1;
    // The run of one address: its inlined frames, then the containing one.
    while (i + n < frames.size() && frames[i + n - 1].inlined &&
           frames[i + n].address == frames[i].address) {
      ++n;
    }
    const ReportFrame& outer = frames[i + n - 1];
    const FrameList* replacement = Wanted(outer) ? &AddressFrames(outer) : nullptr;
    if (replacement != nullptr && replacement->empty()) replacement = nullptr;
    append(i, n, replacement);
    i += n;
  }
}

FrameList FrameResymbolizer::Resolve(const FrameList& stack) {
  FrameList out;
  out.reserve(stack.size());
  ForEachAddress(stack, [&](size_t i, size_t n, const FrameList* replacement) {
    if (replacement != nullptr) {
      out.append(*replacement);
      return;
    }
    for (size_t k = i; k < i + n; ++k) out.push_back(stack.shared(k));
  });
  return out;
}

std::vector<ReportFrame> FrameResymbolizer::Resolve(const std::vector<ReportFrame>& frames) {
  std::vector<ReportFrame> out;
  out.reserve(frames.size());
  ForEachAddress(frames, [&](size_t i, size_t n, const FrameList* replacement) {
    if (replacement != nullptr) {
      for (const ReportFrame& frame : *replacement) out.push_back(frame);
      return;
    }
    out.insert(out.end(), frames.begin() + static_cast<std::ptrdiff_t>(i),
               frames.begin() + static_cast<std::ptrdiff_t>(i + n));
  });
  return out;
}

void FrameResymbolizer::Resolve(ReportDocument& document) {
  bool renamed = false;  // some stack had an address to symbolize
  auto resolve = [this, &renamed](auto& frames) {
    if (!AnyWanted(frames)) return;
    frames = Resolve(frames);
    renamed = true;
  };
  if (document.leak) {
    for (LeakRecord& record : document.leak->leaks) resolve(record.stack);
  }
  if (document.foom) {
    for (FoomCategory& category : document.foom->categories) {
      for (FoomStack& stack : category.stacks) resolve(stack.frames);
    }
    if (document.foom->crash_lag) resolve(document.foom->crash_lag->stack.frames);
    // Caller1/Caller2 were labels of frames that had no names: label the named frames now.
    if (renamed && document.foom->feature) document.foom->feature = FoomFeature(*document.foom);
  }
}

}  // namespace heapgraph::report
