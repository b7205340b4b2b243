// tests/: the whole text of a file (empty when it cannot be read), for tests that read the reports
// and outputs their children wrote, and how often a string occurs in such a text. Test-only; may
// include anything.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace heapgraph {

// How many times `what` occurs in `text` (overlapping occurrences counted).
inline size_t CountOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace heapgraph
