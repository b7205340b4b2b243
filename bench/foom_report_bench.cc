// bench/: FOOM dump size and report time. Writes a dump of N live heap blocks (default 1M; sizes
// 16..4096 in 16-byte steps, 1,000 stacks of depth 16 whose frames are real code addresses of this
// binary) with the recorder's own classes (LiveAllocationTree, StackStore, ModuleMap, SessionFile)
// into a fresh directory, then prints the dump's size (apparent and on disk, per million blocks)
// and the median of 3 runs of each report phase: open (RecordingReader), build without symbols,
// build with symbols (elfutils), and JSON serialization.
//   foom_report_bench [BLOCKS] [DIR]      (DIR default: a fresh $TMPDIR/foom-bench-XXXXXX)
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "heap/session/SessionFile.h"
#include "heap/store/LiveAllocationTree.h"
#include "heap/store/ModuleMap.h"
#include "heap/store/StackStore.h"
#include "reader/RecordingReader.h"
#include "report/FoomReport.h"
#include "report/FoomReportJson.h"

namespace {

using namespace heapgraph;

constexpr uint32_t kStacks = 1000;
constexpr uint32_t kDepth = 16;

double Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

// Return addresses inside this binary's code (so that symbolization has real work to do).
uintptr_t CodeAddress(uint64_t h) {
  static const uintptr_t functions[] = {reinterpret_cast<uintptr_t>(&Now),
                                        reinterpret_cast<uintptr_t>(&Mix),
                                        reinterpret_cast<uintptr_t>(&CodeAddress)};
  return functions[h % 3] + 1 + (h >> 8) % 8;
}

bool WriteDump(int dir_fd, uint32_t blocks) {
  auto tree = std::make_unique<LiveAllocationTree>();
  StackStore stacks;
  ModuleMap modules;
  SessionFile session;
  if (!session.Create(dir_fd, kDepth) || !tree->Create(dir_fd, format::kHeapTreeFile, 64, 22) ||
      !stacks.Create(dir_fd, format::kStackFile, 22, format::kMaxStackDepth) ||
      !modules.Create(dir_fd, format::kModuleFile)) {
    return false;
  }
  const uintptr_t code = CodeAddress(0);
  modules.Learn(&code, 1);
  std::vector<uint32_t> ids(kStacks);
  for (uint32_t s = 0; s < kStacks; ++s) {
    uintptr_t frames[kDepth];
    for (uint32_t d = 0; d < kDepth; ++d) frames[d] = CodeAddress(Mix(s * 131 + d * 7 + 1));
    frames[kDepth - 1] = 0x1000 + s;  // distinct outermost frame: every stack distinct
    ids[s] = stacks.Intern(frames, kDepth);
  }
  for (uint32_t i = 0; i < blocks; ++i) {
    uint64_t h = Mix(i + 1);
    BlockRecord b;
    b.address = 0x100000000 + uint64_t{i} * 4096 + (h % 16) * 16;
    b.size = 16 + (h >> 16) % 256 * 16;
    b.stack = ids[(h >> 32) % kStacks];
    b.seq = i;
    b.function = format::AllocFunction::kMalloc;
    if (!tree->Insert(b)) return false;
  }
  stacks.Unmap();
  return true;
}

double Median(const std::function<void()>& run) {
  std::vector<double> times;
  for (int i = 0; i < 3; ++i) {
    double start = Now();
    run();
    times.push_back(Now() - start);
  }
  std::sort(times.begin(), times.end());
  return times[1];
}

void PrintSizes(const std::string& dir, uint32_t blocks) {
  uint64_t apparent = 0, disk = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    struct stat st;
    if (stat(e.path().c_str(), &st) != 0) continue;
    apparent += static_cast<uint64_t>(st.st_size);
    disk += static_cast<uint64_t>(st.st_blocks) * 512;
    printf("  %-10s apparent %12ju  on disk %12ju\n", e.path().filename().c_str(),
           static_cast<uintmax_t>(st.st_size), static_cast<uintmax_t>(st.st_blocks) * 512);
  }
  double per_million = 1e6 / blocks;
  printf("dump: %u blocks, on disk %.1f MiB (%.1f MiB per million blocks), apparent %.1f GiB\n",
         blocks, disk / 1048576.0, disk * per_million / 1048576.0, apparent / 1073741824.0);
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t blocks = argc > 1 ? static_cast<uint32_t>(strtoul(argv[1], nullptr, 10)) : 1000000;
  std::string dir;
  if (argc > 2) {
    dir = argv[2];
    std::filesystem::create_directories(dir);
  } else {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/foom-bench-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return 1;
    dir = pattern;
  }
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  double write_ms = Now();
  if (fd < 0 || !WriteDump(fd, blocks)) {
    fprintf(stderr, "foom_report_bench: cannot write the dump into %s\n", dir.c_str());
    return 1;
  }
  write_ms = Now() - write_ms;
  printf("wrote %s in %.0f ms\n", dir.c_str(), write_ms);
  PrintSizes(dir, blocks);
  report::ExitRecord exit;
  size_t categories = 0, json_bytes = 0;
  double open_ms = Median([&] { RecordingReader reader(dir); });
  RecordingReader reader(dir);
  double plain_ms = Median(
      [&] { categories = report::BuildFoomReport(reader, exit, nullptr, {}).categories.size(); });
  double symbols_ms = Median([&] {
    report::Symbolizer symbolizer;  // a fresh one: the first report of a process pays for DWARF
    report::BuildFoomReport(reader, exit, &symbolizer, {});
  });
  report::Symbolizer symbolizer;
  report::FoomReport report = report::BuildFoomReport(reader, exit, &symbolizer, {});
  double json_ms = Median([&] { json_bytes = report::FoomReportJsonText(report).size(); });
  printf(
      "report (median of 3): open %.0f ms, build %.0f ms, build with symbols %.0f ms, "
      "JSON %.1f ms (%zu bytes); %zu categories\n",
      open_ms, plain_ms, symbols_ms, json_ms, json_bytes, categories);
  if (argc <= 2) std::filesystem::remove_all(dir);
  return 0;
}
