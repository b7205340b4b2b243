// tests/scanner: end-to-end accuracy of the leak scanner. Each case runs
//   heapgraph run --json FILE --text FILE -- tests/programs/<program> <args>
// and checks the JSON report against a table: which allocation sites leak (direct / indirect,
// block count and bytes, optionally the retained bytes of the direct record), which cycles exist,
// and which sites must appear in no leak record at all. Programs: tests/programs/leak_direct.cc,
// leak_chains.cc, leak_traps.cc (each describes its cases).
//
// Attribution: a leak record belongs to the innermost frame of its stack whose function is a site
// the case names (direct, indirect or must_not_report); frames are matched on identifier
// boundaries, so "LeakInDeadFrame" does not match "LeakInDeadFrameThread". A record with no such
// frame is an unexpected leak and fails the case (the programs leak nothing else: Valgrind agrees,
// see LeakAccuracyValgrind). A must_not_report site fails the case when it appears in ANY frame of
// any record. Record bytes are the record's "size" (all its blocks); retained bytes its
// "retained_bytes". Cycles are matched by member size (every structure in leak_chains has its own
// block size), and the report must hold no other leaked cycle.
//
// Until `heapgraph run` exists (`heapgraph run --help` fails) every case is skipped.
//
// LeakAccuracyValgrind runs the cases marked `valgrind` under memcheck and checks the same table
// against its definitely / indirectly lost records (which validates the table itself), then, when
// `heapgraph run` exists, that heapgraph's summary direct_bytes / indirect_bytes equal Valgrind's
// definitely / indirectly lost totals. Skipped when valgrind is not installed or
// HEAPGRAPH_SKIP_VALGRIND is set to a non-empty value other than 0. It is built from this file as
// its own executable (leak_accuracy_valgrind_test, HEAPGRAPH_LEAK_ACCURACY_VALGRIND defined),
// labelled "valgrind" for ctest (-LE valgrind leaves it out).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace heapgraph {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kLeakExit = 23;      // `heapgraph run` when leaks were found
constexpr int kValgrindExit = 42;  // --error-exitcode for definite leaks
constexpr int kTimedOut = -1;
constexpr auto kRunTimeout = std::chrono::seconds(60);

// ------------------------------------------------------------------------------------------------
// The table.

struct Expect {
  const char* site;       // allocation site (function name in the stack)
  uint64_t count;         // blocks
  uint64_t bytes;         // sum of their sizes
  int64_t retained = -1;  // direct records only: sum of retained_bytes; -1 = not checked
};

struct CycleExpect {
  uint64_t member_size;  // every member has this size
  uint64_t members;
};

struct Case {
  const char* name;
  const char* program;
  std::vector<std::string> args = {};
  std::vector<Expect> direct = {};
  std::vector<Expect> indirect = {};
  std::vector<CycleExpect> cycles = {};
  std::vector<const char*> must_not_report = {};
  int exit_status = kLeakExit;  // of `heapgraph run`
  bool valgrind = false;        // also a LeakAccuracyValgrind case
  const char* hint = nullptr;   // printed when the case fails
};

std::ostream& operator<<(std::ostream& out, const Case& c) {
  return out << c.name;
}

const Expect kControl{"LeakControl", 1, 272};

// Everything leak_traps keeps; all / clean run every trap but the register ones.
const std::vector<const char*> kAllTraps = {
    "KeptInGlobal",        "KeptInBss",
    "KeptInStaticLocal",   "KeptInMainTls",
    "KeptInThreadTls",     "KeptInDlopenTls",
    "OpenTlsLib",          "KeptInPthreadKey",
    "KeptDeepOnStack",     "KeptByInteriorPointer",
    "KeptInMmap",          "MapRootRegion",
    "KeptInStlContainers", "KeptViaArrayCookie",
    "KeptViaSecondBase",   "StartThread",
};

std::vector<Case> Cases() {
  std::vector<Case> cases = {
      // --- leak_direct: one block per allocation function ------------------------------------
      {"direct_malloc", "leak_direct", {"malloc"}, {{"LeakMalloc", 1, 64}}},
      {"direct_calloc", "leak_direct", {"calloc"}, {{"LeakCalloc", 1, 96}}},
      {"direct_realloc", "leak_direct", {"realloc"}, {{"LeakRealloc", 1, 4096}}},
      {"direct_reallocarray", "leak_direct", {"reallocarray"}, {{"LeakReallocarray", 1, 320}}},
      {"direct_memalign", "leak_direct", {"memalign"}, {{"LeakMemalign", 1, 192}}},
      {"direct_posix_memalign", "leak_direct", {"posix_memalign"}, {{"LeakPosixMemalign", 1, 224}}},
      {"direct_aligned_alloc", "leak_direct", {"aligned_alloc"}, {{"LeakAlignedAlloc", 1, 512}}},
      {"direct_valloc", "leak_direct", {"valloc"}, {{"LeakValloc", 1, 272}}},
      {"direct_pvalloc", "leak_direct", {"pvalloc"}, {{"LeakPvalloc", 1, 8192}}},
      {"direct_new", "leak_direct", {"new"}, {{"LeakNew", 1, 112}}},
      {"direct_new_array", "leak_direct", {"new_array"}, {{"LeakNewArray", 1, 144}}},
      {"direct_all",
       "leak_direct",
       {"all"},
       {{"LeakMalloc", 1, 64},
        {"LeakCalloc", 1, 96},
        {"LeakRealloc", 1, 4096},
        {"LeakReallocarray", 1, 320},
        {"LeakMemalign", 1, 192},
        {"LeakPosixMemalign", 1, 224},
        {"LeakAlignedAlloc", 1, 512},
        {"LeakValloc", 1, 272},
        {"LeakPvalloc", 1, 8192},
        {"LeakNew", 1, 112},
        {"LeakNewArray", 1, 144}}},
      // Valgrind aborts on pvalloc.
      {"direct_all_but_pvalloc",
       "leak_direct",
       {"all_but_pvalloc"},
       {{"LeakMalloc", 1, 64},
        {"LeakCalloc", 1, 96},
        {"LeakRealloc", 1, 4096},
        {"LeakReallocarray", 1, 320},
        {"LeakMemalign", 1, 192},
        {"LeakPosixMemalign", 1, 224},
        {"LeakAlignedAlloc", 1, 512},
        {"LeakValloc", 1, 272},
        {"LeakNew", 1, 112},
        {"LeakNewArray", 1, 144}},
       {},
       {},
       {},
       kLeakExit,
       true},
      // --- leak_direct: threads and dead frames ---------------------------------------------
      // SpawnThreads' own allocations (each thread's DTV, calloc'd by pthread_create and kept by
      // glibc with the cached stack) are not leaks.
      {"thread_exited",
       "leak_direct",
       {"thread"},
       {{"LeakInThread", 4, 832}},
       {},
       {},
       {"SpawnThreads"},
       kLeakExit,
       true},
      // The pointers stay in the exited threads' frames, in stacks glibc keeps mapped for reuse:
      // dead memory, not a root.
      {"thread_exited_stale_stack",
       "leak_direct",
       {"thread_stale"},
       {{"LeakInThreadStale", 4, 896}},
       {},
       {},
       {"SpawnThreads"},
       kLeakExit,
       true,
       "the pointers are only in the stacks of exited threads, which glibc keeps mapped in its "
       "stack cache: such a mapping (MAP_STACK, no live thread's SP in it) is dead memory, not a "
       "root; only its struct pthread / static TLS part (which holds the DTV) still matters"},
      // The only pointer is 256 KiB below main's SP when the scan runs at exit.
      {"dead_frame_below_sp_main",
       "leak_direct",
       {"dead_frame_main"},
       {{"LeakInDeadFrame", 1, 256}},
       {},
       {},
       {},
       kLeakExit,
       true},
      // The leak's address is also in the never-written bytes of a kept block (glibc reused a freed
      // block that pointed to the leak's chunk before): stale, cleared by the recorder (`scrub`).
      // Not a Valgrind case: Valgrind's allocator does not hand freed chunks out again at once.
      {"direct_behind_stale_bytes",
       "leak_direct",
       {"stale_bytes"},
       {{"LeakBehindStaleBytes", 1, 64}},
       {},
       {},
       {"KeptBlank", "ReleaseHolderAndTarget"},
       kLeakExit,
       false,
       "the leak's only 'pointer' is a stale word in bytes of KeptBlank's block that the program "
       "never wrote: the recorder must clear a new block's bytes (heap/runtime/FreshBytes)"},
      // The only pointer is 32 KiB below the SP of a thread blocked in read(2) at exit.
      {"dead_frame_below_sp_thread",
       "leak_direct",
       {"dead_frame_thread"},
       {{"LeakInDeadFrameThread", 1, 240}},
       {},
       {},
       {"StartBlockedThread"},
       kLeakExit,
       true},

      // --- leak_chains -------------------------------------------------------------------------
      {"chain_list",
       "leak_chains",
       {"list"},
       {{"LeakListHead", 1, 48, 368}},
       {{"LeakListNode", 10, 320}}},
      {"chain_tree",
       "leak_chains",
       {"tree"},
       {{"LeakTreeRoot", 1, 32, 480}},
       {{"LeakTreeNode", 14, 448}}},
      // A block pointing into itself is no cycle (an empty std::map's header, a list sentinel).
      {"cycle_self", "leak_chains", {"self_cycle"}, {{"LeakSelfCycle", 1, 80, 80}}},
      {"cycle_2",
       "leak_chains",
       {"cycle2"},
       {{"LeakCycle2", 1, 96, 192}},
       {{"LeakCycle2", 1, 96}},
       {{96, 2}}},
      {"cycle_3",
       "leak_chains",
       {"cycle3"},
       {{"LeakCycle3", 1, 112, 336}},
       {{"LeakCycle3", 2, 224}},
       {{112, 3}}},
      // 2-cycle -> 3-node chain: a cycle member is the direct block.
      {"cycle_2_tail_out",
       "leak_chains",
       {"cycle_tail_out"},
       {{"LeakCycleTailOut", 1, 144, 768}},
       {{"LeakCycleTailOut", 1, 144}, {"LeakTailOutNode", 3, 480}},
       {{144, 2}}},
      // 3-node chain -> 2-cycle: the chain head is the only direct block.
      {"cycle_2_tail_in",
       "leak_chains",
       {"cycle_tail_in"},
       {{"LeakTailInNode", 1, 176, 912}},
       {{"LeakTailInNode", 2, 352}, {"LeakCycleTailIn", 2, 384}},
       {{192, 2}}},
      {"chains_all",
       "leak_chains",
       {"all"},
       {{"LeakListHead", 1, 48, 368},
        {"LeakTreeRoot", 1, 32, 480},
        {"LeakSelfCycle", 1, 80, 80},
        {"LeakCycle2", 1, 96, 192},
        {"LeakCycle3", 1, 112, 336},
        {"LeakCycleTailOut", 1, 144, 768},
        {"LeakTailInNode", 1, 176, 912}},
       {{"LeakListNode", 10, 320},
        {"LeakTreeNode", 14, 448},
        {"LeakCycle2", 1, 96},
        {"LeakCycle3", 2, 224},
        {"LeakCycleTailOut", 1, 144},
        {"LeakTailOutNode", 3, 480},
        {"LeakTailInNode", 2, 352},
        {"LeakCycleTailIn", 2, 384}},
       {{96, 2}, {112, 3}, {144, 2}, {192, 2}},
       {},
       kLeakExit,
       true},

      // --- leak_traps: each trap plus the control leak -----------------------------------------
      {"trap_global", "leak_traps", {"global"}, {kControl}, {}, {}, {"KeptInGlobal"}},
      {"trap_bss", "leak_traps", {"bss"}, {kControl}, {}, {}, {"KeptInBss"}},
      {"trap_static_local",
       "leak_traps",
       {"static_local"},
       {kControl},
       {},
       {},
       {"KeptInStaticLocal"}},
      {"trap_tls_main_thread", "leak_traps", {"tls_main"}, {kControl}, {}, {}, {"KeptInMainTls"}},
      {"trap_tls_blocked_thread",
       "leak_traps",
       {"tls_thread"},
       {kControl},
       {},
       {},
       {"KeptInThreadTls", "StartThread"}},
      {"trap_tls_dlopen",
       "leak_traps",
       {"dlopen_tls"},
       {kControl},
       {},
       {},
       {"KeptInDlopenTls", "OpenTlsLib"}},
      {"trap_pthread_key_over_32",
       "leak_traps",
       {"pthread_key"},
       {kControl},
       {},
       {},
       {"KeptInPthreadKey"}},
      {"trap_deep_stack_of_blocked_thread",
       "leak_traps",
       {"deep_stack"},
       {kControl},
       {},
       {},
       {"KeptDeepOnStack", "StartThread"}},
      {"trap_interior_pointer",
       "leak_traps",
       {"interior"},
       {kControl},
       {},
       {},
       {"KeptByInteriorPointer"}},
      // Only a pointer one past the block's end, which lies in the next block's chunk header:
      // it keeps its own block alive and is never attributed to the next one, a real leak.
      {"trap_end_pointer",
       "leak_traps",
       {"end_pointer"},
       {kControl, {"LeakAfterEndPointer", 1, 1000}},
       {},
       {},
       {"KeptByEndPointer"},
       kLeakExit,
       false,
       "a pointer one past a block's end keeps that block alive (docs/leak-scan.md, pointer "
       "policy), and only that block"},
      {"trap_anonymous_mapping",
       "leak_traps",
       {"mmap"},
       {kControl},
       {},
       {},
       {"KeptInMmap", "MapRootRegion"}},
      {"trap_stl_containers", "leak_traps", {"stl"}, {kControl}, {}, {}, {"KeptInStlContainers"}},
      {"trap_array_cookie",
       "leak_traps",
       {"array_cookie"},
       {kControl},
       {},
       {},
       {"KeptViaArrayCookie"}},
      {"trap_second_base_pointer",
       "leak_traps",
       {"second_base"},
       {kControl},
       {},
       {},
       {"KeptViaSecondBase"}},
      {"trap_register_r12_of_spinning_thread",
       "leak_traps",
       {"register_r12"},
       {kControl},
       {},
       {},
       {"KeptInRegisterR12", "StartSpinner"}},
      // Valgrind does not scan vector registers (it reports this block as definitely lost, which
      // shows the pointer really is nowhere else): not a Valgrind case.
      {"trap_register_xmm7_of_spinning_thread",
       "leak_traps",
       {"register_xmm7"},
       {kControl},
       {},
       {},
       {"KeptInRegisterXmm7", "StartSpinner"}},
      {"traps_all", "leak_traps", {"all"}, {kControl}, {}, {}, kAllTraps, kLeakExit, true},
      // No leak at all: `heapgraph run` passes on the program's own status.
      {"traps_clean_exit_0", "leak_traps", {"clean"}, {}, {}, {}, kAllTraps, 0, true},
      {"traps_clean_exit_3", "leak_traps", {"clean", "3"}, {}, {}, {}, kAllTraps, 3},
  };
  return cases;
}

// ------------------------------------------------------------------------------------------------
// Running children.

struct RunResult {
  int status = kTimedOut;  // exit status, 128 + signal, or kTimedOut
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Runs argv in its own process group with stdin from /dev/null, stdout and stderr to files in
// `dir`, and TMPDIR=dir; kills the group after kRunTimeout.
RunResult RunChild(const std::vector<std::string>& argv, const fs::path& dir,
                   const std::string& tag) {
  fs::path out_path = dir / (tag + ".stdout");
  fs::path err_path = dir / (tag + ".stderr");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    setpgid(0, 0);
    int in = open("/dev/null", O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    setenv("TMPDIR", dir.c_str(), 1);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  RunResult result;
  auto deadline = std::chrono::steady_clock::now() + kRunTimeout;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (r < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.status = kTimedOut;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

std::string FirstLine(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// A fresh 0700 directory, removed at destruction unless Keep() was called.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                          "/heapgraph-leak-accuracy-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) != nullptr) path_ = buffer.data();
  }
  ~TempDir() {
    if (!keep_ && !path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  const fs::path& path() const { return path_; }
  void Keep() { keep_ = true; }

 private:
  fs::path path_;
  bool keep_ = false;
};

std::string ProgramPath(const char* program) {
  return std::string(HEAPGRAPH_PROGRAM_DIR) + "/" + program;
}

// Whether `heapgraph run` exists; the reason when not. Probed once.
const std::optional<std::string>& CliUnavailable() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    if (access(HEAPGRAPH_CLI, X_OK) != 0) {
      return std::string("the heapgraph command is not built (") + HEAPGRAPH_CLI + ")";
    }
    TempDir dir;
    RunResult r = RunChild({HEAPGRAPH_CLI, "run", "--help"}, dir.path(), "probe");
    if (r.status == 0) return std::nullopt;
    return "`heapgraph run` is not available yet (`heapgraph run --help` exited " +
           std::to_string(r.status) + ": " + FirstLine(r.err.empty() ? r.out : r.err) +
           "); the leak accuracy cases run once the scanner lands";
  }();
  return reason;
}

// ------------------------------------------------------------------------------------------------
// Attribution.

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// `function` names `site`: "LeakMalloc", "LeakMalloc()", "ns::LeakMalloc(int)", not
// "LeakMallocX" nor "MyLeakMalloc".
bool FunctionIs(const std::string& function, const std::string& site) {
  for (size_t at = function.find(site); at != std::string::npos; at = function.find(site, at + 1)) {
    bool left = at == 0 || !IsIdentifierChar(function[at - 1]);
    size_t end = at + site.size();
    bool right = end == function.size() || !IsIdentifierChar(function[end]);
    if (left && right) return true;
  }
  return false;
}

std::vector<std::string> SitesOf(const Case& c) {
  std::vector<std::string> sites;
  for (const Expect& e : c.direct) sites.push_back(e.site);
  for (const Expect& e : c.indirect) sites.push_back(e.site);
  for (const char* s : c.must_not_report) sites.push_back(s);
  return sites;
}

// The innermost frame naming one of `sites`, or "".
std::string Attribute(const std::vector<std::string>& functions,
                      const std::vector<std::string>& sites) {
  for (const std::string& f : functions) {
    for (const std::string& s : sites) {
      if (FunctionIs(f, s)) return s;
    }
  }
  return "";
}

// Sums over the records of one kind attributed to one site.
struct Tally {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t retained = 0;
  uint64_t records = 0;
};

// One leak record, as both tools describe it.
struct Record {
  std::string kind;  // "direct" or "indirect"
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t retained = 0;
  std::vector<std::string> functions;  // innermost first
  std::string Describe() const {
    std::string s =
        kind + " " + std::to_string(count) + " block(s) " + std::to_string(bytes) + " bytes at";
    size_t shown = 0;
    for (const std::string& f : functions) {
      if (++shown > 8) {
        s += " < ...";
        break;
      }
      s += (shown == 1 ? " " : " < ") + (f.empty() ? std::string("?") : f);
    }
    return s;
  }
};

// Checks `records` against the case; `tool` names the source in messages.
void CheckRecords(const Case& c, const std::vector<Record>& records, const std::string& tool) {
  std::vector<std::string> sites = SitesOf(c);
  std::map<std::pair<std::string, std::string>, Tally> tallies;  // (kind, site)
  for (const Record& r : records) {
    for (const char* forbidden : c.must_not_report) {
      for (const std::string& f : r.functions) {
        if (FunctionIs(f, forbidden)) {
          ADD_FAILURE() << tool << " reported an allocation of " << forbidden
                        << ", which is reachable: " << r.Describe();
          break;
        }
      }
    }
    std::string site = Attribute(r.functions, sites);
    if (site.empty()) {
      ADD_FAILURE() << tool << " reported a leak the program does not have: " << r.Describe();
      continue;
    }
    Tally& t = tallies[{r.kind, site}];
    t.count += r.count;
    t.bytes += r.bytes;
    t.retained += r.retained;
    ++t.records;
  }
  auto check = [&](const char* kind, const std::vector<Expect>& expects) {
    for (const Expect& e : expects) {
      auto it = tallies.find({kind, e.site});
      if (it == tallies.end()) {
        ADD_FAILURE() << tool << " reported no " << kind << " leak from " << e.site << " (expected "
                      << e.count << " block(s), " << e.bytes << " bytes)";
        continue;
      }
      EXPECT_EQ(it->second.count, e.count) << tool << ": " << kind << " blocks from " << e.site;
      EXPECT_EQ(it->second.bytes, e.bytes) << tool << ": " << kind << " bytes from " << e.site;
      if (e.retained >= 0) {
        EXPECT_EQ(it->second.retained, static_cast<uint64_t>(e.retained))
            << tool << ": retained bytes of the direct leak from " << e.site;
      }
      tallies.erase(it);
    }
  };
  check("direct", c.direct);
  check("indirect", c.indirect);
  for (const auto& [key, tally] : tallies) {
    bool forbidden = false;
    for (const char* s : c.must_not_report) forbidden |= key.second == s;
    if (forbidden) continue;  // already reported above
    ADD_FAILURE() << tool << " reported " << tally.count << " unexpected " << key.first
                  << " block(s) (" << tally.bytes << " bytes) from " << key.second;
  }
}

// ------------------------------------------------------------------------------------------------
// heapgraph.

uint64_t Number(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key)) return 0;
  const json& v = object.at(key);
  if (v.is_number_unsigned() || v.is_number_integer()) return v.get<uint64_t>();
  if (v.is_string()) return std::stoull(v.get<std::string>(), nullptr, 0);
  return 0;
}

[[maybe_unused]] std::vector<Record> HeapgraphRecords(const json& report) {
  std::vector<Record> records;
  for (const json& leak : report.value("leaks", json::array())) {
    Record r;
    r.kind = leak.value("kind", "");
    r.count = Number(leak, "count");
    r.bytes = Number(leak, "size");
    r.retained = Number(leak, "retained_bytes");
    for (const json& frame : leak.value("stack", json::array())) {
      r.functions.push_back(frame.is_object() ? frame.value("function", "") : "");
    }
    records.push_back(std::move(r));
  }
  return records;
}

struct HeapgraphRun {
  RunResult run;
  json report;
  std::string error;  // why there is no report
};

HeapgraphRun RunHeapgraph(const Case& c, const fs::path& dir) {
  HeapgraphRun h;
  fs::path json_path = dir / "report.json";
  fs::path text_path = dir / "report.txt";
  std::vector<std::string> argv = {HEAPGRAPH_CLI, "run",
                                   "--json",      json_path.string(),
                                   "--text",      text_path.string(),
                                   "--",          ProgramPath(c.program)};
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  h.run = RunChild(argv, dir, "heapgraph");
  std::string text = ReadFile(json_path);
  if (text.empty()) {
    h.error = "no JSON report written";
    return h;
  }
  h.report = json::parse(text, nullptr, false);
  if (h.report.is_discarded()) h.error = "the JSON report does not parse";
  return h;
}

std::string Diagnostics(const HeapgraphRun& h, const fs::path& dir) {
  return "heapgraph run exited " + std::to_string(h.run.status) + "; stderr:\n" + h.run.err +
         "\nfiles kept in " + dir.string();
}

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

#ifndef HEAPGRAPH_LEAK_ACCURACY_VALGRIND

void CheckHeapgraphReport(const Case& c, const json& report) {
  EXPECT_EQ(report.value("format", ""), "heapgraph-leak-report");
  EXPECT_EQ(report.value("version", 0), 2);
  std::vector<Record> records = HeapgraphRecords(report);
  CheckRecords(c, records, "heapgraph");

  // The summary adds up the records.
  const json summary = report.value("summary", json::object());
  uint64_t direct_blocks = 0, indirect_blocks = 0, direct_bytes = 0, indirect_bytes = 0;
  for (const Record& r : records) {
    (r.kind == "direct" ? direct_blocks : indirect_blocks) += r.count;
    (r.kind == "direct" ? direct_bytes : indirect_bytes) += r.bytes;
    EXPECT_TRUE(r.kind == "direct" || r.kind == "indirect") << "leak kind " << r.kind;
  }
  EXPECT_EQ(Number(summary, "direct_blocks"), direct_blocks);
  EXPECT_EQ(Number(summary, "indirect_blocks"), indirect_blocks);
  EXPECT_EQ(Number(summary, "direct_bytes"), direct_bytes);
  EXPECT_EQ(Number(summary, "indirect_bytes"), indirect_bytes);
  EXPECT_EQ(Number(summary, "leaked_bytes"), direct_bytes + indirect_bytes);

  // Cycles: exactly one leaked cycle per expectation, all of whose members have its size.
  const json cycles = report.value("cycles", json::array());
  for (const CycleExpect& e : c.cycles) {
    int matches = 0;
    for (const json& cycle : cycles) {
      if (cycle.contains("leaked") && cycle["leaked"].is_boolean() &&
          !cycle["leaked"].get<bool>()) {
        continue;
      }
      const json members = cycle.value("members", json::array());
      if (members.empty()) continue;
      bool all = true;
      for (const json& m : members) all &= Number(m, "size") == e.member_size;
      if (!all) continue;
      ++matches;
      EXPECT_EQ(members.size(), e.members)
          << "members of the cycle of " << e.member_size << "-byte blocks";
    }
    EXPECT_EQ(matches, 1) << "leaked cycles made of " << e.member_size << "-byte blocks";
  }
  // And no other leaked cycle: a block pointing into itself is none.
  size_t leaked_cycles = 0;
  for (const json& cycle : cycles) {
    bool reachable =
        cycle.contains("leaked") && cycle["leaked"].is_boolean() && !cycle["leaked"].get<bool>();
    if (!reachable) ++leaked_cycles;
  }
  EXPECT_EQ(leaked_cycles, c.cycles.size()) << "leaked cycles";
  EXPECT_GE(Number(summary, "cycles"), c.cycles.size());
}

class LeakAccuracy : public testing::TestWithParam<Case> {};

TEST_P(LeakAccuracy, MatchesTable) {
  if (CliUnavailable()) GTEST_SKIP() << *CliUnavailable();
  const Case& c = GetParam();
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  HeapgraphRun h = RunHeapgraph(c, dir.path());
  [&] {
    ASSERT_NE(h.run.status, kTimedOut) << "timed out after " << kRunTimeout.count() << " s";
    ASSERT_TRUE(h.error.empty()) << h.error;
    EXPECT_EQ(h.run.status, c.exit_status) << "exit status of heapgraph run";
    CheckHeapgraphReport(c, h.report);
    EXPECT_FALSE(ReadFile(dir.path() / "report.txt").empty()) << "--text report";
  }();
  if (HasFailure()) {
    dir.Keep();
    ADD_FAILURE() << Diagnostics(h, dir.path())
                  << (c.hint != nullptr ? std::string("\nhint: ") + c.hint : "");
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, LeakAccuracy, testing::ValuesIn(Cases()), CaseName);

#else  // HEAPGRAPH_LEAK_ACCURACY_VALGRIND

// ------------------------------------------------------------------------------------------------
// Valgrind.

std::optional<std::string> ValgrindUnavailable() {
  const char* skip = getenv("HEAPGRAPH_SKIP_VALGRIND");
  if (skip != nullptr && *skip != '\0' && strcmp(skip, "0") != 0) {
    return std::string("HEAPGRAPH_SKIP_VALGRIND is set");
  }
  for (const char* path : {"/usr/bin/valgrind", "/usr/local/bin/valgrind"}) {
    if (access(path, X_OK) == 0) return std::nullopt;
  }
  return std::string("valgrind is not installed");
}

std::string ValgrindPath() {
  return access("/usr/bin/valgrind", X_OK) == 0 ? "/usr/bin/valgrind" : "/usr/local/bin/valgrind";
}

// The text between <tag> and </tag> from `from`, or "" (and npos in *next).
std::string Element(const std::string& xml, const std::string& tag, size_t from, size_t* next) {
  std::string open = "<" + tag + ">";
  std::string close = "</" + tag + ">";
  size_t begin = xml.find(open, from);
  if (begin == std::string::npos) {
    if (next != nullptr) *next = std::string::npos;
    return "";
  }
  begin += open.size();
  size_t end = xml.find(close, begin);
  if (end == std::string::npos) {
    if (next != nullptr) *next = std::string::npos;
    return "";
  }
  if (next != nullptr) *next = end + close.size();
  return xml.substr(begin, end - begin);
}

// Valgrind's definitely and indirectly lost records. A definitely lost record's <leakedbytes>
// includes the bytes it retains; its text says "N (D direct, I indirect) bytes" then.
std::vector<Record> ValgrindRecords(const std::string& xml) {
  std::vector<Record> records;
  size_t at = 0;
  for (;;) {
    size_t next = 0;
    std::string error = Element(xml, "error", at, &next);
    if (next == std::string::npos) break;
    at = next;
    std::string kind = Element(error, "kind", 0, nullptr);
    Record r;
    if (kind == "Leak_DefinitelyLost") {
      r.kind = "direct";
    } else if (kind == "Leak_IndirectlyLost") {
      r.kind = "indirect";
    } else {
      continue;
    }
    uint64_t leaked = std::stoull("0" + Element(error, "leakedbytes", 0, nullptr));
    r.count = std::stoull("0" + Element(error, "leakedblocks", 0, nullptr));
    r.bytes = leaked;
    r.retained = leaked;
    std::string text = Element(error, "text", 0, nullptr);
    size_t paren = text.find(" (");
    if (paren != std::string::npos && text.find(" direct, ", paren) != std::string::npos) {
      std::string direct = text.substr(paren + 2);
      direct.erase(std::remove(direct.begin(), direct.end(), ','), direct.end());
      r.bytes = std::stoull(direct);
    }
    size_t frame_at = 0;
    std::string stack = Element(error, "stack", 0, nullptr);
    for (;;) {
      size_t frame_next = 0;
      std::string frame = Element(stack, "frame", frame_at, &frame_next);
      if (frame_next == std::string::npos) break;
      frame_at = frame_next;
      r.functions.push_back(Element(frame, "fn", 0, nullptr));
    }
    records.push_back(std::move(r));
  }
  return records;
}

class LeakAccuracyValgrind : public testing::TestWithParam<Case> {};

TEST_P(LeakAccuracyValgrind, AgreesWithTableAndHeapgraph) {
  if (auto reason = ValgrindUnavailable()) GTEST_SKIP() << *reason;
  const Case& c = GetParam();
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  fs::path xml_path = dir.path() / "valgrind.xml";
  std::vector<std::string> argv = {ValgrindPath(),
                                   "--leak-check=full",
                                   "--show-leak-kinds=definite,indirect",
                                   "--errors-for-leak-kinds=definite",
                                   "--error-exitcode=42",
                                   "--xml=yes",
                                   "--xml-file=" + xml_path.string(),
                                   ProgramPath(c.program)};
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  RunResult vg = RunChild(argv, dir.path(), "valgrind");
  ASSERT_NE(vg.status, kTimedOut);
  int expected_status = c.direct.empty() ? c.exit_status : kValgrindExit;
  EXPECT_EQ(vg.status, expected_status) << "valgrind stderr:\n" << vg.err;
  std::vector<Record> records = ValgrindRecords(ReadFile(xml_path));
  CheckRecords(c, records, "valgrind");
  uint64_t definite = 0, indirect = 0;
  for (const Record& r : records) (r.kind == "direct" ? definite : indirect) += r.bytes;
  RecordProperty("valgrind_definitely_lost_bytes", std::to_string(definite));
  RecordProperty("valgrind_indirectly_lost_bytes", std::to_string(indirect));
  printf("[ valgrind ] %s: definitely lost %ju bytes, indirectly lost %ju bytes\n", c.name,
         static_cast<uintmax_t>(definite), static_cast<uintmax_t>(indirect));

  if (CliUnavailable()) {
    printf("[ valgrind ] %s: heapgraph not compared: %s\n", c.name, CliUnavailable()->c_str());
    return;
  }
  HeapgraphRun h = RunHeapgraph(c, dir.path());
  ASSERT_TRUE(h.error.empty()) << h.error << "\n" << Diagnostics(h, dir.path());
  const json summary = h.report.value("summary", json::object());
  EXPECT_EQ(Number(summary, "direct_bytes"), definite)
      << "heapgraph direct bytes vs Valgrind's definitely lost bytes";
  EXPECT_EQ(Number(summary, "indirect_bytes"), indirect)
      << "heapgraph indirect bytes vs Valgrind's indirectly lost bytes";
  if (HasFailure()) {
    dir.Keep();
    ADD_FAILURE() << "files kept in " << dir.path().string()
                  << (c.hint != nullptr ? std::string("\nhint: ") + c.hint : "");
  }
}

std::vector<Case> ValgrindCases() {
  std::vector<Case> cases;
  for (const Case& c : Cases()) {
    if (c.valgrind) cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, LeakAccuracyValgrind, testing::ValuesIn(ValgrindCases()), CaseName);

#endif  // HEAPGRAPH_LEAK_ACCURACY_VALGRIND

}  // namespace
}  // namespace heapgraph
