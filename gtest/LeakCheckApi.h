// gtest/: the public C API functions the listener calls, found at run time in libheapgraph.so
// (preloaded or linked; it loads its checker, libheapgraph_scan.so, itself). So the same listener
// works under LD_PRELOAD and in a linked build, and says so when neither is there.
#pragma once

#include <string>

#include "heapgraph/heapgraph.h"

namespace heapgraph::gtest {

class LeakCheckApi {
 public:
  // Resolves the functions; `error` says why not when !ok().
  LeakCheckApi();
  bool ok() const { return checkpoint_ != nullptr && check_since_ != nullptr; }
  const std::string& error() const { return error_; }

  int Checkpoint(const char* name) const { return checkpoint_(name); }
  int CheckSince(const char* name, const char* json, const char* text,
                 heapgraph_leak_summary* summary) const {
    return check_since_(name, json, text, summary);
  }

 private:
  decltype(&heapgraph_checkpoint) checkpoint_ = nullptr;
  decltype(&heapgraph_check_leaks_since) check_since_ = nullptr;
  std::string error_;
};

}  // namespace heapgraph::gtest
