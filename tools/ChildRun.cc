#include "tools/ChildRun.h"

#include <fmt/format.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "heap/store/RecordingDirectory.h"
#include "tools/ExitStatus.h"

extern char** environ;

namespace heapgraph::tools {
namespace {

std::string ExecutableDir() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "";
  path[n] = '\0';
  return std::filesystem::path(path).parent_path().string();
}

// --preload, else ../heap/libheapgraph.so next to this binary, else $HEAPGRAPH_PRELOAD.
std::string ResolvePreload(const std::string& requested) {
  std::string path = requested;
  if (path.empty()) {
    std::string beside = ExecutableDir() + "/../heap/libheapgraph.so";
    const char* env = getenv("HEAPGRAPH_PRELOAD");
    if (access(beside.c_str(), R_OK) == 0) {
      path = beside;
    } else if (env != nullptr && env[0] != '\0') {
      path = env;
    } else {
      throw std::runtime_error("cannot find libheapgraph.so (use --preload or HEAPGRAPH_PRELOAD)");
    }
  }
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::canonical(path, error);
  if (error) throw std::runtime_error(fmt::format("preload {}: {}", path, error.message()));
  return absolute.string();
}

std::string MakeTemporaryRoot() {
  const char* tmp = getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/heapgraph-record-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error(fmt::format("mkdtemp {}: {}", pattern, strerror(errno)));
  }
  return pattern;
}

std::vector<std::string> ChildEnvironment(const std::string& preload, const std::string& root,
                                          const std::string& options) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (entry.rfind("LD_PRELOAD=", 0) == 0 || entry.rfind("HEAPGRAPH_OPTIONS=", 0) == 0) continue;
    env.push_back(std::move(entry));
  }
  env.push_back("LD_PRELOAD=" + preload);
  env.push_back("HEAPGRAPH_OPTIONS=dir=" + root + (options.empty() ? "" : "," + options));
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Starts the program with SIGINT/SIGQUIT at their defaults. Returns the pid or -errno.
pid_t Spawn(std::vector<std::string> argv, std::vector<std::string> env) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args = CStrings(argv), vars = CStrings(env);
  pid_t pid = -1;
  int error = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), vars.data());
  posix_spawnattr_destroy(&attr);
  return error == 0 ? pid : -error;
}

// The program's exit status as a shell reports it.
int WaitExitCode(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(fmt::format("waitpid: {}", strerror(errno)));
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

void ChildRunFlags::AddTo(CLI::App* command, const std::string& dir_help) {
  command->add_option("--preload", preload, "Path of libheapgraph.so");
  command->add_option("--dir", root, dir_help);
  command->add_option("--options", options, "More HEAPGRAPH_OPTIONS, a,b=c");
  command->add_option("PROGRAM", this->command, "-- PROGRAM ARGS...")->required();
}

std::string OptionsPath(const std::string& path, const char* flag) {
  std::string absolute = std::filesystem::absolute(path).lexically_normal().string();
  // HEAPGRAPH_OPTIONS separates entries with ',' or ':'.
  if (absolute.find_first_of(",:") != std::string::npos) {
    throw std::runtime_error(fmt::format("{} {}: must not contain ',' or ':'", flag, absolute));
  }
  return absolute;
}

ChildRun::ChildRun(const ChildRunFlags& flags)
    : command_(flags.command),
      preload_(ResolvePreload(flags.preload)),
      temporary_root_(flags.root.empty()) {
  root_ = OptionsPath(temporary_root_ ? MakeTemporaryRoot() : flags.root, "--dir");
  // Made here, not by the program's first recorded process, so that the run's own files (its
  // marker and symbol cache) have a place before the program starts.
  if (!RecordingDirectory::MakeRoot(root_.c_str())) {
    throw std::runtime_error(fmt::format("--dir {}: {}", root_, strerror(errno)));
  }
}

std::optional<std::string> ChildRun::Recording() const {
  if (pid_ <= 0) return std::nullopt;
  std::optional<std::string> best;
  uint64_t best_ticks = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root_, error)) {
    uint32_t pid = 0;
    uint64_t ticks = 0;
    if (!RecordingDirectory::ParseName(entry.path().filename().c_str(), &pid, &ticks) ||
        static_cast<pid_t>(pid) != pid_ || !entry.is_directory()) {
      continue;
    }
    if (!best || ticks >= best_ticks) {
      best = entry.path().string();
      best_ticks = ticks;
    }
  }
  if (error) throw std::runtime_error(fmt::format("{}: {}", root_, error.message()));
  return best;
}

int ChildRun::Run(const std::string& options) {
  struct sigaction ignore = {}, old_int = {}, old_quit = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  pid_ = Spawn(command_, ChildEnvironment(preload_, root_, options));
  int code = pid_ < 0 ? kExitCannotRun : WaitExitCode(pid_);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (pid_ < 0) PrintError(fmt::format("cannot run {}: {}", command_[0], strerror(-pid_)));
  return code;
}

}  // namespace heapgraph::tools
