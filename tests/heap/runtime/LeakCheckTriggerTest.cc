// The three ways a leak check starts, on real child processes: the in-process C API (repeatable),
// the signal trigger (reports numbered in the recording directory), and `heapgraph run` (exit
// status 23 only when leaks are found, the program's own otherwise).
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "report/SymbolCache.h"
#include "tests/ShellCommand.h"

namespace {

const std::string kChild = std::string(HEAPGRAPH_PROGRAM_DIR) + "/leak_check_child";

std::string TempRoot() {
  char pattern[] = "/tmp/heapgraph-trigger-XXXXXX";
  return mkdtemp(pattern);
}

// Runs `command` with the shell; returns its exit status and stdout (replacing `*output`).
int Shell(const std::string& command, std::string* output) {
  output->clear();
  return heapgraph::shell::RunShellCommand(command, output);
}

// Issue 13 item 6: a process tree under `heapgraph run`. tests/programs/leak_tree DEPTH STATUS is
// DEPTH + 1 processes (fork + exec), each leaking one block; the top one exits with STATUS.
const std::string kTree = std::string(HEAPGRAPH_PROGRAM_DIR) + "/leak_tree";

// A shell command that waits (up to 60 s) until `file` holds a run's summary line: a run started
// in the background has ended.
std::string AwaitSummaryIn(const std::string& file) {
  return "for i in $(seq 600); do grep -q 'run summary' " + file +
         " 2>/dev/null && break; sleep 0.1; done";
}

// The "heapgraph: run summary: ..." line of `out`, or "".
std::string SummaryLine(const std::string& out) {
  size_t at = out.find("heapgraph: run summary: ");
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

size_t JsonFiles(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    n += e.path().extension() == ".json" ? 1 : 0;
  }
  return n;
}

TEST(LeakCheckTriggerTest, ApiCheckIsRepeatableAndSeesNewLeaks) {
  std::string root = TempRoot(), out;
  int status = Shell("HEAPGRAPH_OPTIONS=dir=" + root + " " + kChild + " api", &out);
  ASSERT_EQ(status, 0) << out;
  int n1 = -1, n2 = -1;
  ASSERT_EQ(std::sscanf(out.c_str(), "checks %d %d", &n1, &n2), 2) << out;
  EXPECT_GE(n1, 3);
  EXPECT_EQ(n2 - n1, 2);
  std::filesystem::remove_all(root);
}

// Issue 14: a one-shot check of a small heap (at most 4,096 blocks and 4 MiB live) scans in
// place, without a snapshot process (a short program's check at exit: 2-2.5 ms instead of
// 5-7.5); more bytes or more blocks still get one (in place, marking many blocks would keep the
// world stopped longer than a snapshot's clone). All find exactly the leaks.
TEST(LeakCheckTriggerTest, ASmallHeapIsScannedInPlaceALargeOneInASnapshot) {
  std::string root = TempRoot(), out;
  int status = Shell("HEAPGRAPH_OPTIONS=dir=" + root + " " + kChild + " sizes " + root, &out);
  ASSERT_EQ(status, 0) << out;
  int n1 = -1, n2 = -1, n3 = -1;
  ASSERT_EQ(std::sscanf(out.c_str(), "checks %d %d %d", &n1, &n2, &n3), 3) << out;
  EXPECT_EQ(n1, 3);
  EXPECT_EQ(n2, 5);
  EXPECT_EQ(n3, 5);
  auto scan = [&](const char* name) {
    std::ifstream in(root + "/" + name);
    return nlohmann::json::parse(in, nullptr, false)["scan"];
  };
  nlohmann::json small = scan("small.json"), large = scan("large.json"), many = scan("many.json");
  EXPECT_EQ(small["in_stopped_world"], true) << small.dump();
  EXPECT_LT(small["live_bytes"].get<double>(), 4 << 20);
  EXPECT_EQ(small["notice"], "");
  EXPECT_EQ(large["in_stopped_world"], false) << large.dump();
  EXPECT_GT(large["live_bytes"].get<double>(), 6 << 20);
  EXPECT_EQ(many["in_stopped_world"], false) << many.dump();
  EXPECT_GT(many["live_blocks"].get<double>(), 6000);
  EXPECT_LT(many["live_bytes"].get<double>(), 4 << 20);
  std::filesystem::remove_all(root);
}

// Issue 13 item 7: under LD_PRELOAD alone, every public check function is found with
// dlsym(RTLD_DEFAULT) (libheapgraph.so defines them and loads its checker) and works.
TEST(LeakCheckTriggerTest, PublicCheckFunctionsAreFoundWithDlsymUnderPreload) {
  std::string root = TempRoot(), out;
  int status = Shell("LD_PRELOAD=" HEAPGRAPH_PRELOAD " HEAPGRAPH_OPTIONS=dir=" + root + " " +
                         HEAPGRAPH_PROGRAM_DIR "/dlsym_check",
                     &out);
  ASSERT_EQ(status, 0) << out;
  int all = -1, in_window = -1;
  ASSERT_EQ(std::sscanf(out.c_str(), "checks %d %d", &all, &in_window), 2) << out;
  EXPECT_GE(all, 3);
  EXPECT_EQ(in_window, 2);
  std::filesystem::remove_all(root);
}

size_t ThreadsOf(pid_t pid) {
  size_t n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    n += e.is_directory() ? 1 : 0;
  }
  return n;
}

// Waits until `deadline` (60 s from now by default) for `path` to hold a whole JSON document;
// returns it, or null when it did not come.
nlohmann::json AwaitJson(const std::string& path,
                         std::chrono::steady_clock::time_point deadline =
                             std::chrono::steady_clock::now() + std::chrono::seconds(60)) {
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream file(path);
    if (file) {
      nlohmann::json json = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
      if (!json.is_discarded()) return json;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return nullptr;
}

// leak_check_child "signal", recording into `root` (its stderr in root/stderr), once it has said
// where its recording directory is: `in` reads its stdout (fclose it), `dir` is that directory.
// Returns the child's pid, or -1 (a failed expectation) when it said nothing.
pid_t StartSignalChild(const std::string& root, FILE** in, std::string* dir) {
  int out[2];
  if (pipe(out) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    int err = open((root + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(err, 2);
    setenv("HEAPGRAPH_OPTIONS", ("dir=" + root).c_str(), 1);
    execl(kChild.c_str(), kChild.c_str(), "signal", nullptr);
    _exit(127);
  }
  close(out[1]);
  char line[1024] = {};
  *in = fdopen(out[0], "r");
  if (std::fgets(line, sizeof(line), *in) == nullptr) {
    ADD_FAILURE() << "the child said nothing";
    return -1;
  }
  *dir = std::string(line).substr(6);
  dir->erase(dir->find_last_not_of("\n") + 1);
  return pid;
}

// The thread that runs the signal's checks is started by the first signal (the session thread
// watches the signal's pipe until then), not by every recorded process at start (issue 14: a short
// process's start). It stays for the next signals.
TEST(LeakCheckTriggerTest, TheSignalsThreadStartsWithTheFirstSignal) {
  std::string root = TempRoot();
  FILE* in = nullptr;
  std::string dir;
  pid_t pid = StartSignalChild(root, &in, &dir);
  ASSERT_GT(pid, 0);
  const size_t before = ThreadsOf(pid);
  ASSERT_EQ(kill(pid, SIGRTMIN + 5), 0);
  EXPECT_FALSE(AwaitJson(dir + "/leaks-1.json").is_null());
  EXPECT_EQ(ThreadsOf(pid), before + 1);
  ASSERT_EQ(kill(pid, SIGRTMIN + 5), 0);
  EXPECT_FALSE(AwaitJson(dir + "/leaks-2.json").is_null());
  EXPECT_EQ(ThreadsOf(pid), before + 1);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  fclose(in);
  std::filesystem::remove_all(root);
}

TEST(LeakCheckTriggerTest, SignalWritesNumberedReportsIntoTheRecordingAndNamesThem) {
  std::string root = TempRoot();
  FILE* in = nullptr;
  std::string dir;
  pid_t pid = StartSignalChild(root, &in, &dir);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(kill(pid, SIGRTMIN + 5), 0);
  std::string report = dir + "/leaks-1.json";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  nlohmann::json json = AwaitJson(report, deadline);
  // The text report is written after the JSON one (check/LeakCheck.cc): wait for it too.
  while (!std::filesystem::exists(dir + "/leaks-1.txt") &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Then one line on the program's stderr names the reports (issue 13 item 7).
  std::string err_text;
  while (err_text.find(".json)") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ifstream err(root + "/stderr");
    err_text.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  fclose(in);
  ASSERT_FALSE(json.is_null()) << "no report at " << report;
  EXPECT_GE(json["summary"]["direct_blocks"].get<int>(), 4);
  EXPECT_TRUE(std::filesystem::exists(dir + "/leaks-1.txt"));
  EXPECT_NE(
      err_text.find("heapgraph: leak check 1 on signal " + std::to_string(SIGRTMIN + 5) + ": "),
      std::string::npos)
      << err_text;
  EXPECT_NE(err_text.find(dir + "/leaks-1.txt (" + dir + "/leaks-1.json)"), std::string::npos)
      << err_text;
  std::filesystem::remove_all(root);
}

// Issue 12, item 11: scan_signal=11 (a fault signal) is refused in one line and the default stays;
// a program that then faults dies of its SIGSEGV instead of faulting (and checking) forever.
TEST(LeakCheckTriggerTest, FaultSignalAsScanSignalIsRefusedAndTheProgramStillDies) {
  std::string root = TempRoot(), out;
  int status = Shell("ulimit -c 0; HEAPGRAPH_OPTIONS=dir=" + root +
                         ",scan_signal=11 timeout -s KILL 60 " + kChild + " fault 2>&1",
                     &out);
  EXPECT_EQ(status, 128 + SIGSEGV) << out;
  // Then the shell may say "Segmentation fault".
  const std::string expected =
      "heapgraph: bad value for option 'scan_signal=11' in HEAPGRAPH_OPTIONS (expected 0 (off) or "
      "a signal number 1..64 but 4, 5, 7, 8, 9, 11, 19, 31, 32, 33); ignored\nfaulting\n";
  EXPECT_EQ(out.rfind(expected, 0), 0u) << out;
  EXPECT_EQ(out.find("heapgraph:", 1), std::string::npos) << out;
  std::filesystem::remove_all(root);
}

// Issue 12, item 12: a symbolic link planted at the report path is not followed: the victim file
// keeps its contents, the link stays, one line says why; the check itself still reports the leak.
// A report that is written is 0600 whatever the umask.
TEST(LeakCheckTriggerTest, RunNeverWritesAReportThroughASymbolicLink) {
  std::string root = TempRoot(), out;
  std::string victim = root + "/victim", link = root + "/leaks.json";
  std::ofstream(victim) << "precious\n";
  std::filesystem::create_symlink(victim, link);
  int status = Shell("umask 022; " + std::string(HEAPGRAPH_CLI) + " run --text /dev/null --json " +
                         link + " -- " + kChild + " leaky 2>&1",
                     &out);
  EXPECT_EQ(status, 23) << out;
  EXPECT_EQ(
      out.rfind("heapgraph: cannot write " + link + ": is a symbolic link (not followed)\n", 0), 0u)
      << out;
  // The verdict does not depend on the report file: the run still fails on the leak.
  EXPECT_NE(SummaryLine(out).find("1 of 1 recorded process checked, 1 with leaks"),
            std::string::npos)
      << out;
  std::ifstream file(victim);
  std::string contents((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "precious\n");
  EXPECT_TRUE(std::filesystem::is_symlink(link));

  std::string json = root + "/report.json";
  status = Shell("umask 022; " + std::string(HEAPGRAPH_CLI) + " run --text /dev/null --json " +
                     json + " -- " + kChild + " leaky 2>&1",
                 &out);
  EXPECT_EQ(status, 23) << out;
  EXPECT_EQ(std::filesystem::status(json).permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::remove_all(root);
}

TEST(LeakCheckTriggerTest, RunPassesTheProgramStatusThroughWhenThereAreNoLeaks) {
  std::string out;
  int status =
      Shell(std::string(HEAPGRAPH_CLI) + " run --text /dev/null -- " + kChild + " clean", &out);
  EXPECT_EQ(status, 7);
}

// As LeakSanitizer's, an at-exit check that finds nothing prints nothing on stderr: a build log
// running many programs under `heapgraph run` holds only its summary line. A text file asked for
// still gets the whole text.
TEST(LeakCheckTriggerTest, RunPrintsNoTextOnStderrWhenNothingLeaked) {
  std::string root = TempRoot(), out;
  int status = Shell(
      std::string(HEAPGRAPH_CLI) + " run --dir " + root + "/a -- " + kChild + " clean 2>&1", &out);
  EXPECT_EQ(status, 7);
  EXPECT_EQ(out.find("no leaks found"), std::string::npos) << out;
  EXPECT_EQ(out.find("SUMMARY:"), std::string::npos) << out;
  EXPECT_EQ(out.find("Scan:"), std::string::npos) << out;
  EXPECT_EQ(SummaryLine(out).rfind(
                "heapgraph: run summary: 1 of 1 recorded process checked, 0 with leaks; pid ", 0),
            0u)
      << out;
  const std::string text_path = root + "/clean.txt";
  status = Shell(std::string(HEAPGRAPH_CLI) + " run --dir " + root + "/b --text " + text_path +
                     " -- " + kChild + " clean 2>&1",
                 &out);
  EXPECT_EQ(status, 7);
  std::ifstream file(text_path);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("heapgraph: no leaks found\n", 0), 0u) << text;
  EXPECT_NE(text.find("SUMMARY: heapgraph: 0 byte(s) leaked"), std::string::npos) << text;
  std::filesystem::remove_all(root);
}

// A program that holds no live block at exit cannot leak: its check writes the usual clean report
// without stopping a thread or reading a root (issue 14: the check of a short program at exit).
// The same program keeping one block is scanned as before.
TEST(LeakCheckTriggerTest, AnEmptyHeapIsReportedCleanWithoutStoppingTheProgram) {
  const std::string program = std::string(HEAPGRAPH_PROGRAM_DIR) + "/no_heap";
  std::string root = TempRoot(), out;
  for (const char* mode : {"", "keep"}) {
    const std::string json_path = root + "/report" + mode + ".json";
    int status = Shell(std::string(HEAPGRAPH_CLI) + " run --dir " + root + "/r" + mode +
                           " --json " + json_path + " -- " + program + " " + mode + " 2>&1",
                       &out);
    EXPECT_EQ(status, 0) << out;
    EXPECT_EQ(SummaryLine(out).rfind(
                  "heapgraph: run summary: 1 of 1 recorded process checked, 0 with leaks", 0),
              0u)
        << out;
    std::ifstream file(json_path);
    nlohmann::json json = nlohmann::json::parse(file);
    const bool empty = mode[0] == '\0';
    EXPECT_EQ(json["summary"]["live_blocks"].get<int>(), empty ? 0 : 1) << mode;
    EXPECT_EQ(json["summary"]["direct_blocks"].get<int>(), 0) << mode;
    EXPECT_TRUE(json["scan"]["ok"].get<bool>()) << mode;
    EXPECT_EQ(json["scan"]["threads"].get<int>() == 0, empty) << mode;
    EXPECT_EQ(json["scan"]["root_ranges"].get<int>() == 0, empty) << mode;
    EXPECT_NE(json["recording_dir"].get<std::string>(), "") << mode;
  }
  std::filesystem::remove_all(root);
}

// The at-exit check ends the recorder's own threads first (SessionMonitor::Stop, and with a
// memory limit to watch PressureWatcher::Stop): a program whose exiting thread is its only one is
// checked with no thread to stop. Its leak is still found and its kept block still reachable.
TEST(LeakCheckTriggerTest, TheAtExitCheckOfASingleThreadedProgramHasNoThreadToStop) {
  const std::string program = std::string(HEAPGRAPH_PROGRAM_DIR) + "/no_heap";
  std::string root = TempRoot(), out;
  for (const char* watched : {"", "memory_limit=64G,watch_interval_ms=10"}) {
    for (const char* mode : {"keep", "lose"}) {
      const std::string name = std::string(mode) + (watched[0] != '\0' ? "-watched" : "");
      const std::string json_path = root + "/report-" + name + ".json";
      const std::string options = watched[0] != '\0' ? std::string(" --options ") + watched : "";
      int status = Shell(std::string(HEAPGRAPH_CLI) + " run --dir " + root + "/r" + name + options +
                             " --json " + json_path + " -- " + program + " " + mode + " 2>&1",
                         &out);
      const bool lose = mode[0] == 'l';
      EXPECT_EQ(status == 0, !lose) << name << out;
      std::ifstream file(json_path);
      nlohmann::json json = nlohmann::json::parse(file);
      EXPECT_TRUE(json["scan"]["ok"].get<bool>()) << name;
      EXPECT_EQ(json["scan"]["threads"].get<int>(), 1) << name;  // the exiting thread alone
      EXPECT_EQ(json["summary"]["live_blocks"].get<int>(), 1) << name;
      EXPECT_EQ(json["summary"]["direct_blocks"].get<int>(), lose ? 1 : 0) << name;
    }
  }
  std::filesystem::remove_all(root);
}

// The check of a C program loads libheapgraph_scan.so and no C++ runtime beside it: the plugin
// links libstdc++ and libgcc statically and holds fmt's definitions (check/FmtDefinitions.cc),
// because loading libstdc++.so cost most of a short C program's check (issue 14), libgcc_s.so
// another 0.1 ms. The loader's own log (LD_DEBUG=libs) says what the child loaded. An exception
// inside the plugin (too many explain targets, report/Explanation) is still caught there, by its
// own copy of the runtime: one line, and the report is written.
// What the dynamic loader loaded in the processes run with LD_DEBUG=libs LD_DEBUG_OUTPUT=<root>/ld.
std::string LoaderLog(const std::string& root) {
  std::string log;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    if (e.path().filename().string().rfind("ld.", 0) != 0) continue;
    std::ifstream in(e.path());
    log.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return log;
}

TEST(LeakCheckTriggerTest, ACProgramsCheckLoadsNoCxxRuntimeAndCatchesItsOwnExceptions) {
  const std::string program = std::string(HEAPGRAPH_PROGRAM_DIR) + "/no_heap";
  std::string root = TempRoot(), out;
  std::string too_many = "f0";
  for (int i = 1; i < 70; ++i) too_many += "/f" + std::to_string(i);
  const std::string json_path = root + "/report.json";
  int status =
      Shell(std::string(HEAPGRAPH_CLI) + " run --dir " + root + "/r --json " + json_path +
                " --options leak_explain=" + too_many +
                " -- env LD_DEBUG=libs LD_DEBUG_OUTPUT=" + root + "/ld " + program + " keep 2>&1",
            &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("leak_explain: more than 64 functions to explain; nothing is explained"),
            std::string::npos)
      << out;
  std::ifstream file(json_path);
  nlohmann::json json = nlohmann::json::parse(file);
  EXPECT_EQ(json["summary"]["live_blocks"].get<int>(), 1);
  EXPECT_TRUE(json["scan"]["ok"].get<bool>());
  const std::string log = LoaderLog(root);
  EXPECT_NE(log.find("libheapgraph_scan.so"), std::string::npos) << log;
  EXPECT_EQ(log.find("libstdc++"), std::string::npos) << log;
  EXPECT_EQ(log.find("libgcc_s"), std::string::npos) << log;
  EXPECT_EQ(log.find("libfmt"), std::string::npos) << log;
  std::filesystem::remove_all(root);
}

// elfutils' libdw (and libbz2 behind it) is loaded to name a frame that the user's symbol cache
// lacks, and libelf only for a symbol table that names a std::function handler
// (scanner/types/ElfutilsLibrary.h). The leaking run comes first, with an empty cache: it names
// main from no_heap.c with libdw. The clean run then loads neither (its recorded stack, which the
// symbol warm-up may name while the marking runs, is in the cache by then).
TEST(LeakCheckTriggerTest, OnlyACheckThatNamesFramesLoadsElfutils) {
  const std::string program = std::string(HEAPGRAPH_PROGRAM_DIR) + "/no_heap";
  const std::string cache = TempRoot();
  for (const char* mode : {"lose", "keep"}) {
    SCOPED_TRACE(mode);
    std::string root = TempRoot(), out;
    Shell("XDG_CACHE_HOME=" + cache + " " + std::string(HEAPGRAPH_CLI) + " run --dir " + root +
              "/r -- env LD_DEBUG=libs LD_DEBUG_OUTPUT=" + root + "/ld " + program + " " + mode +
              " 2>&1",
          &out);
    const std::string log = LoaderLog(root);
    EXPECT_NE(log.find("libheapgraph_scan.so"), std::string::npos) << log;
    if (std::string(mode) == "lose") {
      EXPECT_NE(out.find("in main"), std::string::npos) << out;
      EXPECT_NE(out.find("no_heap.c"), std::string::npos) << out;
      EXPECT_NE(log.find("libdw.so"), std::string::npos) << log;
    } else {
      EXPECT_EQ(log.find("libdw.so"), std::string::npos) << log;
      EXPECT_EQ(log.find("libbz2"), std::string::npos) << log;
      // Its .symtab (and libheapgraph.so's) names no std::function handler.
      EXPECT_EQ(log.find("libelf.so"), std::string::npos) << log;
    }
    std::filesystem::remove_all(root);
  }
  std::filesystem::remove_all(cache);
}

// Bytes of the writable PT_LOAD segments (.data, .bss, page-rounded) of the ELF file `path`.
uint64_t WritableSegmentBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof(header));
  uint64_t bytes = 0;
  for (int i = 0; in && i < header.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(header.e_phoff + i * header.e_phentsize));
    in.read(reinterpret_cast<char*>(&ph), sizeof(ph));
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0) continue;
    const uint64_t begin = ph.p_vaddr & ~uint64_t{4095};
    bytes += ((ph.p_vaddr + ph.p_memsz + 4095) & ~uint64_t{4095}) - begin;
  }
  return bytes;
}

// libheapgraph.so's .data and .bss are the recorder's state, never a root
// (heap/plugin/OwnLibraryData): a small C program's check read its ≈ 800 KiB of tables as roots,
// most of what it read (1.1 MB of roots for /bin/echo).
TEST(LeakCheckTriggerTest, ASmallProgramsCheckReadsNoneOfHeapgraphsOwnDataAsRoots) {
  const uint64_t own = WritableSegmentBytes(HEAPGRAPH_PRELOAD);
  ASSERT_GT(own, 256u * 1024);
  const std::string program = std::string(HEAPGRAPH_PROGRAM_DIR) + "/no_heap";
  std::string root = TempRoot(), out;
  const std::string json_path = root + "/report.json";
  int status = Shell(std::string(HEAPGRAPH_CLI) + " run --dir " + root + "/r --json " + json_path +
                         " -- " + program + " keep 2>&1",
                     &out);
  EXPECT_EQ(status, 0) << out;
  std::ifstream file(json_path);
  nlohmann::json json = nlohmann::json::parse(file);
  ASSERT_TRUE(json["scan"]["ok"].get<bool>()) << json.dump();
  EXPECT_EQ(json["summary"]["direct_blocks"].get<int>(), 0);
  // Everything this check reads (libc's data, two stacks, the plugin's libraries' data: ≈ 300
  // KB) is less than half of libheapgraph.so's own writable memory (1.1 MB before).
  EXPECT_LT(json["scan"]["root_bytes"].get<uint64_t>(), own / 2) << json["scan"].dump();
  std::filesystem::remove_all(root);
}

// A test build links libheapgraph_scan.so: its static libstdc++ allocates the exception pool at
// start, while the recorder records, and only the plugin's own data holds it. That data stays a
// root (only libheapgraph.so's is cut: heap/plugin/OwnLibraryData), so a full check reports the
// program's one leak and not that pool.
TEST(LeakCheckTriggerTest, ALinkedBuildsCheckReportsNothingOfThePlugins) {
  std::string root = TempRoot(), out;
  int status = Shell("HEAPGRAPH_OPTIONS=dir=" + root + " " + HEAPGRAPH_PROGRAM_DIR +
                         "/linked_check " + root + "/report.json 2>&1",
                     &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("leaked 1 blocks 100 bytes"), std::string::npos) << out;
  std::filesystem::remove_all(root);
}

// Bytes of each file of `dir` by name ({} when there is no such directory).
std::map<std::string, uintmax_t> FileSizes(const std::string& dir) {
  std::map<std::string, uintmax_t> sizes;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_regular_file()) sizes[entry.path().filename()] = entry.file_size();
  }
  return sizes;
}

// Without symbol_cache in --options, `run` shares symbolized addresses through the user's cache
// (tools/RunSymbolCache: $XDG_CACHE_HOME/heapgraph/symbols), kept from one run to the next: the
// second run of the same leaking program finds every address there and appends nothing, and its
// reports name the same frames. A cache directory others may write is not used: that run keeps
// a cache of its own, removed when it ends.
TEST(LeakCheckTriggerTest, RunsShareSymbolizedAddressesThroughTheUsersCache) {
  std::string root = TempRoot(), out;
  const std::string cache = root + "/xdg/heapgraph/symbols";
  auto run = [&](const std::string& name) {
    int status = Shell("XDG_CACHE_HOME=" + root + "/xdg " + HEAPGRAPH_CLI +
                           " run --text /dev/null --json " + root + "/" + name + ".json --dir " +
                           root + "/" + name + " -- " + kTree + " 0 0 2>&1",
                       &out);
    EXPECT_EQ(status, 23) << out;
    nlohmann::json json = nlohmann::json::parse(std::ifstream(root + "/" + name + ".json"));
    std::vector<std::string> functions;
    for (const nlohmann::json& frame : json["leaks"][0]["stack"]) {
      functions.push_back(frame.value("function", ""));
    }
    return functions;
  };
  std::vector<std::string> first = run("first");
  EXPECT_NE(std::find(first.begin(), first.end(), "main"), first.end());
  EXPECT_EQ(std::filesystem::status(cache).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  std::map<std::string, uintmax_t> filled = FileSizes(cache);
  EXPECT_GE(filled.size(), 2u);  // the program's build-id and libc's at least
  EXPECT_EQ(run("second"), first);
  EXPECT_EQ(FileSizes(cache), filled) << "the second run appended";
  for (const auto& [name, bytes] : filled) std::filesystem::remove(cache + "/" + name);
  std::filesystem::permissions(cache, std::filesystem::perms::group_write,
                               std::filesystem::perm_options::add);
  EXPECT_EQ(run("third"), first);
  EXPECT_TRUE(FileSizes(cache).empty()) << "a cache others may write was used";
  for (const auto& entry : std::filesystem::directory_iterator(root + "/third")) {
    EXPECT_NE(entry.path().filename().string().rfind(".symbols.", 0), 0u) << entry.path();
  }
  std::filesystem::remove_all(root);
}

TEST(LeakCheckTriggerTest, RunExitsWithTheLeakStatusAndWritesJson) {
  std::string root = TempRoot(), out;
  std::string json_path = root + "/report.json";
  int status = Shell(std::string(HEAPGRAPH_CLI) + " run --exitcode 42 --text /dev/null --json " +
                         json_path + " -- " + kChild + " leaky",
                     &out);
  EXPECT_EQ(status, 42);
  std::ifstream file(json_path);
  nlohmann::json json = nlohmann::json::parse(file);
  EXPECT_EQ(json["summary"]["direct_blocks"].get<int>(), 1);
  EXPECT_EQ(json["leaks"][0]["size"].get<int>(), 200);
  std::filesystem::remove_all(root);
}

TEST(LeakCheckTriggerTest, RunChecksEveryProcessOfATreeIntoPerProcessReports) {
  std::string root = TempRoot(), out;
  int status = Shell(std::string(HEAPGRAPH_CLI) + " run --text /dev/null --json " + root +
                         "/leaks-%p.json --dir " + root + "/rec -- " + kTree + " 2 0 2>&1",
                     &out);
  EXPECT_EQ(status, 23) << out;
  EXPECT_EQ(JsonFiles(root), 3u) << out;
  std::string line = SummaryLine(out);
  EXPECT_NE(line.find("3 of 3 recorded processes checked, 3 with leaks"), std::string::npos) << out;
  EXPECT_NE(line.find("1 leaked blocks, 102 bytes in " + root + "/leaks-"), std::string::npos)
      << line;
  std::filesystem::remove_all(root);
}

// The three processes of one run leak from the same code: the first check symbolizes the stack
// and keeps it in the run's symbol cache (option symbol_cache, report/SymbolCache), the next two
// find every address there and append nothing, and all three reports name the same frames. The
// cache `run` makes for itself is gone when it returns.
TEST(LeakCheckTriggerTest, RunSharesSymbolizedAddressesAmongItsProcesses) {
  std::string root = TempRoot(), out;
  std::string shared = root + "/shared";  // given by the user: kept, so it can be looked at
  int status = Shell(std::string(HEAPGRAPH_CLI) + " run --text /dev/null --json " + root +
                         "/leaks-%p.json --options symbol_cache=" + shared + " --dir " + root +
                         "/rec -- " + kTree + " 2 0 2>&1",
                     &out);
  EXPECT_EQ(status, 23) << out;
  ASSERT_EQ(JsonFiles(root), 3u) << out;
  std::vector<std::vector<std::string>> stacks;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (entry.path().extension() != ".json") continue;
    nlohmann::json json = nlohmann::json::parse(std::ifstream(entry.path()));
    std::vector<std::string> functions;
    for (const nlohmann::json& frame : json["leaks"][0]["stack"]) {
      functions.push_back(frame.value("function", ""));
    }
    stacks.push_back(functions);
  }
  ASSERT_FALSE(stacks[0].empty());
  EXPECT_NE(std::find(stacks[0].begin(), stacks[0].end(), "main"), stacks[0].end());
  EXPECT_EQ(stacks[1], stacks[0]);
  EXPECT_EQ(stacks[2], stacks[0]);
  // Each address was appended once: by the first process that needed it (no process of this run
  // runs its check beside another's). The program's own file and libc's at least.
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shared)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), {}};
    size_t appended = 0;
    for (size_t at = bytes.find("HGSY"); at != std::string::npos; at = bytes.find("HGSY", at + 1)) {
      ++appended;
    }
    EXPECT_EQ(heapgraph::report::SymbolCache::Parse(bytes).size(), appended) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 2u);
  for (const auto& entry : std::filesystem::directory_iterator(root + "/rec")) {
    EXPECT_NE(entry.path().filename().string().rfind(".symbols.", 0), 0u) << entry.path();
  }
  std::filesystem::remove_all(root);
}

// A run refused for its options (one line, status 2) leaves no symbol cache in the root either.
TEST(LeakCheckTriggerTest, ARefusedRunLeavesNoSymbolCacheBehind) {
  std::string root = TempRoot(), out;
  std::filesystem::create_directories(root + "/rec");
  EXPECT_EQ(Shell(std::string(HEAPGRAPH_CLI) + " run --suppressions 'a;b' --dir " + root +
                      "/rec -- " + kTree + " 0 0 2>&1",
                  &out),
            2)
      << out;
  EXPECT_NE(out.find("must not contain ';'"), std::string::npos) << out;
  EXPECT_TRUE(std::filesystem::is_empty(root + "/rec"));
  std::filesystem::remove_all(root);
}

// A child forked without exec runs its own at-exit check: its verdict goes to its own recording
// directory (made when it lives), never over its parent's.
TEST(LeakCheckTriggerTest, RunChecksAForkedChildIntoItsOwnDirectory) {
  std::string root = TempRoot(), out;
  int status = Shell(std::string(HEAPGRAPH_CLI) + " run --text /dev/null --json " + root +
                         "/leaks-%p.json --dir " + root + "/rec -- " + kTree + " 1 0 fork 2>&1",
                     &out);
  EXPECT_EQ(status, 23) << out;
  EXPECT_EQ(JsonFiles(root), 2u) << out;
  std::string line = SummaryLine(out);
  EXPECT_NE(line.find("2 of 2 recorded processes checked, 2 with leaks"), std::string::npos) << out;
  EXPECT_NE(line.find("1 leaked blocks, 101 bytes"), std::string::npos) << line;
  EXPECT_NE(line.find("2 leaked blocks, 401 bytes"), std::string::npos) << line;
  std::filesystem::remove_all(root);
}

TEST(LeakCheckTriggerTest, RunTopOnlyChecksOnlyTheProgram) {
  std::string root = TempRoot(), out;
  int status = Shell(std::string(HEAPGRAPH_CLI) + " run --top-only --text /dev/null --json " +
                         root + "/leaks-%p.json --dir " + root + "/rec -- " + kTree + " 2 0 2>&1",
                     &out);
  EXPECT_EQ(status, 23) << out;
  EXPECT_EQ(JsonFiles(root), 1u) << out;
  EXPECT_NE(SummaryLine(out).find("1 of 3 recorded processes checked, 1 with leaks"),
            std::string::npos)
      << out;
  std::filesystem::remove_all(root);
}

// Issue 15 item 7: the text report prints the categories table only when asked (run --categories,
// option leak_categories).
TEST(LeakCheckTriggerTest, RunCategoriesEndsTheTextWithTheCategoriesTable) {
  std::string root = TempRoot(), plain, asked;
  std::string run = std::string(HEAPGRAPH_CLI) + " run --top-only --text - --dir " + root;
  Shell(run + "/a -- " + kTree + " 0 0 2>&1", &plain);
  EXPECT_EQ(plain.find("Categories:"), std::string::npos) << plain;
  int status = Shell(run + "/b --categories -- " + kTree + " 0 0 2>&1", &asked);
  EXPECT_EQ(status, 23) << asked;
  EXPECT_NE(asked.find("Categories:"), std::string::npos) << asked;
  std::filesystem::remove_all(root);
}

// Runs sharing one --dir, one after another and side by side, and a recording made there without
// `run`: each run's summary and status count only the processes it started (option run_tag in
// their sessions). Before, a run counted every directory written in the 2 s before it started, so
// a clean program failed (status 23) for the leak of the run before it.
TEST(LeakCheckTriggerTest, RunsSharingADirCountOnlyTheirOwnProcesses) {
  std::string root = TempRoot(), out;
  std::string dir = root + "/rec";
  std::string run = std::string(HEAPGRAPH_CLI) + " run --text /dev/null --dir " + dir + " -- ";
  EXPECT_EQ(Shell(run + kTree + " 1 0 2>&1", &out), 23) << out;
  EXPECT_NE(SummaryLine(out).find("2 of 2 recorded processes checked, 2 with leaks"),
            std::string::npos)
      << out;
  // Recorded and checked, but not by a run.
  Shell("HEAPGRAPH_OPTIONS=dir=" + dir + ",leak_check=1,leak_text=,exitcode=0 " + kChild +
            " leaky 2>&1",
        &out);
  EXPECT_EQ(Shell(run + "/bin/true 2>&1", &out), 0) << out;
  EXPECT_NE(SummaryLine(out).find("1 of 1 recorded process checked, 0 with leaks"),
            std::string::npos)
      << out;
  // Side by side: a leaking tree that outlives a clean run started after it.
  std::string background = root + "/background.txt";
  std::string both = "(" + run + "sh -c '" + kTree + " 1 0; sleep 0.5' > " + background +
                     " 2>&1 &) ; sleep 0.2; " + run + "/bin/true 2>&1; status=$?; " +
                     AwaitSummaryIn(background) + "; exit $status";
  EXPECT_EQ(Shell(both, &out), 0) << out;
  EXPECT_NE(SummaryLine(out).find("1 of 1 recorded process checked, 0 with leaks"),
            std::string::npos)
      << out;
  std::ifstream in(background);
  std::string other{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(SummaryLine(other).find("2 with leaks"), std::string::npos) << other;
  EXPECT_EQ(SummaryLine(other).find("0 with leaks"), std::string::npos) << other;
  std::filesystem::remove_all(root);
}

// One program run many times by a driver under one `heapgraph run`: the run's processes prune
// nothing (each start of a plain recording prunes the finished runs of its executable to `keep`,
// 3), so the summary counts every run's verdict; before, a leak of an early run could vanish from
// the status. A kept --dir is pruned between runs instead: the next run's start classifies the
// finished runs in the root and keeps the newest `keep` of each executable.
TEST(LeakCheckTriggerTest, AKeptDirIsPrunedByTheNextRunNotDuringOne) {
  std::string root = TempRoot(), out;
  std::string dir = root + "/rec";
  std::string run = std::string(HEAPGRAPH_CLI) + " run --text /dev/null --dir " + dir + " -- ";
  auto recordings = [&] {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      n += e.is_directory() && e.path().filename().string()[0] != '.' ? 1 : 0;
    }
    return n;
  };
  EXPECT_EQ(Shell(run + "sh -c 'for i in 1 2 3 4 5 6; do " + kChild + " leaky; done' 2>&1", &out),
            23)
      << out;
  EXPECT_NE(SummaryLine(out).find(" 6 with leaks"), std::string::npos) << out;
  EXPECT_EQ(recordings(), 7u);  // sh and the six children, all kept during the run
  EXPECT_EQ(Shell(run + "/bin/true 2>&1", &out), 0) << out;
  EXPECT_EQ(recordings(), 5u);  // sh, the newest 3 children, and /bin/true
  std::filesystem::remove_all(root);
}

// Two runs side by side in one kept --dir: the second one's start prunes the root (keep=1) but not
// the finished processes of the first, which is still in progress (its marker `.run.<tag>` names
// a live process): the first run's summary still counts all six leaking runs of its program.
TEST(LeakCheckTriggerTest, ARunStartingBesideAnotherPrunesNoneOfItsProcesses) {
  std::string root = TempRoot(), out;
  std::string run = std::string(HEAPGRAPH_CLI) + " run --text /dev/null --dir " + root + "/rec ";
  std::string first = root + "/first.txt";
  std::string both = "(" + run + "-- sh -c 'for i in 1 2 3 4 5 6; do " + kChild +
                     " leaky; sleep 0.15; done' > " + first + " 2>&1 &) ; sleep 0.6; " + run +
                     "--options keep=1 -- /bin/true 2>&1; status=$?; " + AwaitSummaryIn(first) +
                     "; exit $status";
  EXPECT_EQ(Shell(both, &out), 0) << out;
  std::ifstream in(first);
  std::string summary{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(SummaryLine(summary).find(" 6 with leaks"), std::string::npos) << summary;
  for (const auto& e : std::filesystem::directory_iterator(root + "/rec")) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".run.")) << e.path();  // both removed
  }
  std::filesystem::remove_all(root);
}

TEST(LeakCheckTriggerTest, RunCheckExeChecksOnlyMatchingExecutables) {
  std::string root = TempRoot(), out;
  int runs = 0;
  // `heapgraph run --check-exe GLOB` over the two-process tree: its status, its summary line.
  auto run = [&](const std::string& glob, int status, const std::string& summary) {
    std::string dir = root + "/rec" + std::to_string(++runs);
    EXPECT_EQ(Shell(std::string(HEAPGRAPH_CLI) + " run --check-exe '" + glob +
                        "' --text /dev/null --dir " + dir + " -- " + kTree + " 1 0 2>&1",
                    &out),
              status)
        << glob << ": " << out;
    EXPECT_NE(SummaryLine(out).find(summary), std::string::npos) << glob << ": " << out;
  };
  run("other*", 0, "0 of 2 recorded processes checked, 0 with leaks");
  run("leak_tr*", 23, "2 of 2 recorded processes checked, 2 with leaks");
  // A glob holding HEAPGRAPH_OPTIONS' separators (',' and ':') reaches the recorder whole.
  run("leak_tr[,:e]e*", 23, "2 of 2 recorded processes checked, 2 with leaks");
  EXPECT_EQ(out.find("ignored"), std::string::npos) << out;
  std::filesystem::remove_all(root);
}

// Issue 13 item 5: with --baseline, only leak signatures the baseline lacks fail the run;
// `heapgraph diff` says the same about two saved reports.
TEST(LeakCheckTriggerTest, RunWithABaselineFailsOnlyOnNewLeakSignatures) {
  std::string root = TempRoot(), out;
  std::string cli = HEAPGRAPH_CLI, base = root + "/base.json", stale = root + "/stale.json";
  ASSERT_EQ(Shell(cli + " run --text /dev/null --json " + base + " -- " + kChild + " leaky", &out),
            23);
  int status = Shell(
      cli + " run --baseline " + base + " --text /dev/null -- " + kChild + " leaky 2>&1", &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("heapgraph: against the baseline " + base +
                     ": leak diff: 0 new leak signatures, 0 gone, 0 grew, 1 unchanged"),
            std::string::npos)
      << out;
  status = Shell(cli + " run --baseline " + base + " --text /dev/null --json " + stale + " -- " +
                     kChild + " stale 2>&1",
                 &out);
  EXPECT_EQ(status, 23) << out;
  EXPECT_NE(out.find("leak diff: 1 new leak signature, 1 gone, 0 grew, 0 unchanged"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("LeakWithStaleCopies"), std::string::npos) << out;
  EXPECT_EQ(Shell(cli + " diff " + base + " " + stale, &out), 23) << out;
  EXPECT_EQ(out.rfind("leak diff: 1 new leak signature, 1 gone", 0), 0u) << out;
  EXPECT_EQ(Shell(cli + " diff " + base + " " + base, &out), 0) << out;
  // A baseline that is no report stops the run before it starts, in one line.
  status =
      Shell(cli + " run --baseline " + root + "/nothing.json -- " + kChild + " leaky 2>&1", &out);
  EXPECT_EQ(status, 2) << out;
  EXPECT_EQ(out, "heapgraph: cannot read " + root + "/nothing.json\n");
  std::filesystem::remove_all(root);
}

// The program's own failure stands over the leak status; its report is still written.
TEST(LeakCheckTriggerTest, RunKeepsTheProgramsFailingStatusWhenItAlsoLeaks) {
  std::string root = TempRoot(), out;
  int status = Shell(std::string(HEAPGRAPH_CLI) + " run --text /dev/null --json " + root +
                         "/r.json -- " + kTree + " 0 5 2>&1",
                     &out);
  EXPECT_EQ(status, 5) << out;
  EXPECT_NE(SummaryLine(out).find("1 of 1 recorded process checked, 1 with leaks"),
            std::string::npos)
      << out;
  std::filesystem::remove_all(root);
}

// The at-exit check scans the exiting thread's stack from where exit() was called: copies of a
// leaked block's address in the dead frames below main, which exit's and its handlers' frames
// cover with unwritten slots, keep nothing (before: the block was reported live).
// main returns (glibc's exit found on the stack) or calls exit() itself (the recorder's wrapper
// notes its caller, heap/runtime/ExitCaller): either way the check scans from exit's caller.
TEST(LeakCheckTriggerTest, AtExitCheckIgnoresStaleCopiesBelowMain) {
  for (const char* mode : {"stale", "stale-exit"}) {
    std::string root = TempRoot(), out;
    std::string json_path = root + "/report.json";
    int status = Shell(std::string(HEAPGRAPH_CLI) + " run --text /dev/null --json " + json_path +
                           " -- " + kChild + " " + mode,
                       &out);
    EXPECT_EQ(status, 23) << mode << ": " << out;
    std::ifstream file(json_path);
    nlohmann::json json = nlohmann::json::parse(file);
    EXPECT_EQ(json["summary"]["direct_blocks"].get<int>(), 1) << mode;
    EXPECT_EQ(json["leaks"][0]["size"].get<int>(), 300) << mode;
    std::filesystem::remove_all(root);
  }
}

}  // namespace

namespace {

// --start-only: a block kept only by a pointer into its middle is then a leak (464 bytes, besides
// the trap program's 272-byte control leak); by default it is not.
TEST(LeakCheckTriggerTest, StartOnlyModeReportsBlocksKeptOnlyByInteriorPointers) {
  std::string root = TempRoot(), out;
  std::string traps = std::string(HEAPGRAPH_PROGRAM_DIR) + "/leak_traps interior";
  auto direct_bytes = [&](const std::string& flags) {
    std::string json_path = root + "/report.json";
    Shell(std::string(HEAPGRAPH_CLI) + " run " + flags + " --text /dev/null --json " + json_path +
              " -- " + traps,
          &out);
    std::ifstream file(json_path);
    return nlohmann::json::parse(file)["summary"]["direct_bytes"].get<int>();
  };
  EXPECT_EQ(direct_bytes(""), 272);
  EXPECT_EQ(direct_bytes("--start-only"), 272 + 464);
  std::filesystem::remove_all(root);
}

}  // namespace

// A sampled recording lacks most live blocks: a leak check would call their targets leaks. Every
// way in refuses with one line, before stopping any thread.
const char kRefusal[] =
    "leak check needs full recording; this process records a sample (sample=512K)";

TEST(LeakCheckTriggerTest, ApiCheckRefusesASampledRecording) {
  std::string root = TempRoot(), out;
  int status = Shell("HEAPGRAPH_OPTIONS=dir=" + root + ",sample=1 " + kChild + " api", &out);
  EXPECT_EQ(status, 1) << out;
  EXPECT_EQ(out, std::string("failed ") + kRefusal + kRefusal + "\n");
  std::filesystem::remove_all(root);
}

TEST(LeakCheckTriggerTest, RunRefusesASampledRecordingWithOneLine) {
  std::string root = TempRoot(), out;
  int status = Shell(std::string(HEAPGRAPH_CLI) + " run --options sample=1 --dir " + root + " -- " +
                         kChild + " leaky 2>&1 >/dev/null",
                     &out);
  EXPECT_EQ(status, 24) << "--error-exitcode's default: the check could not run\n" << out;
  EXPECT_EQ(out.rfind(std::string("heapgraph: ") + kRefusal + "\n", 0), 0u) << out;
  EXPECT_NE(SummaryLine(out).find(": the check could not run"), std::string::npos) << out;
  std::filesystem::remove_all(root);
}

// Issue 12, item 5: a check that could not run is never success. /bin/true exits 0; the at-exit
// check runs inside it (the preload) and replaces that status.
TEST(LeakCheckTriggerTest, RunExitsWithTheErrorStatusWhenTheCheckCannotRun) {
  std::string root = TempRoot(), out;
  // A libheapgraph.so without libheapgraph_scan.so beside it: the check cannot be loaded.
  std::string lonely = root + "/lonely";
  std::filesystem::create_directory(lonely);
  std::filesystem::copy_file(HEAPGRAPH_PRELOAD, lonely + "/libheapgraph.so");
  int status = Shell(std::string(HEAPGRAPH_CLI) + " run --preload " + lonely +
                         "/libheapgraph.so --dir " + root + " -- /bin/true 2>&1",
                     &out);
  EXPECT_EQ(status, 24) << out;
  EXPECT_EQ(out.rfind("heapgraph: cannot load ", 0), 0u) << out;
  // One line says why, then the run summary.
  std::string second = out.substr(out.find('\n') + 1);
  EXPECT_EQ(second.rfind("heapgraph: run summary: 1 of 1 recorded process checked, 0 with leaks; "
                         "pid ",
                         0),
            0u)
      << out;
  EXPECT_EQ(second.find('\n'), second.size() - 1) << "two lines: " << out;
  // --error-exitcode chooses the status; the sampled refusal is the same kind of failure.
  status = Shell(std::string(HEAPGRAPH_CLI) + " run --error-exitcode 99 --options sample=1 --dir " +
                     root + " -- /bin/true 2>/dev/null",
                 &out);
  EXPECT_EQ(status, 99);
  std::filesystem::remove_all(root);
}
