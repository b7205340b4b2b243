#include "report/FrameList.h"

#include <algorithm>
#include <utility>

namespace heapgraph::report {

FrameList::FrameList(std::initializer_list<ReportFrame> frames) {
  frames_.reserve(frames.size());
  for (const ReportFrame& f : frames) push_back(f);
}

void FrameList::append(const FrameList& other) {
  frames_.insert(frames_.end(), other.frames_.begin(), other.frames_.end());
}

void FrameList::replace(size_t i, ReportFrame frame) {
  frames_.at(i) = std::make_shared<const ReportFrame>(std::move(frame));
}

std::vector<ReportFrame> FrameList::ToVector() const {
  std::vector<ReportFrame> copy;
  copy.reserve(frames_.size());
  for (const Frame& f : frames_) copy.push_back(*f);
  return copy;
}

bool operator==(const FrameList& a, const FrameList& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace heapgraph::report
