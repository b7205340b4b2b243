// tests/: redirects fd 2 to an unlinked temporary file for the object's lifetime; Text() restores
// stderr and returns what was written. For tests of the one-line warnings (heapgraph: ...).
// Test-only; may include anything.
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace heapgraph {

class StderrCapture {
 public:
  StderrCapture() {
    char name[] = "/tmp/heapgraph-stderr-XXXXXX";
    file_ = mkstemp(name);
    unlink(name);
    fflush(stderr);
    saved_ = dup(2);
    dup2(file_, 2);
  }
  ~StderrCapture() {
    Restore();
    close(file_);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::string Text() {
    Restore();
    std::string text;
    char buffer[4096];
    ssize_t n;
    for (off_t offset = 0; (n = pread(file_, buffer, sizeof(buffer), offset)) > 0; offset += n) {
      text.append(buffer, static_cast<size_t>(n));
    }
    return text;
  }

 private:
  void Restore() {
    if (saved_ < 0) return;
    fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  int file_ = -1;
  int saved_ = -1;
};

}  // namespace heapgraph
