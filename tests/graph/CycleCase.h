// tests/scanner: runs one case of a retain-cycle test program under the real leak check,
//   heapgraph run --json FILE --text FILE [OPTIONS] -- tests/programs/PROGRAM CASE
// and returns its exit status and reports. Shared by RetainCycleTest and BlocksObjcCycleTest.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace heapgraph::cycletest {

struct CaseRun {
  int status = -1;  // the program's exit status under `heapgraph run`; -1 if it did not exit
  nlohmann::json report;
  std::string text;
};

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs the case with the program's stdout and stderr discarded; kills it after 60 s.
inline CaseRun RunCase(const std::string& program, const std::string& name,
                       const std::vector<std::string>& options = {}) {
  char pattern[] = "/tmp/heapgraph-cycles-XXXXXX";
  std::filesystem::path dir = mkdtemp(pattern);
  std::string json_path = dir / "report.json", text_path = dir / "report.txt";
  std::string exe = std::string(HEAPGRAPH_PROGRAM_DIR) + "/" + program;
  std::vector<std::string> args = {HEAPGRAPH_CLI, "run", "--json", json_path, "--text", text_path};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"--", exe, name});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  CaseRun run;
  int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return run;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.report = nlohmann::json::parse(ReadFile(json_path), nullptr, false);
  run.text = ReadFile(text_path);
  std::filesystem::remove_all(dir);
  return run;
}

// The report's typed retain cycles (leaked or reachable).
inline std::vector<nlohmann::json> TypedCycles(const CaseRun& run) {
  std::vector<nlohmann::json> cycles;
  for (const nlohmann::json& c : run.report.value("cycles", nlohmann::json::array())) {
    if (c.value("typed", false)) cycles.push_back(c);
  }
  return cycles;
}

}  // namespace heapgraph::cycletest
