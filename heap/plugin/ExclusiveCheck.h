// heap/plugin/: while one lives, no other leak check runs in the process and fork() waits
// (heap/runtime/CheckLock.h): what a check holds from before its scan until its report is
// written, so that no other check, and no forked child, ever finds the check's working memory
// in use. Takes the recorder's heapgraph_internal_begin_check/end_check
// (heap/plugin/ScanInterface.h), RecorderEntries::Get() outside libheapgraph.so; null entries
// (heapgraph not loaded): holds nothing, and the check fails later for that reason. No allocation.
#pragma once

#include "heap/plugin/RecorderEntries.h"

namespace heapgraph {

class ExclusiveCheck {
 public:
  // `program_stack_pointer`: the program's frame that asked for the check (its stack is scanned
  // from there while this thread waits for another check).
  ExclusiveCheck(const RecorderEntries& recorder, uint64_t program_stack_pointer)
      : end_(recorder.begin_check != nullptr && recorder.begin_check(program_stack_pointer) == 0
                 ? recorder.end_check
                 : nullptr),
        refused_(recorder.begin_check != nullptr && end_ == nullptr) {}
  ~ExclusiveCheck() {
    if (end_ != nullptr) end_();
  }
  ExclusiveCheck(const ExclusiveCheck&) = delete;
  ExclusiveCheck& operator=(const ExclusiveCheck&) = delete;

  // The calling thread is already inside a check (one started from a signal handler during a
  // check): this one must not run.
  bool refused() const { return refused_; }

 private:
  HeapgraphEndCheckFn end_;
  bool refused_;
};

}  // namespace heapgraph
