// heap/platform/: the one-line warning heapgraph prints on stderr, from inside allocation hooks as
// well as from its tool threads: "heapgraph: <text>\n", built in a LineBuffer (no malloc, no
// stdio) and written with one write(2), so that lines of concurrent threads do not mix.
// Invariants: the line always starts "heapgraph: " and Write always ends it with exactly one '\n'
// (text past the buffer's capacity is cut, the newline is never cut); text from the user
// (AppendUntrusted) cannot add a line break. Includes libc only.
#pragma once

#include <cstddef>

#include "heap/platform/LineBuffer.h"

namespace heapgraph {

class WarningLine {
 public:
  // At most this many bytes of one piece of user text are echoed, then "...".
  static constexpr size_t kMaxUntrusted = 128;

  // "heapgraph: <what>[: <detail>][<consequence>]\n" on stderr in one call; a null or empty
  // detail is left out.
  static void Print(const char* what, const char* detail = nullptr,
                    const char* consequence = nullptr);

  WarningLine();  // "heapgraph: "

  WarningLine& Append(const char* text);
  WarningLine& Append(const char* text, size_t length);
  // ": <detail>", unless `detail` is null or empty.
  WarningLine& AppendDetail(const char* detail);
  // Text heapgraph does not control (an option, a path): at most kMaxUntrusted bytes, "..." when
  // longer, control characters as '?'.
  WarningLine& AppendUntrusted(const char* text, size_t length);

  // The line so far, without the newline.
  const char* data() const { return line_.data(); }
  size_t size() const { return line_.size(); }

  // Ends the line with '\n' and writes it to `fd` (stderr by default). Call once.
  void Write(int fd = 2);

 private:
  LineBuffer line_;
};

}  // namespace heapgraph
