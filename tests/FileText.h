// tests/: the whole text of a file (empty when it cannot be read), for tests that read the reports
// and outputs their children wrote. Test-only; may include anything.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace heapgraph {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace heapgraph
