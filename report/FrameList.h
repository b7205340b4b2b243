// report/: the frames of one stack, innermost first. A frame is immutable and shared by every
// stack that holds the same return address (StackResolver builds each address's frames once), so a
// stack costs one pointer per frame: 4,000 leak records of 9 frames allocate (and free) 4,000
// vectors, not 36,000 frames of five strings each. Reads like a std::vector<ReportFrame>.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "report/ReportFrame.h"

namespace heapgraph::report {

class FrameList {
 public:
  using Frame = std::shared_ptr<const ReportFrame>;

  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = ReportFrame;
    using difference_type = std::ptrdiff_t;
    using pointer = const ReportFrame*;
    using reference = const ReportFrame&;

    const_iterator() = default;
    explicit const_iterator(std::vector<Frame>::const_iterator it) : it_(it) {}
    reference operator*() const { return **it_; }
    pointer operator->() const { return it_->get(); }
    const_iterator& operator++() {
      ++it_;
      return *this;
    }
    const_iterator operator++(int) { return const_iterator(it_++); }
    difference_type operator-(const const_iterator& other) const { return it_ - other.it_; }
    const_iterator operator+(difference_type n) const { return const_iterator(it_ + n); }
    bool operator==(const const_iterator& other) const { return it_ == other.it_; }
    bool operator!=(const const_iterator& other) const { return it_ != other.it_; }

   private:
    std::vector<Frame>::const_iterator it_;
  };
  using iterator = const_iterator;
  using value_type = ReportFrame;

  FrameList() = default;
  FrameList(std::initializer_list<ReportFrame> frames);

  void push_back(ReportFrame frame) {
    frames_.push_back(std::make_shared<const ReportFrame>(std::move(frame)));
  }
  void push_back(Frame frame) { frames_.push_back(std::move(frame)); }
  // Appends `other`'s frames, shared.
  void append(const FrameList& other);
  // Replaces frame `i` by a new one (the other stacks sharing the old frame keep it).
  void replace(size_t i, ReportFrame frame);
  void reserve(size_t n) { frames_.reserve(n); }
  void clear() { frames_.clear(); }

  size_t size() const { return frames_.size(); }
  bool empty() const { return frames_.empty(); }
  const ReportFrame& operator[](size_t i) const { return *frames_[i]; }
  // Frame `i` itself, to share it with another list.
  const Frame& shared(size_t i) const { return frames_[i]; }
  const ReportFrame& front() const { return *frames_.front(); }
  const ReportFrame& back() const { return *frames_.back(); }
  const_iterator begin() const { return const_iterator(frames_.begin()); }
  const_iterator end() const { return const_iterator(frames_.end()); }

  // Copies of the frames (for code that keeps or edits them).
  std::vector<ReportFrame> ToVector() const;

  // Equal frames in the same order (by value, shared or not).
  friend bool operator==(const FrameList& a, const FrameList& b);
  friend bool operator!=(const FrameList& a, const FrameList& b) { return !(a == b); }

 private:
  std::vector<Frame> frames_;
};

}  // namespace heapgraph::report
