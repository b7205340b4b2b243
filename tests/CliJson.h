// tests/: runs the built `heapgraph` command (HEAPGRAPH_CLI) with `args` to its end and parses
// what it printed as one JSON document; a test failure (and an empty object) unless it exited 0.
// For process tests that read a child's recording with `heapgraph foom --json` / `lag --json`.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/ChildProcess.h"

namespace heapgraph::proctest {

inline nlohmann::json CliJson(const std::vector<std::string>& args) {
  RunResult r = RunToExit(HEAPGRAPH_CLI, args, {});
  bool ok = r.status && WIFEXITED(*r.status) && WEXITSTATUS(*r.status) == 0;
  EXPECT_TRUE(ok) << r.stderr_text;
  if (!ok) return nlohmann::json::object();
  std::string text;
  for (const std::string& line : r.lines) text += line + "\n";
  return nlohmann::json::parse(text);
}

// Whether a report's "frames" array has a frame of `function`.
inline bool FramesName(const nlohmann::json& frames, const std::string& function) {
  for (const auto& frame : frames) {
    if (frame.value("function", "") == function) return true;
  }
  return false;
}

}  // namespace heapgraph::proctest
