#include "tools/RunRoot.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "heap/platform/ProcessStartTicks.h"
#include "heap/session/DumpRetention.h"

namespace heapgraph::tools {
namespace {

constexpr std::string_view kMarkerPrefix = ".run.";

// The tag a marker's file name carries, or 0.
uint32_t MarkerTag(const std::string& name) {
  if (!name.starts_with(kMarkerPrefix)) return 0;
  uint32_t tag = 0;
  const char* begin = name.data() + kMarkerPrefix.size();
  const char* end = name.data() + name.size();
  auto [at, error] = std::from_chars(begin, end, tag);
  return error == std::errc() && at == end ? tag : 0;
}

// True when the marker at `path` names a process that still runs: its pid with its start ticks.
bool MarkerAlive(const std::filesystem::path& path) {
  std::ifstream in(path);
  int pid = 0;
  uint64_t ticks = 0;
  return static_cast<bool>(in >> pid >> ticks) && ticks != 0 && ProcessStartTicks::Of(pid) == ticks;
}

}  // namespace

RunRoot::RunRoot(const std::string& root, uint32_t run_tag) : root_(root), run_tag_(run_tag) {
  std::string path = fmt::format("{}/{}{}", root, kMarkerPrefix, run_tag);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  std::string text = fmt::format("{} {}\n", getpid(), ProcessStartTicks::OfSelf());
  bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (written) {
    marker_ = path;
  } else {
    unlink(path.c_str());
  }
}

RunRoot::~RunRoot() {
  if (!marker_.empty()) unlink(marker_.c_str());
}

std::vector<uint32_t> RunRoot::BusyTags() const {
  std::vector<uint32_t> tags;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root_, error)) {
    uint32_t tag = MarkerTag(entry.path().filename().string());
    if (tag == 0 || !entry.is_regular_file(error)) continue;
    if (MarkerAlive(entry.path())) {
      tags.push_back(tag);
    } else if (tag != run_tag_) {
      std::filesystem::remove(entry.path(), error);  // a run killed before it removed its own
    }
  }
  return tags;
}

void RunRoot::PruneEarlierRuns(uint32_t keep) const {
  std::vector<uint32_t> busy = BusyTags();
  int root_fd = open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) return;
  DumpRetention::Run(root_fd, "", nullptr, keep, busy);
  close(root_fd);
}

}  // namespace heapgraph::tools
