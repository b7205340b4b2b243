#include "tools/RunSummary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <system_error>

#include "heap/platform/PidPattern.h"
#include "heap/session/DumpRetention.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/RecordingDirectory.h"

namespace heapgraph::tools {
namespace {

// The pid and start ticks of a recording directory named "<pid>-<start ticks>"
// (RecordingDirectory) in *p; false for any other name.
bool ParseRecordingName(const std::string& name, CheckedProcess* p) {
  uint32_t pid = 0;
  uint64_t ticks = 0;
  if (!RecordingDirectory::ParseName(name.c_str(), &pid, &ticks) || pid == 0) return false;
  p->pid = static_cast<int>(pid);
  p->start_ticks = ticks;
  return true;
}

std::string Expanded(const std::string& pattern, int pid) {
  std::string out(pattern.size() + 32, '\0');
  ExpandPidPattern(pattern.c_str(), pid, out.data(), out.size());
  out.resize(out.find('\0'));
  return out;
}

// Fills `p` from the at-exit check's verdict in the recording directory `dir`.
void ReadVerdict(const std::filesystem::path& dir, CheckedProcess* p) {
  std::error_code error;  // a regular file only: the recorder writes one, never through a link
  if (!std::filesystem::is_regular_file(
          std::filesystem::symlink_status(dir / format::kExitCheckFile, error))) {
    return;  // no at-exit check ran
  }
  std::ifstream in(dir / format::kExitCheckFile);
  if (!in) return;  // no at-exit check ran
  p->checked = true;
  std::string key;
  uint64_t value = 0;
  while (in >> key) {
    if (key == "failed") {
      p->error = "the check could not run";
      return;
    }
    if (!(in >> value)) break;
    if (key == "leaked_blocks") p->blocks = value;
    if (key == "leaked_bytes") p->bytes = value;
  }
}

// The run tag in the session of the recording directory `dir` (format::SessionHeader.run_tag), or
// 0 when it has none or no readable session (DumpRetention::ReadSession: a FIFO or device planted
// as `session` never blocks).
uint32_t RunTagOf(const std::filesystem::path& dir) {
  auto session = std::make_unique<format::SessionHeader>();
  bool has_record = false;
  return DumpRetention::ReadSessionIn(dir.c_str(), session.get(), &has_record) ? session->run_tag
                                                                               : 0;
}

// `path` when this run wrote it (a kept --dir's or a shared file's older reports are not).
std::string ReportOfThisRun(const std::string& path, std::filesystem::file_time_type since) {
  std::error_code error;
  auto written = std::filesystem::last_write_time(path, error);
  return error || written < since ? std::string() : path;
}

}  // namespace

RunSummary::RunSummary(const std::string& root, const std::string& json_pattern, uint32_t run_tag,
                       std::filesystem::file_time_type since) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    CheckedProcess p;
    if (!ParseRecordingName(entry.path().filename().string(), &p) || !entry.is_directory() ||
        RunTagOf(entry.path()) != run_tag) {
      continue;
    }
    ReadVerdict(entry.path(), &p);
    if (p.checked && !json_pattern.empty()) {
      p.report = ReportOfThisRun(Expanded(json_pattern, p.pid), since);
    }
    processes_.push_back(p);
  }
  // A process that exec'd has a directory per image (the same pid and start time): one entry,
  // the checked one. A pid the kernel reused within the run (another start time) is another
  // process.
  auto same_process = [](const CheckedProcess& a, const CheckedProcess& b) {
    return a.pid == b.pid && a.start_ticks == b.start_ticks;
  };
  std::sort(processes_.begin(), processes_.end(),
            [](const CheckedProcess& a, const CheckedProcess& b) {
              if (a.pid != b.pid) return a.pid < b.pid;
              if (a.start_ticks != b.start_ticks) return a.start_ticks < b.start_ticks;
              return a.checked > b.checked;
            });
  processes_.erase(std::unique(processes_.begin(), processes_.end(), same_process),
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
  for (const CheckedProcess& p : processes_) checked += p.checked ? 1 : 0;
  std::string line = fmt::format(
      "heapgraph: run summary: {} of {} recorded process{} checked, {} "
      "with leaks",
      checked, processes_.size(), processes_.size() == 1 ? "" : "es", leaked_processes());
  for (const CheckedProcess& p : processes_) {
    if (!p.error.empty()) {
      line += fmt::format("; pid {}: {}", p.pid, p.error);
    } else if (!p.checked) {
      line += fmt::format("; pid {}: not checked", p.pid);
    } else {
      line += p.blocks == 0
                  ? fmt::format("; pid {}: no leaks", p.pid)
                  : fmt::format("; pid {}: {} leaked blocks, {} bytes", p.pid, p.blocks, p.bytes);
      if (show_paths && !p.report.empty()) line += " in " + p.report;
    }
  }
  if (shared_report_) line += " (one --json file for every process: add %p to its path)";
  return line;
}

}  // namespace heapgraph::tools
