// bench/: one short command spawned many times under several environments, interleaved (round r
// runs every variant once, odd rounds in reverse order), so that load from other work falls on
// every variant alike; prints per variant the median and quartiles of wall and CPU time (user +
// system of the command and its waited-for children, from wait4's rusage), the ratio of the
// medians to the first variant, and the median and quartiles of the per-round ratio of CPU times
// to the first variant's (paired: a round's load falls on both). A start-up cost of a few hundred
// microseconds moves a `run_short_lived.sh` round by less than its noise on a shared machine; here
// each variant runs hundreds of times side by side (docs/performance.md, session 24).
//
// Usage: spawn_interleaved ROUNDS VARIANT... -- PROGRAM [ARG...]
//   VARIANT is NAME=ASSIGNMENT;ASSIGNMENT... where each ASSIGNMENT (VAR=VALUE) is added to this
//   process's environment for that variant (e.g. "now=LD_PRELOAD=/x/libheapgraph.so;
//   HEAPGRAPH_OPTIONS=leak_check=1"); NAME= alone runs the environment as it is.
//   PROGRAM is run by path (posix_spawn), its output discarded.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Variant {
  std::string name;
  std::vector<std::string> assignments;
  std::vector<char*> environment;  // points into `assignments` and environ
  std::vector<double> wall_us, cpu_us;
};

Variant Parse(const char* spec) {
  Variant v;
  std::string text(spec);
  size_t eq = text.find('=');
  if (eq == std::string::npos) {
    std::fprintf(stderr, "spawn_interleaved: a variant is NAME=VAR=VALUE;...: %s\n", spec);
    std::exit(2);
  }
  v.name = text.substr(0, eq);
  for (size_t at = eq + 1; at < text.size();) {
    size_t end = text.find(';', at);
    if (end == std::string::npos) end = text.size();
    if (end > at) v.assignments.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  for (std::string& a : v.assignments) v.environment.push_back(a.data());
  for (char** e = environ; *e != nullptr; ++e) v.environment.push_back(*e);
  v.environment.push_back(nullptr);
  return v;
}

double Quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5)];
}

std::string LoadAverage() {
  char text[64] = {};
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return "?";
  if (std::fgets(text, sizeof(text), f) == nullptr) text[0] = '\0';
  std::fclose(f);
  std::string s(text);
  size_t third = s.find(' ', s.find(' ', s.find(' ') + 1) + 1);
  return s.substr(0, third);
}

// One spawn of argv under `v`; false if it could not be started.
bool RunOnce(Variant& v, char** argv, posix_spawn_file_actions_t* quiet) {
  const auto began = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], quiet, nullptr, argv, v.environment.data()) != 0) return false;
  int status = 0;
  struct rusage usage = {};
  if (wait4(pid, &status, 0, &usage) != pid) return false;
  const auto ended = std::chrono::steady_clock::now();
  v.wall_us.push_back(std::chrono::duration<double, std::micro>(ended - began).count());
  auto us = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + t.tv_usec; };
  v.cpu_us.push_back(us(usage.ru_utime) + us(usage.ru_stime));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int separator = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      separator = i;
      break;
    }
  }
  if (argc < 5 || separator < 3 || separator + 1 >= argc) {
    std::fprintf(stderr, "usage: spawn_interleaved ROUNDS VARIANT... -- PROGRAM [ARG...]\n");
    return 2;
  }
  const int rounds = std::atoi(argv[1]);
  std::vector<Variant> variants;
  for (int i = 2; i < separator; ++i) variants.push_back(Parse(argv[i]));
  char** command = argv + separator + 1;
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
  const std::string load_before = LoadAverage();
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < variants.size(); ++k) {
      Variant& v = variants[r % 2 == 0 ? k : variants.size() - 1 - k];
      if (!RunOnce(v, command, &quiet)) {
        std::fprintf(stderr, "spawn_interleaved: cannot run %s: %s\n", command[0],
                     std::strerror(errno));
        return 1;
      }
    }
  }
  std::printf("%d rounds, load %s before, %s after\n", rounds, load_before.c_str(),
              LoadAverage().c_str());
  const double first_wall = Quantile(variants[0].wall_us, 0.5);
  const double first_cpu = Quantile(variants[0].cpu_us, 0.5);
  for (const Variant& v : variants) {
    const double wall = Quantile(v.wall_us, 0.5), cpu = Quantile(v.cpu_us, 0.5);
    std::vector<double> paired;  // CPU over the first variant's in the same round
    for (size_t r = 0; r < v.cpu_us.size(); ++r)
      paired.push_back(v.cpu_us[r] / variants[0].cpu_us[r]);
    std::printf(
        "%-12s wall median %8.0f us (quartiles %8.0f %8.0f) x%.2f   CPU median %8.0f us "
        "(quartiles %8.0f %8.0f) x%.2f   paired CPU x%.3f (quartiles %.3f %.3f)\n",
        v.name.c_str(), wall, Quantile(v.wall_us, 0.25), Quantile(v.wall_us, 0.75),
        wall / first_wall, cpu, Quantile(v.cpu_us, 0.25), Quantile(v.cpu_us, 0.75), cpu / first_cpu,
        Quantile(paired, 0.5), Quantile(paired, 0.25), Quantile(paired, 0.75));
  }
  return 0;
}
