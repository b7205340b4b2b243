#include "tools/RunSymbolCache.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "heap/config/Config.h"
#include "tools/OptionValue.h"

namespace heapgraph::tools {
namespace {

constexpr auto kUnusedFor = std::chrono::hours(24 * 30);
constexpr auto kPruneEvery = std::chrono::hours(24);

// Makes `dir` (0700) if it is missing; true when it is a directory, no link, owned by the
// effective user and closed to everyone else.
bool OwnPrivateDirectory(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  struct stat st;
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
         (st.st_mode & 077) == 0;
}

// Removes the files not written for kUnusedFor, at most once per kPruneEvery (the time of the
// last pass is the mtime of `.pruned`).
void Prune(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path marker = fs::path(dir) / ".pruned";
  const auto now = fs::file_time_type::clock::now();
  const auto last = fs::last_write_time(marker, error);
  if (!error && now - last < kPruneEvery) return;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    std::error_code ignored;
    if (entry.path() == marker || !entry.is_regular_file(ignored)) continue;
    const auto written = entry.last_write_time(ignored);
    if (!ignored && now - written > kUnusedFor) fs::remove(entry.path(), ignored);
  }
  int fd = open(marker.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  utimensat(AT_FDCWD, marker.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

}  // namespace

std::string RunSymbolCache::UserDirectory() {
  const char* cache = getenv("XDG_CACHE_HOME");
  if (cache != nullptr && cache[0] == '/') return std::string(cache) + "/heapgraph/symbols";
  const char* home = getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache/heapgraph/symbols";
  return "";
}

RunSymbolCache::RunSymbolCache(const std::string& root) {
  const char* servers = getenv("DEBUGINFOD_URLS");
  std::string user = servers != nullptr && servers[0] != '\0' ? "" : UserDirectory();
  if (!user.empty()) {
    std::error_code error;
    std::filesystem::path parent = std::filesystem::path(user).parent_path();
    std::filesystem::create_directories(parent.parent_path(), error);
    if (OwnPrivateDirectory(parent.string()) && OwnPrivateDirectory(user)) {
      try {
        std::string value = QuoteOptionValue(user, "symbol_cache");
        if (value.size() < Config::kMaxPath) {
          Prune(user);
          path_ = user;
          option_ = value;
          kept_ = true;
          return;
        }
      } catch (const std::runtime_error&) {  // both quotes in the path: the run's own instead
      }
    }
  }
  std::string pattern = root + "/.symbols.XXXXXX";
  if (pattern.size() < Config::kMaxPath && mkdtemp(pattern.data()) != nullptr) {
    path_ = pattern;
    option_ = pattern;
  }
}

RunSymbolCache::~RunSymbolCache() {
  std::error_code ignored;
  if (!kept_ && !path_.empty()) std::filesystem::remove_all(path_, ignored);
}

}  // namespace heapgraph::tools
