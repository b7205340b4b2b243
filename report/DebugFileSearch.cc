#include "report/DebugFileSearch.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <iterator>
#include <utility>

#include "heap/platform/SharedLibrary.h"
#include "reader/InputFile.h"
#include "reader/RecordingError.h"
#include "report/BaseName.h"
#include "scanner/types/ElfutilsLibrary.h"

#ifdef HEAPGRAPH_HAVE_DEBUGINFOD
#include <elfutils/debuginfod.h>
#endif

namespace heapgraph::report {

std::string ElfBuildId(const std::string& path) {
  std::optional<InputFile> file = InputFile::Open(path, path, InputFile::Links::kFollow);
  if (!file) return "";
  const elfutils::LibelfFunctions* lib = elfutils::Libelf();
  const elfutils::LibdwFunctions* dw = elfutils::Libdw();
  if (lib == nullptr || dw == nullptr) return "";
  Elf* elf = lib->elf_begin(file->fd(), ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return "";
  std::string hex;
  const void* bits = nullptr;
  ssize_t length = lib->elf_kind(elf) == ELF_K_ELF ? dw->dwelf_elf_gnu_build_id(elf, &bits) : -1;
  for (ssize_t i = 0; i < length; ++i) {
    fmt::format_to(std::back_inserter(hex), "{:02x}", static_cast<const unsigned char*>(bits)[i]);
  }
  lib->elf_end(elf);
  return hex;
}

#ifdef HEAPGRAPH_HAVE_DEBUGINFOD
namespace {

// libdebuginfod's functions, from the library loaded on the first search that asks a server
// (heap/platform/SharedLibrary: linking it loaded libcurl and 30 other libraries into every
// `heapgraph` command); all null when it cannot be loaded.
struct DebuginfodLibrary {
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_end) end = nullptr;
  decltype(&debuginfod_find_debuginfo) find_debuginfo = nullptr;
};

const DebuginfodLibrary& Library() {
  static const DebuginfodLibrary functions = [] {
    DebuginfodLibrary f;
    const SharedLibrary library(HEAPGRAPH_DEBUGINFOD_SONAME);
    if (!library.Bind("debuginfod_end", &f.end) ||
        !library.Bind("debuginfod_find_debuginfo", &f.find_debuginfo)) {
      return DebuginfodLibrary{};
    }
    library.Bind("debuginfod_begin", &f.begin);
    return f;
  }();
  return functions;
}

}  // namespace
#endif

// A debuginfod client (libdebuginfod): the servers of DEBUGINFOD_URLS, its cache and timeouts
// (DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT) as the library reads them from the environment.
class DebugFileSearch::Debuginfod {
 public:
#ifdef HEAPGRAPH_HAVE_DEBUGINFOD
  Debuginfod() : client_(Library().begin != nullptr ? Library().begin() : nullptr) {}
  ~Debuginfod() {
    if (client_ != nullptr) Library().end(client_);
  }
  // The cached debug file of `build_id` (hex), downloaded first if needed; "" when no server has
  // it.
  std::string DebugInfo(const std::string& build_id) {
    if (client_ == nullptr) return "";
    char* path = nullptr;
    int fd = Library().find_debuginfo(
        client_, reinterpret_cast<const unsigned char*>(build_id.c_str()), 0, &path);
    if (fd < 0) return "";
    close(fd);
    std::string result = path != nullptr ? path : "";
    std::free(path);
    return result;
  }

 private:
  debuginfod_client* client_;
#else
  std::string DebugInfo(const std::string&) {
    return "";
  }
#endif
};

bool DebugFileSearch::DebuginfodAvailable() {
#ifdef HEAPGRAPH_HAVE_DEBUGINFOD
  return Library().begin != nullptr;
#else
  return false;
#endif
}

DebugFileSearch::DebugFileSearch(Options options) : options_(std::move(options)) {
  for (const std::string& dir : options_.debug_dirs) {
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      warnings_.push_back(fmt::format("--debug-dir {}: no such directory", dir));
    }
  }
}

DebugFileSearch::~DebugFileSearch() = default;

std::optional<std::string> DebugFileSearch::Find(const std::string& module_path,
                                                 const std::string& build_id) {
  std::string key = module_path + '\n' + build_id;
  auto it = found_.find(key);
  if (it == found_.end()) it = found_.emplace(key, Search(module_path, build_id)).first;
  return it->second;
}

std::string BuildIdDebugPath(const std::string& build_id) {
  // The first byte names the directory, the rest the file.
  if (build_id.size() <= 2) return "";
  return fmt::format("/.build-id/{}/{}.debug", build_id.substr(0, 2), build_id.substr(2));
}

std::optional<std::string> DebugFileSearch::Search(const std::string& module_path,
                                                   const std::string& build_id) {
  if (build_id.empty()) {
    if (module_path.empty()) return std::nullopt;
    return module_path;
  }
  std::string by_id = BuildIdDebugPath(build_id);
  std::string base = BaseName(module_path);
  std::vector<std::string> candidates;
  for (const std::string& dir : options_.debug_dirs) {
    if (!by_id.empty()) candidates.push_back(dir + by_id);
    if (!base.empty()) {
      candidates.push_back(fmt::format("{}/{}.debug", dir, base));
      candidates.push_back(fmt::format("{}/{}", dir, base));
    }
  }
  if (!options_.system_dir.empty() && !by_id.empty()) {
    candidates.push_back(options_.system_dir + by_id);
  }
  if (!module_path.empty()) candidates.push_back(module_path);
  for (const std::string& path : candidates) {
    if (Matches(path, module_path, build_id)) return path;
  }
  if (options_.debuginfod) {
    // The servers' names first: without any, the library (and libcurl) is never loaded.
    const char* urls = std::getenv("DEBUGINFOD_URLS");
    if (urls != nullptr && urls[0] != '\0' && DebuginfodAvailable()) {
      if (!debuginfod_) debuginfod_ = std::make_unique<Debuginfod>();
      std::string path = debuginfod_->DebugInfo(build_id);
      if (!path.empty() && Matches(path, module_path, build_id)) return path;
    }
  }
  return std::nullopt;
}

bool DebugFileSearch::Matches(const std::string& path, const std::string& module_path,
                              const std::string& build_id) {
  auto it = build_ids_.find(path);
  if (it == build_ids_.end()) {
    std::optional<std::string> id;
    try {
      struct stat st;
      if (stat(path.c_str(), &st) == 0) id = ElfBuildId(path);
    } catch (const RecordingError& e) {
      warnings_.push_back(e.what());
    }
    it = build_ids_.emplace(path, std::move(id)).first;
  }
  if (!it->second) return false;
  if (*it->second == build_id) return true;
  if (warned_.insert(path).second) {
    warnings_.push_back(
        fmt::format("{}: build-id {}, the recording's {} had {}: its symbols are not used", path,
                    it->second->empty() ? "none" : *it->second, BaseName(module_path), build_id));
  }
  return false;
}

}  // namespace heapgraph::report
