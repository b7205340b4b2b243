// tools/: the `heapgraph` command.
//   heapgraph dump DIR [--top N] [--json] [--no-symbols]
//   heapgraph record [--preload PATH] [--dir ROOT] [--options STR] -- PROGRAM ARGS...
//   heapgraph run [--json FILE] [--text FILE] [--exitcode N] [...] -- PROGRAM ARGS...
//   heapgraph foom (DIR | --root ROOT) [--json | --record] [--top-categories N] [--top-stacks M]
//                  [--rules FILE] [--no-symbols]
// Exit status: dump 0, or 2 when the recording cannot be read (one line "heapgraph: <why>" on
// stderr); record passes on the program's status (128 + signal when killed) unless the dump
// failed (2); foom 0, or 2 when the dump cannot be read. Usage errors exit 2.
#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "heap/session/DumpRetention.h"
#include "heap/session/ExitEvidenceProbe.h"
#include "reader/RecordingReader.h"
#include "report/ByteSize.h"
#include "report/FoomReport.h"
#include "report/FoomReportJson.h"
#include "report/FoomReportText.h"

#if __has_include("report/Symbolizer.h")
#include "report/Symbolizer.h"
#define HEAPGRAPH_HAVE_SYMBOLIZER 1
#endif

extern char** environ;

namespace heapgraph {
namespace {

constexpr int kExitError = 2;
constexpr int kExitCannotRun = 127;

struct DumpOptions {
  size_t top = 20;  // groups to show; 0 = all
  bool json = false;
  bool symbolize = true;
};

struct RecordOptions {
  std::string preload;
  std::string root;
  std::string options;
  std::vector<std::string> command;
};

// ----------------------------------------------------------------------------------------------
// Symbolization (optional at build time: report/ may not exist yet).

struct SourceLine {
  std::string function;
  std::string file;
  int line = 0;
  bool inlined = false;
};

#ifdef HEAPGRAPH_HAVE_SYMBOLIZER
using SymbolSource = report::Symbolizer;

std::vector<SourceLine> Symbolize(SymbolSource* symbols, const std::string& path, uint64_t vaddr) {
  std::vector<SourceLine> lines;
  try {
    for (const report::SourceFrame& f : symbols->Symbolize(path, vaddr)) {
      lines.push_back({f.function, f.file, f.line, f.inlined});
    }
  } catch (const std::exception&) {
    lines.clear();  // symbolization is best effort; the raw frame is still printed
  }
  return lines;
}
#else
struct SymbolSource {};

std::vector<SourceLine> Symbolize(SymbolSource*, const std::string&, uint64_t) {
  return {};
}
#endif

// One return address of a stack with what is known about it.
struct ResolvedFrame {
  uint64_t address = 0;
  const format::ModuleRecord* module = nullptr;  // null: no module covers the address
  uint64_t offset = 0;                           // address - load_bias
  std::vector<SourceLine> source;                // innermost first; empty if unknown
};

std::vector<ResolvedFrame> ResolveFrames(const RecordingReader& reader, uint32_t stack,
                                         SymbolSource* symbols) {
  std::vector<ResolvedFrame> frames;
  for (uint64_t address : reader.Frames(stack)) {
    ResolvedFrame frame{address, nullptr, 0, {}};
    if (std::optional<ModuleLocation> where = reader.Locate(address)) {
      frame.module = &reader.modules()[where->module];
      frame.offset = where->offset;
      // A return address: look up the call instruction before it.
      if (symbols != nullptr && frame.offset > 0) {
        frame.source = Symbolize(symbols, frame.module->path, frame.offset - 1);
      }
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

// ----------------------------------------------------------------------------------------------
// Formatting.

std::string BuildId(const format::ModuleRecord& m) {
  std::string hex;
  for (uint32_t i = 0; i < m.build_id_len && i < format::kMaxBuildId; ++i) {
    hex += fmt::format("{:02x}", m.build_id[i]);
  }
  return hex;
}

std::string BaseName(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash == nullptr ? path : slash + 1;
}

const char* SessionStateName(uint32_t state) {
  switch (state) {
    case format::kSessionRecording:
      return "recording";
    case format::kSessionExited:
      return "exited";
    default:
      return "unknown state";
  }
}

const char* TreeName(TreeKind tree) {
  return tree == TreeKind::kHeap ? format::kHeapTreeFile : format::kVmTreeFile;
}

size_t UniqueStacks(const std::vector<StackGroup>& groups) {
  std::set<uint32_t> stacks;
  for (const StackGroup& g : groups) stacks.insert(g.stack);
  return stacks.size();
}

std::string SourceText(const SourceLine& s) {
  std::string text = s.function.empty() ? "??" : s.function;
  if (!s.file.empty()) text += fmt::format(" {}:{}", s.file, s.line);
  if (s.inlined) text += " [inlined]";
  return text;
}

// "≈ 1000512 ± 9120 blocks, ≈ 61.07 MiB ± 0.56 MiB": an estimate with one standard error.
std::string EstimateText(const SampleEstimate& e) {
  return fmt::format("≈ {:.0f} ± {:.0f} blocks, ≈ {} ± {}", e.count(), e.count_error(),
                     ByteSize::Readable(static_cast<uint64_t>(std::llround(e.bytes()))),
                     ByteSize::Readable(static_cast<uint64_t>(std::llround(e.bytes_error()))));
}

std::string MeanText(uint64_t mean) {
  return fmt::format("sample={}", ByteSize::Readable(mean));
}

// ----------------------------------------------------------------------------------------------
// Text output.

void PrintSummary(const RecordingReader& r, const std::vector<StackGroup>& groups) {
  std::string line =
      fmt::format("{}: {} live blocks, {}, {} unique stacks, {} torn, {} dropped, {} modules",
                  r.directory(), r.blocks().size(), ByteSize::Readable(r.live_bytes()),
                  UniqueStacks(groups), r.torn().size(), r.dropped(), r.modules().size());
  if (r.stack_stats().dropped != 0) {
    line += fmt::format(", {} stacks not stored", r.stack_stats().dropped);
  }
  if (const std::optional<SessionInfo>& s = r.session()) {
    line += fmt::format(" (pid {}, {}, {})", s->pid, s->executable, SessionStateName(s->state));
  }
  fmt::print("{}\n", line);
  if (r.sample_mean() != 0) {
    fmt::print(
        "sampled recording ({}): the blocks above are a sample; estimated live {} "
        "(± one standard error)\n",
        MeanText(r.sample_mean()), EstimateText(r.EstimateLive()));
  }
}

void PrintFrame(size_t index, const ResolvedFrame& f) {
  std::string line = fmt::format("    #{} {:#x}", index, f.address);
  if (f.module == nullptr) {
    line += " ??";
  } else {
    line += fmt::format(" {}+{:#x}", BaseName(f.module->path), f.offset);
    std::string id = BuildId(*f.module);
    if (!id.empty()) line += fmt::format(" (build-id {})", id);
  }
  if (!f.source.empty()) line += " " + SourceText(f.source.front());
  fmt::print("{}\n", line);
  for (size_t i = 1; i < f.source.size(); ++i) {
    fmt::print("        in {}\n", SourceText(f.source[i]));
  }
}

void PrintGroup(size_t rank, const StackGroup& g, const std::vector<ResolvedFrame>& frames) {
  if (g.estimate.mean() != 0) {
    fmt::print("#{} {} sampled block{} ({}), {}, {} (stack {})\n", rank, g.count,
               g.count == 1 ? "" : "s", ByteSize::Readable(g.bytes), EstimateText(g.estimate),
               g.category, g.stack);
  } else {
    fmt::print("#{} {} block{}, {}, {} (stack {})\n", rank, g.count, g.count == 1 ? "" : "s",
               ByteSize::Readable(g.bytes), g.category, g.stack);
  }
  if (g.stack == 0) fmt::print("    (no stack captured)\n");
  for (size_t i = 0; i < frames.size(); ++i) PrintFrame(i, frames[i]);
}

void PrintText(const RecordingReader& r, const std::vector<StackGroup>& groups, size_t shown,
               SymbolSource* symbols) {
  PrintSummary(r, groups);
  for (const TornNode& t : r.torn()) {
    if (t.index == format::kRehashing) {
      fmt::print("torn: {} shard {} (writer died rehashing it; {} records not read)\n",
                 TreeName(t.tree), t.shard, t.records);
      continue;
    }
    fmt::print("torn: {} shard {} node {} ({})\n", TreeName(t.tree), t.shard, t.index,
               t.marked ? "writer died while changing it" : "inconsistent, skipped");
  }
  for (size_t i = 0; i < shown; ++i) {
    PrintGroup(i + 1, groups[i], ResolveFrames(r, groups[i].stack, symbols));
  }
  if (shown < groups.size()) {
    fmt::print("... {} more groups (--top 0 shows all)\n", groups.size() - shown);
  }
}

// ----------------------------------------------------------------------------------------------
// JSON output.

nlohmann::json FrameJson(const ResolvedFrame& f) {
  nlohmann::json j = {{"address", f.address}, {"module", nullptr}};
  if (f.module != nullptr) {
    j["module"] = f.module->path;
    j["offset"] = f.offset;
    j["build_id"] = BuildId(*f.module);
  }
  j["source"] = nlohmann::json::array();
  for (const SourceLine& s : f.source) {
    j["source"].push_back(
        {{"function", s.function}, {"file", s.file}, {"line", s.line}, {"inlined", s.inlined}});
  }
  return j;
}

nlohmann::json EstimateJson(const SampleEstimate& e) {
  return {{"count", e.count()},
          {"count_error", e.count_error()},
          {"bytes", e.bytes()},
          {"bytes_error", e.bytes_error()}};
}

nlohmann::json SummaryJson(const RecordingReader& r, const std::vector<StackGroup>& groups) {
  nlohmann::json j = {{"live_blocks", r.blocks().size()},
                      {"live_bytes", r.live_bytes()},
                      {"unique_stacks", UniqueStacks(groups)},
                      {"torn", r.torn().size()},
                      {"dropped", r.dropped()},
                      {"stacks_dropped", r.stack_stats().dropped},
                      {"modules", r.modules().size()},
                      {"sample_mean", r.sample_mean()}};
  if (r.sample_mean() != 0) j["estimate"] = EstimateJson(r.EstimateLive());
  return j;
}

nlohmann::json SessionJson(const RecordingReader& r) {
  const std::optional<SessionInfo>& s = r.session();
  if (!s) return nullptr;
  return {{"pid", s->pid},
          {"executable", s->executable},
          {"start_time_ns", s->start_time_ns},
          {"state", SessionStateName(s->state)},
          {"sequence", s->sequence}};
}

nlohmann::json TornJson(const RecordingReader& r) {
  nlohmann::json torn = nlohmann::json::array();
  for (const TornNode& t : r.torn()) {
    torn.push_back({{"tree", TreeName(t.tree)},
                    {"shard", t.shard},
                    {"index", t.index},
                    {"marked", t.marked},
                    {"records", t.records}});
  }
  return torn;
}

void PrintJson(const RecordingReader& r, const std::vector<StackGroup>& groups, size_t shown,
               SymbolSource* symbols) {
  nlohmann::json doc = {{"directory", r.directory()}, {"summary", SummaryJson(r, groups)},
                        {"session", SessionJson(r)},  {"warnings", r.warnings()},
                        {"torn", TornJson(r)},        {"groups", nlohmann::json::array()}};
  for (size_t i = 0; i < shown; ++i) {
    const StackGroup& g = groups[i];
    nlohmann::json frames = nlohmann::json::array();
    for (const ResolvedFrame& f : ResolveFrames(r, g.stack, symbols)) {
      frames.push_back(FrameJson(f));
    }
    doc["groups"].push_back({{"rank", i + 1},
                             {"stack", g.stack},
                             {"count", g.count},
                             {"bytes", g.bytes},
                             {"category", g.category},
                             {"frames", std::move(frames)}});
    if (g.estimate.mean() != 0) doc["groups"].back()["estimate"] = EstimateJson(g.estimate);
  }
  // Strings from the dump (module paths, the executable, type names) need not be UTF-8: bad bytes
  // become U+FFFD, as in `heapgraph foom --json`, instead of failing the whole document.
  fmt::print("{}\n", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

// ----------------------------------------------------------------------------------------------
// dump

void PrintError(const std::string& message) {
  fmt::print(stderr, "heapgraph: {}\n", message);
}

int Dump(const std::string& dir, const DumpOptions& options) {
  try {
    RecordingReader reader(dir);
    for (const std::string& w : reader.warnings()) PrintError("warning: " + w);
    std::vector<StackGroup> groups = reader.GroupByStack();
    size_t shown = options.top == 0 ? groups.size() : std::min(options.top, groups.size());
    std::optional<SymbolSource> symbols;
    if (options.symbolize) symbols.emplace();
    SymbolSource* source = symbols ? &*symbols : nullptr;
    if (options.json) {
      PrintJson(reader, groups, shown, source);
    } else {
      PrintText(reader, groups, shown, source);
    }
    fflush(stdout);
    return 0;
  } catch (const RecordingError& e) {
    fflush(stdout);
    PrintError(e.what());
    return kExitError;
  }
}

// ----------------------------------------------------------------------------------------------
// record

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

std::string MakeRoot(const std::string& requested) {
  std::string root = requested;
  if (root.empty()) {
    const char* tmp = getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/heapgraph-record-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error(fmt::format("mkdtemp {}: {}", pattern, strerror(errno)));
    }
    root = pattern;
  }
  root = std::filesystem::absolute(root).lexically_normal().string();
  // HEAPGRAPH_OPTIONS separates entries with ',' or ':'.
  if (root.find_first_of(",:") != std::string::npos) {
    throw std::runtime_error(fmt::format("--dir {}: must not contain ',' or ':'", root));
  }
  return root;
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

// Starts the program with SIGINT/SIGQUIT at their defaults (this process ignores them while it
// waits, so ^C reaches only the program and the dump still happens). Returns the pid or -errno.
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

// The recorder names the directory "<pid>-<start ticks>". Should an old run with a reused pid
// have left one in the same root, the latest start wins. nullopt when there is none.
std::optional<std::string> FindRecording(const std::string& root, pid_t pid) {
  std::string prefix = fmt::format("{}-", pid);
  std::optional<std::string> best;
  unsigned long long best_ticks = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !entry.is_directory()) continue;
    unsigned long long ticks = strtoull(name.c_str() + prefix.size(), nullptr, 10);
    if (!best || ticks >= best_ticks) {
      best = entry.path().string();
      best_ticks = ticks;
    }
  }
  if (error) throw std::runtime_error(fmt::format("{}: {}", root, error.message()));
  return best;
}

// Runs the program and returns its exit status (kExitCannotRun if it could not start). SIGINT and
// SIGQUIT are ignored here meanwhile, so ^C stops only the program and the dump still happens.
int RunProgram(const RecordOptions& record, const std::string& preload, const std::string& root,
               pid_t* pid) {
  struct sigaction ignore = {}, old_int = {}, old_quit = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  *pid = Spawn(record.command, ChildEnvironment(preload, root, record.options));
  int code = *pid < 0 ? kExitCannotRun : WaitExitCode(*pid);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (*pid < 0) PrintError(fmt::format("cannot run {}: {}", record.command[0], strerror(-*pid)));
  return code;
}

int Record(const RecordOptions& record, const DumpOptions& dump) {
  std::string preload = ResolvePreload(record.preload);
  std::string root = MakeRoot(record.root);
  pid_t pid = -1;
  int code = RunProgram(record, preload, root, &pid);
  std::optional<std::string> dir;
  if (pid > 0) dir = FindRecording(root, pid);
  if (!dir) {
    if (record.root.empty()) rmdir(root.c_str());  // the temporary root we made, still empty
    if (pid < 0) return code;
    PrintError(fmt::format(
        "{}: no recording directory for pid {} (was the preload library loaded?)", root, pid));
    return kExitError;
  }
  return Dump(*dir, dump) == 0 ? code : kExitError;
}

// ----------------------------------------------------------------------------------------------
// run: the program under the recorder with a leak check at exit (after static destructors). The
// check runs inside the program (libheapgraph_scan.so, loaded by libheapgraph.so), which exits
// with --exitcode when it finds leaks; otherwise the program's own status passes through.

struct RunOptions {
  RecordOptions record;
  std::string json;
  std::string text = "-";
  int exitcode = 23;
  bool start_only = false;
  std::string objc_ivars;  // HEAPGRAPH_OBJC_IVARS: ownership rules for Objective-C ivars
};

std::string OptionPath(const std::string& path, const char* flag) {
  if (path.empty() || path == "-") return path;
  std::string absolute = std::filesystem::absolute(path).lexically_normal().string();
  if (absolute.find_first_of(",:") != std::string::npos) {
    throw std::runtime_error(fmt::format("{} {}: must not contain ',' or ':'", flag, absolute));
  }
  return absolute;
}

int Run(RunOptions run) {
  std::string preload = ResolvePreload(run.record.preload);
  std::string root = MakeRoot(run.record.root);
  std::string text = OptionPath(run.text, "--text");
  std::string options =
      fmt::format("leak_check=1,leak_json={},leak_text={},exitcode={},interior={}",
                  OptionPath(run.json, "--json"), text == "-" ? "stderr" : text, run.exitcode,
                  run.start_only ? 0 : 1);
  if (!run.record.options.empty()) options += "," + run.record.options;
  run.record.options = options;
  if (!run.objc_ivars.empty()) {
    std::string rules = std::filesystem::absolute(run.objc_ivars).lexically_normal().string();
    setenv("HEAPGRAPH_OBJC_IVARS", rules.c_str(), 1);  // the program inherits it
  }
  pid_t pid = -1;
  int code = RunProgram(run.record, preload, root, &pid);
  if (run.record.root.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(root, ignored);  // the temporary root we made
  }
  return code;
}

// ----------------------------------------------------------------------------------------------
// foom: classify how one recorded run ended and report what its live heap held.

struct FoomOptions {
  std::string dir;
  std::string root;
  bool json = false;
  bool record = false;
  bool symbolize = true;
  size_t top_categories = 10;
  size_t top_stacks = 5;
  std::string rules;
};

// The most recently started run in `root` whose process is no longer running (else the most
// recent run at all).
std::string LatestRun(const std::string& root) {
  std::string best, best_any;
  uint64_t best_time = 0, best_any_time = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    if (!entry.is_directory()) continue;
    int fd = open(entry.path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    auto session = std::make_unique<format::SessionHeader>();
    bool has_record = false;
    bool ok = DumpRetention::ReadSession(fd, session.get(), &has_record);
    close(fd);
    if (!ok) continue;
    bool alive = ExitEvidenceProbe::Gather(*session, has_record).alive;
    if (best_any.empty() || session->start_time_ns > best_any_time) {
      best_any = entry.path().string();
      best_any_time = session->start_time_ns;
    }
    if (!alive && (best.empty() || session->start_time_ns > best_time)) {
      best = entry.path().string();
      best_time = session->start_time_ns;
    }
  }
  if (error) throw std::runtime_error(fmt::format("{}: {}", root, error.message()));
  if (best.empty()) best = best_any;
  if (best.empty()) throw std::runtime_error(fmt::format("{}: no recording directories", root));
  return best;
}

int Foom(const FoomOptions& options) {
  report::FoomReportOptions report_options;
  report_options.top_categories = options.top_categories;
  report_options.top_stacks = options.top_stacks;
  if (!options.rules.empty()) report_options.rules = report::SuspectRules::Load(options.rules);
  std::string dir = options.dir.empty() ? LatestRun(options.root) : options.dir;
  try {
    RecordingReader reader(dir);
    report::ExitRecord exit = report::ExitRecord::For(reader);
    std::optional<report::Symbolizer> symbols;
    if (options.symbolize) symbols.emplace();
    report::FoomReport report =
        report::BuildFoomReport(reader, exit, symbols ? &*symbols : nullptr, report_options);
    if (options.record) {
      fmt::print("{}\n", report::FoomReportRecordLine(report));
    } else if (options.json) {
      fmt::print("{}\n", report::FoomReportJsonText(report));
    } else {
      fmt::print("{}", report::FoomReportToText(report));
    }
    fflush(stdout);
    return 0;
  } catch (const RecordingError& e) {
    fflush(stdout);
    PrintError(e.what());
    return kExitError;
  }
}

// ----------------------------------------------------------------------------------------------
// Command line.

void AddDumpFlags(CLI::App* command, DumpOptions* options) {
  command->add_option("--top", options->top, "Groups to print, largest first (0 = all)")
      ->capture_default_str();
  command->add_flag("--json", options->json, "Print a JSON document instead of text");
  command->add_flag("--no-symbols{false}", options->symbolize,
                    "Do not look up functions and source lines");
}

int Main(int argc, char** argv) {
  CLI::App app{"heapgraph: leak detector and allocation recorder"};
  app.require_subcommand(1);
  DumpOptions dump_options;
  std::string dir;
  CLI::App* dump = app.add_subcommand("dump", "Print the live blocks of a recording directory");
  dump->add_option("DIR", dir, "Recording directory (<root>/<pid>-<start>)")->required();
  AddDumpFlags(dump, &dump_options);

  RecordOptions record_options;
  CLI::App* record = app.add_subcommand("record", "Run PROGRAM under the recorder, then dump");
  record->add_option("--preload", record_options.preload, "Path of libheapgraph.so");
  record->add_option("--dir", record_options.root, "Root directory for recordings");
  record->add_option("--options", record_options.options, "More HEAPGRAPH_OPTIONS, a,b=c");
  AddDumpFlags(record, &dump_options);
  record->add_option("PROGRAM", record_options.command, "-- PROGRAM ARGS...")->required();

  RunOptions run_options;
  CLI::App* run =
      app.add_subcommand("run", "Run PROGRAM under the recorder and check it for leaks at exit");
  run->add_option("--json", run_options.json, "Write the JSON leak report to FILE");
  run->add_option("--text", run_options.text, "Write the text report to FILE ('-' = stderr)")
      ->capture_default_str();
  run->add_option("--exitcode", run_options.exitcode, "Exit status when leaks are found")
      ->check(CLI::Range(0, 255))
      ->capture_default_str();
  run->add_option("--objc-ivars", run_options.objc_ivars,
                  "Objective-C ivar ownership rules, lines `Class ivar strong|weak [label]`");
  run->add_flag("--start-only", run_options.start_only,
                "Only pointers to a block's start keep it alive (default: interior pointers too)");
  run->add_option("--preload", run_options.record.preload, "Path of libheapgraph.so");
  run->add_option("--dir", run_options.record.root, "Root directory for recordings (kept)");
  run->add_option("--options", run_options.record.options, "More HEAPGRAPH_OPTIONS, a,b=c");
  run->add_option("PROGRAM", run_options.record.command, "-- PROGRAM ARGS...")->required();
  FoomOptions foom_options;
  CLI::App* foom = app.add_subcommand(
      "foom", "Classify how a recorded run ended and report its live heap (FOOM report)");
  foom->add_option("DIR", foom_options.dir, "Recording directory (<root>/<pid>-<start>)");
  foom->add_option("--root", foom_options.root, "Report the latest finished run in ROOT");
  foom->add_flag("--json", foom_options.json, "Print the JSON document");
  foom->add_flag("--record", foom_options.record, "Print the one-line JSON record (for SQL)");
  foom->add_option("--top-categories", foom_options.top_categories,
                   "Categories whose top stacks are reported (N)")
      ->capture_default_str();
  foom->add_option("--top-stacks", foom_options.top_stacks, "Stacks per such category (M)")
      ->capture_default_str();
  foom->add_option("--rules", foom_options.rules, "Suspect-category rules file");
  foom->add_flag("--no-symbols{false}", foom_options.symbolize,
                 "Do not look up functions and source lines");
  try {
    app.parse(argc, argv);
    if (foom->parsed() && foom_options.dir.empty() == foom_options.root.empty()) {
      throw CLI::ValidationError("foom", "give exactly one of DIR and --root");
    }
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitError;
  }
  if (dump->parsed()) return Dump(dir, dump_options);
  if (run->parsed()) return Run(run_options);
  if (foom->parsed()) return Foom(foom_options);
  return Record(record_options, dump_options);
}

}  // namespace
}  // namespace heapgraph

int main(int argc, char** argv) {
  try {
    return heapgraph::Main(argc, argv);
  } catch (const std::exception& e) {
    heapgraph::PrintError(e.what());
    return heapgraph::kExitError;
  }
}
