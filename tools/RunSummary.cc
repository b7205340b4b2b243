#include "tools/RunSummary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "heap/platform/PidPattern.h"

namespace heapgraph::tools {
namespace {

// The pid of a recording directory named "<pid>-<start ticks>", or 0.
int RecordingPid(const std::string& name) {
  size_t dash = name.find('-');
  if (dash == 0 || dash == std::string::npos) return 0;
  char* end = nullptr;
  long pid = strtol(name.c_str(), &end, 10);
  return end == name.c_str() + dash && pid > 0 ? static_cast<int>(pid) : 0;
}

std::string Expanded(const std::string& pattern, int pid) {
  std::string out(pattern.size() + 32, '\0');
  ExpandPidPattern(pattern.c_str(), pid, out.data(), out.size());
  out.resize(out.find('\0'));
  return out;
}

// Fills `p` from the report at `path` when this run wrote it.
void ReadReport(const std::string& path, std::filesystem::file_time_type since, CheckedProcess* p) {
  std::error_code error;
  auto written = std::filesystem::last_write_time(path, error);
  if (error || written < since) return;  // no report of this run: not checked
  std::ifstream in(path);
  nlohmann::json report = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* summary =
      report.is_object() && report.contains("summary") ? &report["summary"] : nullptr;
  if (summary == nullptr || !summary->is_object()) {
    p->error = fmt::format("{}: not a leak report", path);
    return;
  }
  // A path shared by several processes holds the last writer's report only: its own.
  std::string dir = report.value("recording_dir", std::string());
  if (RecordingPid(std::filesystem::path(dir).filename().string()) != p->pid) return;
  p->report = path;
  p->blocks =
      summary->value("direct_blocks", uint64_t{0}) + summary->value("indirect_blocks", uint64_t{0});
  p->bytes = summary->value("leaked_bytes", uint64_t{0});
}

}  // namespace

RunSummary::RunSummary(const std::string& root, const std::string& json_pattern,
                       std::filesystem::file_time_type since) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    int pid = RecordingPid(entry.path().filename().string());
    if (pid == 0 || !entry.is_directory() || entry.last_write_time() < since) continue;
    CheckedProcess p;
    p.pid = pid;
    if (!json_pattern.empty()) ReadReport(Expanded(json_pattern, pid), since, &p);
    processes_.push_back(p);
  }
  // A process that exec'd has a directory per image (the same pid): one entry, the checked one.
  std::sort(processes_.begin(), processes_.end(),
            [](const CheckedProcess& a, const CheckedProcess& b) {
              return a.pid != b.pid ? a.pid < b.pid : a.report > b.report;
            });
  processes_.erase(
      std::unique(processes_.begin(), processes_.end(),
                  [](const CheckedProcess& a, const CheckedProcess& b) { return a.pid == b.pid; }),
      processes_.end());
  if (processes_.size() > 1 && json_pattern.find("%p") == std::string::npos) {
    // One file for every process: it holds the last check's report only.
    shared_report_ = true;
  }
}

size_t RunSummary::leaked_processes() const {
  return static_cast<size_t>(std::count_if(processes_.begin(), processes_.end(),
                                           [](const CheckedProcess& p) { return p.blocks > 0; }));
}

std::string RunSummary::Line(bool show_paths) const {
  size_t checked = 0;
  for (const CheckedProcess& p : processes_) checked += p.report.empty() ? 0 : 1;
  std::string line = fmt::format(
      "heapgraph: run summary: {} of {} recorded process{} checked, {} "
      "with leaks",
      checked, processes_.size(), processes_.size() == 1 ? "" : "es", leaked_processes());
  for (const CheckedProcess& p : processes_) {
    if (!p.error.empty()) {
      line += fmt::format("; pid {}: {}", p.pid, p.error);
    } else if (p.report.empty()) {
      line += fmt::format("; pid {}: not checked", p.pid);
    } else {
      line += p.blocks == 0
                  ? fmt::format("; pid {}: no leaks", p.pid)
                  : fmt::format("; pid {}: {} leaked blocks, {} bytes", p.pid, p.blocks, p.bytes);
      if (show_paths) line += " in " + p.report;
    }
  }
  if (shared_report_) line += " (one --json file for every process: add %p to its path)";
  return line;
}

}  // namespace heapgraph::tools
