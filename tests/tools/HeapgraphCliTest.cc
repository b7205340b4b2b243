// Runs the built `heapgraph` binary (HEAPGRAPH_CLI) on synthetic recording directories.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/ShellCommand.h"
#include "tests/reader/SyntheticLagFile.h"
#include "tests/reader/SyntheticRecording.h"

extern char** environ;

namespace heapgraph {
namespace {

using format::AllocFunction;
using synthetic::Files;
using synthetic::Patch;
using synthetic::SyntheticRecording;

struct RunResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Waits for `pid`, killing it after kHangSeconds: a reader that hangs on a hostile file fails its
// test (as "killed by SIGKILL") instead of hanging the suite. Not a timing assertion: a correct run
// takes well under a second.
constexpr int kHangSeconds = 120;

int WaitBounded(pid_t pid) {
  int status = 0;
  for (int tick = 0; waitpid(pid, &status, WNOHANG) == 0; ++tick) {
    if (tick == kHangSeconds * 20) kill(pid, SIGKILL);
    usleep(50 * 1000);
  }
  return status;
}

class HeapgraphCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/cli-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    SyntheticRecording rec;
    uint32_t stack = rec.AddStack({0x7f0000001234, 0x555500001000});
    rec.AddModule("/nonexistent/libfoo.so", 0x7f0000000000, 0x7f0000000000, 0x7f0000010000,
                  {0xab, 0xcd, 0x01, 0x02});
    rec.AddModule("/nonexistent/app", 0x555500000000, 0x555500000000, 0x555500010000, {});
    for (uint64_t a = 0x1000; a < 0x4000; a += 0x1000) {
      rec.AddBlock(TreeKind::kHeap, a, 48, AllocFunction::kMalloc, stack);
    }
    rec.AddBlock(TreeKind::kHeap, 0x5000, 100, AllocFunction::kMalloc, 0);
    rec.AddBlock(TreeKind::kVm, 0x7e0000000000, 8 << 20, AllocFunction::kMmap, stack);
    rec.SetSession(777, "/nonexistent/app");
    files_ = rec.Build();
    good_ = WriteDir("good", files_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::string WriteDir(const std::string& name, const Files& files) {
    std::string dir = root_ + "/" + name;
    std::filesystem::create_directory(dir);
    synthetic::WriteFiles(dir, files);
    return dir;
  }

  // Runs HEAPGRAPH_CLI with `args`, capturing stdout and stderr through files.
  RunResult Run(const std::vector<std::string>& args) {
    std::string out = root_ + "/stdout", err = root_ + "/stderr";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> all = {HEAPGRAPH_CLI};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid;
    RunResult result;
    int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) return result;
    result.exit_code = -1;
    int status = WaitBounded(pid);
    result.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    result.out = ReadWholeFile(out);
    result.err = ReadWholeFile(err);
    return result;
  }

  // A harmless library to preload in place of libheapgraph.so: the C library itself.
  static std::string HarmlessPreload() {
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(&fclose), &info);
    return info.dli_fname != nullptr ? info.dli_fname : "";
  }

  // `heapgraph record` of /bin/sh running `script`; the script stands in for the recorder.
  RunResult Record(const std::string& script, std::vector<std::string> extra = {}) {
    std::filesystem::create_directory(root_ + "/records");
    std::vector<std::string> args = {"record", "--preload",        HarmlessPreload(),
                                     "--dir",  root_ + "/records", "--no-symbols"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "/bin/sh", "-c", script});
    return Run(args);
  }

  // Shell code that copies the good recording where the recorder would have put it.
  std::string FakeRecorder() const {
    return "opts=${HEAPGRAPH_OPTIONS#dir=}; cp -r " + good_ + " \"${opts%%,*}/$$-12345\"";
  }

  std::string root_;
  Files files_;
  std::string good_;
};

TEST_F(HeapgraphCliTest, DumpPrintsSummaryAndGroups) {
  RunResult r = Run({"dump", good_, "--no-symbols"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind(good_ + ": 5 live blocks, 8.00 MiB, 2 unique stacks, 0 torn, 0 dropped, "
                                "2 modules (pid 777, /nonexistent/app, exited)\n",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("\n#1 1 block, 8.00 MiB, VM: anonymous (stack 2)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n#2 3 blocks, 144 B, Malloc 48 B (stack 2)\n"), std::string::npos);
  EXPECT_NE(r.out.find("\n    #0 0x7f0000001234 libfoo.so+0x1234 (build-id abcd0102)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n    #1 0x555500001000 app+0x1000\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n#3 1 block, 100 B, Malloc 100 B (stack 0)\n    (no stack captured)\n"),
            std::string::npos)
      << r.out;
}

TEST_F(HeapgraphCliTest, DumpWithSymbolizationOfMissingFilesStillWorks) {
  RunResult r = Run({"dump", good_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("libfoo.so+0x1234"), std::string::npos);
}

TEST_F(HeapgraphCliTest, DumpTopLimitsGroups) {
  RunResult r = Run({"dump", good_, "--top", "1", "--no-symbols"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("#2 "), std::string::npos);
  EXPECT_NE(r.out.find("... 2 more groups"), std::string::npos) << r.out;
}

TEST_F(HeapgraphCliTest, DumpJson) {
  RunResult r = Run({"dump", good_, "--json", "--no-symbols"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["summary"]["live_blocks"], 5);
  EXPECT_EQ(doc["summary"]["live_bytes"], 144 + 100 + (8 << 20));
  EXPECT_EQ(doc["summary"]["unique_stacks"], 2);
  EXPECT_EQ(doc["session"]["pid"], 777);
  ASSERT_EQ(doc["groups"].size(), 3u);
  EXPECT_EQ(doc["groups"][0]["category"], "VM: anonymous");
  EXPECT_EQ(doc["groups"][1]["count"], 3);
  const nlohmann::json& frame = doc["groups"][1]["frames"][0];
  EXPECT_EQ(frame["address"], 0x7f0000001234ull);
  EXPECT_EQ(frame["module"], "/nonexistent/libfoo.so");
  EXPECT_EQ(frame["offset"], 0x1234);
  EXPECT_EQ(frame["build_id"], "abcd0102");
}

// A module path and an executable that are not UTF-8 (file names are bytes) are printed with
// U+FFFD in place of the bad bytes: a valid document, not an error.
TEST_F(HeapgraphCliTest, DumpJsonReplacesBytesThatAreNotUtf8) {
  SyntheticRecording rec;
  uint32_t stack = rec.AddStack({0x7f0000001234});
  rec.AddModule("/nonexistent/lib\xff\xfe.so", 0x7f0000000000, 0x7f0000000000, 0x7f0000010000, {});
  rec.AddBlock(TreeKind::kHeap, 0x1000, 48, AllocFunction::kMalloc, stack);
  rec.SetSession(778, "/nonexistent/app\xc3");
  std::string dir = WriteDir("latin1", rec.Build());
  RunResult r = Run({"dump", dir, "--json", "--no-symbols"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["groups"][0]["frames"][0]["module"], "/nonexistent/lib\uFFFD\uFFFD.so");
  EXPECT_EQ(doc["session"]["executable"], "/nonexistent/app\uFFFD");
  RunResult text = Run({"dump", dir, "--no-symbols"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
}

TEST_F(HeapgraphCliTest, CorruptRecordingExitsTwoWithOneLine) {
  Files files = files_;
  Patch(files, format::kStackFile, offsetof(format::FileHeader, version), uint32_t{7});
  RunResult r = Run({"dump", WriteDir("bad-version", files)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "heapgraph: stacks: unsupported format version 7 (this reader knows 1)\n");

  files = files_;
  Patch(files, format::kStackFile, SyntheticRecording::SlotOffset(2),
        SyntheticRecording::EncodeNode(2, 1, 0));
  r = Run({"dump", WriteDir("cycle", files), "--no-symbols"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("heapgraph: stacks: corrupt node 2 (", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;

  files = files_;
  files[format::kHeapTreeFile].resize(100);
  r = Run({"dump", WriteDir("truncated", files)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "heapgraph: heap.tree: truncated (file is 100 bytes, header needs 4096)\n");
}

TEST_F(HeapgraphCliTest, MissingDirectoryAndUsageErrorsExitTwo) {
  RunResult r = Run({"dump", root_ + "/nothing-here"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("heapgraph: " + root_ + "/nothing-here: ", 0), 0u) << r.err;
  EXPECT_EQ(Run({}).exit_code, 2);
  EXPECT_EQ(Run({"dump"}).exit_code, 2);
  EXPECT_EQ(Run({"--help"}).exit_code, 0);
}

TEST_F(HeapgraphCliTest, FoomReportsADumpAndItsLatestRun) {
  RunResult r = Run({"foom", good_, "--no-symbols"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("FOOM report: " + good_), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exit: clean_exit"), std::string::npos) << r.out;  // a v1 "exited" session
  r = Run({"foom", "--root", root_, "--record", "--no-symbols"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json record = nlohmann::json::parse(r.out);
  EXPECT_EQ(record["directory"], good_);
  EXPECT_EQ(record["pid"], 777);
  r = Run({"foom", good_, "--json", "--no-symbols", "--top-categories", "1", "--top-stacks", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["format"], "heapgraph-foom-report");
  EXPECT_LE(doc["categories"][0]["stacks"].size(), 1u);
}

// `heapgraph report`: a saved FOOM report rendered again (text, HTML written 0600), and bad
// input (not JSON, not a report, truncated, an unknown version) as one line with status 2.
TEST_F(HeapgraphCliTest, ReportRendersASavedReportAndRefusesBadOnes) {
  RunResult r = Run({"foom", good_, "--json", "--no-symbols"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string json = root_ + "/foom.json";
  std::ofstream(json) << r.out;
  std::string text = Run({"foom", good_, "--no-symbols"}).out;
  r = Run({"report", json});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, text);  // the same text as from the recording
  std::string html = root_ + "/foom.html";
  r = Run({"report", json, "--html", html});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  struct stat st {};
  ASSERT_EQ(stat(html.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(ReadWholeFile(html).find("heapgraph FOOM report"), std::string::npos);
  r = Run({"report", json, "--sarif", root_ + "/foom.sarif"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "heapgraph: --sarif: only a leak report has SARIF results\n");

  std::string bad = root_ + "/bad.json";
  std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not JSON (error at byte 2)"},
      {"{\"format\": \"heapgraph-foom-report\"", "not a whole JSON document (truncated?)"},
      {"{\"format\": \"elsewhere\"}", "not a heapgraph report (unknown \"format\")"},
      {"{\"format\": \"heapgraph-foom-report\", \"version\": 9}",
       "heapgraph-foom-report version 9 is not supported (this heapgraph reads 1 to 1)"}};
  for (const auto& [content, error] : cases) {
    std::ofstream(bad, std::ios::trunc) << content;
    r = Run({"report", bad});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "heapgraph: " + bad + ": " + error + "\n");
  }
  r = Run({"report", root_ + "/missing.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "heapgraph: " + root_ + "/missing.json: no such file\n");
}

TEST_F(HeapgraphCliTest, FoomErrorsExitTwoWithOneLine) {
  Files files = files_;
  files[format::kExitFile] = "heapgraph-exit 1\nkind nonsense\n";
  RunResult r = Run({"foom", WriteDir("bad-exit", files)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "heapgraph: exit: missing or unknown kind\n");
  std::string rules = root_ + "/rules";
  std::ofstream(rules) << "count * lots\n";
  r = Run({"foom", good_, "--rules", rules});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("heapgraph: " + rules + ": rules:1: bad threshold", 0), 0u) << r.err;
  EXPECT_EQ(Run({"foom"}).exit_code, 2);
  EXPECT_EQ(Run({"foom", good_, "--root", root_}).exit_code, 2);
  r = Run({"foom", "--root", root_ + "/nothing-here"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST_F(HeapgraphCliTest, LagReportsTheLagFileAndErrorsExitTwoWithOneLine) {
  RunResult r = Run({"lag", good_, "--no-symbols"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no lag file: the lag monitor did not run"), std::string::npos) << r.out;
  Files files = files_;
  std::string torn = lagfile::LagRecordBytes(format::kLagLong, 3, 0).substr(0, 64);
  files[format::kLagFile] = lagfile::LagHeaderBytes() +
                            lagfile::LagRecordBytes(format::kLagLong, 2, 0) +
                            lagfile::LagRecordBytes(format::kLagEnded, 2, 0) + torn;
  std::string dir = WriteDir("lagged", files);
  r = Run({"lag", dir, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["format"], "heapgraph-lag-report");
  EXPECT_EQ(doc["torn"], true);
  ASSERT_EQ(doc["lags"].size(), 1u);
  EXPECT_EQ(doc["lags"][0]["ended"], true);
  r = Run({"lag", dir});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("lag 1 (long unit): thread 42, unit 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("torn: the last record was torn"), std::string::npos) << r.out;
  files[format::kLagFile] = "XXXXXXXX" + lagfile::LagHeaderBytes().substr(8);
  r = Run({"lag", WriteDir("bad-lag", files)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "heapgraph: lag: not a heapgraph lag file (bad magic)\n");
  EXPECT_EQ(Run({"lag"}).exit_code, 2);
}

TEST_F(HeapgraphCliTest, MissingSessionIsAWarningOnly) {
  Files files = files_;
  files.erase(format::kSessionFile);
  RunResult r = Run({"dump", WriteDir("no-session", files), "--no-symbols"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "heapgraph: warning: session: missing\n");
}

TEST_F(HeapgraphCliTest, RecordPassesExitStatusAndDumps) {
  RunResult r = Record(FakeRecorder() + "; exit 3");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find(": 5 live blocks, 8.00 MiB"), std::string::npos) << r.out << r.err;
}

TEST_F(HeapgraphCliTest, RecordReportsSignalAs128Plus) {
  RunResult r = Record(FakeRecorder() + "; kill -9 $$");
  EXPECT_EQ(r.exit_code, 128 + 9) << r.err;
  EXPECT_NE(r.out.find(": 5 live blocks"), std::string::npos);
}

TEST_F(HeapgraphCliTest, RecordSetsEnvironment) {
  std::string env_file = root_ + "/env";
  RunResult r = Record(FakeRecorder() + "; echo \"$HEAPGRAPH_OPTIONS|$LD_PRELOAD\" > " + env_file,
                       {"--options", "depth=8"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadWholeFile(env_file), "dir=" + root_ + "/records,depth=8|" +
                                         std::filesystem::canonical(HarmlessPreload()).string() +
                                         "\n");
}

TEST_F(HeapgraphCliTest, RecordWithoutRecordingExitsTwo) {
  RunResult r = Record("exit 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no recording directory for pid"), std::string::npos) << r.err;
}

// Issue 12, item 5: a program that exits 0 without ever loading the recorder (here the preload is
// plain libc) was not checked: one line and --error-exitcode, never 0.
TEST_F(HeapgraphCliTest, RunWithoutARecordingIsNotSuccess) {
  std::filesystem::create_directory(root_ + "/runs");
  RunResult r = Run({"run", "--preload", HarmlessPreload(), "--dir", root_ + "/runs", "--",
                     "/bin/sh", "-c", "exit 0"});
  EXPECT_EQ(r.exit_code, 24) << r.err;
  EXPECT_EQ(r.err.rfind("heapgraph: no leak check ran: no recording directory for pid ", 0), 0u)
      << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  r = Run({"run", "--preload", HarmlessPreload(), "--dir", root_ + "/runs", "--", "/bin/sh", "-c",
           "kill -9 $$"});
  EXPECT_EQ(r.exit_code, 128 + 9) << "a signal's status stands";
}

TEST_F(HeapgraphCliTest, RecordOfMissingProgramExits127AndLeavesNoTemporaryRoot) {
  // Without --dir the root is a fresh mkdtemp under $TMPDIR; it must not be left behind empty.
  std::string tmp = root_ + "/tmp";
  std::filesystem::create_directory(tmp);
  const char* old = getenv("TMPDIR");
  std::string saved = old != nullptr ? old : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  RunResult r = Run({"record", "--preload", HarmlessPreload(), "--", root_ + "/no-such-program"});
  if (old != nullptr) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("cannot run"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(tmp));
}

// Issue 12, item 3: side files that are FIFOs, links to /dev/urandom or 2 GiB sparse files, and a
// module map naming a FIFO. Each gives one clear line, at once: the FOOM report goes on without
// the side file (a warning), an unreadable `exit` file fails the command (exit 2).
class HostileFilesTest : public HeapgraphCliTest {
 protected:
  // A copy of the good recording with `name` replaced by a FIFO, a link to /dev/urandom or a
  // 2 GiB sparse file.
  std::string WithFifo(const std::string& name) {
    std::string dir = WriteDir(name + "-fifo", files_);
    std::filesystem::remove(dir + "/" + name);
    EXPECT_EQ(mkfifo((dir + "/" + name).c_str(), 0600), 0);
    return dir;
  }
  std::string WithRandomLink(const std::string& name) {
    std::string dir = WriteDir(name + "-random", files_);
    std::filesystem::remove(dir + "/" + name);
    std::filesystem::create_symlink("/dev/urandom", dir + "/" + name);
    return dir;
  }
  std::string WithSparse(const std::string& name) {
    std::string dir = WriteDir(name + "-sparse", files_);
    std::ofstream(dir + "/" + name, std::ios::trunc).close();
    std::filesystem::resize_file(dir + "/" + name, uint64_t{2} << 30);
    return dir;
  }
  // `foom DIR` (with and without symbols unless `symbols_only`): exit 0, and `line` among the
  // report's warnings.
  void ExpectFoomWarning(const std::string& dir, const std::string& line,
                         bool symbols_only = false) {
    for (bool symbols : {true, false}) {
      if (!symbols && symbols_only) continue;
      std::vector<std::string> args = {"foom", dir};
      if (!symbols) args.push_back("--no-symbols");
      RunResult r = Run(args);
      EXPECT_EQ(r.exit_code, 0) << dir << "\n" << r.err;
      EXPECT_NE(r.out.find("\nwarning: " + line + "\n"), std::string::npos) << r.out;
    }
  }
  // `foom DIR` and `dump DIR`, with and without symbols: exit 2 with exactly `line` on stderr.
  void ExpectFailure(const std::string& dir, const std::string& line,
                     std::vector<std::string> commands) {
    for (const std::string& command : commands) {
      for (bool symbols : {false, true}) {
        std::vector<std::string> args = {command, dir};
        if (!symbols) args.push_back("--no-symbols");
        RunResult r = Run(args);
        EXPECT_EQ(r.exit_code, 2) << command << " " << dir;
        EXPECT_EQ(r.err, "heapgraph: " + line + "\n") << command << " " << dir;
      }
    }
  }
};

TEST_F(HostileFilesTest, PressureFileThatIsAFifoALinkOrHugeIsSkippedWithOneLine) {
  ExpectFoomWarning(WithFifo("pressure"),
                    "pressure: not a regular file (a FIFO, refused) (no time line)");
  ExpectFoomWarning(WithRandomLink("pressure"),
                    "pressure: is a symbolic link (refused) (no time line)");
  ExpectFoomWarning(WithSparse("pressure"),
                    "pressure: too large (2147483648 bytes, at most 268435456) (no time line)");
}

TEST_F(HostileFilesTest, TypesFileThatIsAFifoOrALinkIsSkippedWithOneLine) {
  const std::string instead = " (size categories used instead)";
  ExpectFoomWarning(WithFifo("types"), "types: not a regular file (a FIFO, refused)" + instead);
  ExpectFoomWarning(WithRandomLink("types"), "types: is a symbolic link (refused)" + instead);
}

TEST_F(HostileFilesTest, ExitFileThatIsAFifoALinkOrHugeFailsWithOneLine) {
  ExpectFailure(WithFifo("exit"), "exit: not a regular file (a FIFO, refused)", {"foom"});
  ExpectFailure(WithRandomLink("exit"), "exit: is a symbolic link (refused)", {"foom"});
  ExpectFailure(WithSparse("exit"), "exit: too large (2147483648 bytes, at most 65536)", {"foom"});
}

TEST_F(HostileFilesTest, RecordingFileThatIsAFifoALinkOrHugeFailsWithOneLine) {
  ExpectFailure(WithFifo("session"), "session: not a regular file (a FIFO, refused)",
                {"dump", "foom"});
  // --root skips the run whose session is a FIFO (so does the recorder's retention at start).
  RunResult r = Run({"foom", "--root", root_, "--record", "--no-symbols"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"pid\":777"), std::string::npos) << r.out;
  ExpectFailure(WithRandomLink("modules"), "modules: is a symbolic link (refused)",
                {"dump", "foom"});
  ExpectFailure(WithSparse("stacks"), "stacks: not a heapgraph file (bad magic)", {"dump", "foom"});
}

// The module map names a FIFO (a hostile recording, or a library replaced since): symbols are
// looked up in regular files only; the module's frames keep module + offset.
TEST_F(HostileFilesTest, ModuleMapNamingAFifoIsNotOpened) {
  std::string fifo = root_ + "/libfifo.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  SyntheticRecording rec;
  uint32_t stack = rec.AddStack({0x7f0000001234, 0x7f0000002345});
  rec.AddModule(fifo, 0x7f0000000000, 0x7f0000000000, 0x7f0000010000, {});
  rec.AddBlock(TreeKind::kHeap, 0x1000, 48, AllocFunction::kMalloc, stack);
  rec.SetSession(779, "/nonexistent/app");
  std::string dir = WriteDir("fifo-module", rec.Build());
  const std::string refused = fifo + ": not a regular file (a FIFO, refused)";
  RunResult r = Run({"dump", dir, "--no-symbols"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  r = Run({"dump", dir});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "heapgraph: warning: " + refused + "\n");
  EXPECT_NE(r.out.find("libfifo.so+0x1234"), std::string::npos) << r.out;
  r = Run({"foom", dir, "--no-symbols"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("libfifo.so+0x1234"), std::string::npos) << r.out;
  ExpectFoomWarning(dir, refused, /*symbols_only=*/true);
}

// Every `heapgraph` command used to load Graphviz and libdebuginfod (libcurl and 30 more
// libraries behind it), ≈ 7 ms before it did anything, though only `report --html` draws and only
// a search of debuginfod servers downloads (issue 14: `heapgraph run` of a short program). They are
// loaded when first needed (heap/platform/SharedLibrary), as elfutils is by the first command that
// reads symbols (scanner/types/ElfutilsLibrary); the loader's list of the command's libraries
// names none of them.
TEST(HeapgraphCliStartTest, LoadsNoLibraryThatOnlySomeCommandsNeed) {
  std::string libraries;
  ASSERT_EQ(shell::RunShellCommand("LD_TRACE_LOADED_OBJECTS=1 " HEAPGRAPH_CLI, &libraries), 0)
      << libraries;
  ASSERT_NE(libraries.find("libc.so"), std::string::npos) << libraries;
  for (const char* name :
       {"libgvc", "libcgraph", "libdebuginfod", "libcurl", "libcapstone", "libdw", "libelf"}) {
    EXPECT_EQ(libraries.find(name), std::string::npos) << name << " in\n" << libraries;
  }
}

}  // namespace
}  // namespace heapgraph
