// `heapgraph report` symbolizing offline (issue 15, item 4): a program is recorded stripped (its
// functions are in no .dynsym: tests/programs/LeakPrograms.cmake, leak_direct_local), then its
// leak report is rendered with the separate debug file objcopy kept: from --debug-dir in the
// build-id and the flat layout, from a debuginfod server, refused when of another build; without
// one the frames print module+offset+build-id.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "report/DebugFileSearch.h"
#include "tests/FileText.h"
#include "tests/ShellCommand.h"
#include "tests/TempDir.h"

extern char** environ;

namespace heapgraph {
namespace {

namespace fs = std::filesystem;

struct Rendered {
  int status = -1;
  std::string out;
  std::string err;
};

class ReportCommandTest : public ::testing::Test {
 protected:
  // One recording for the suite: <temp>/app is the stripped copy that ran, <temp>/kept/app.debug
  // its debug file (not beside it, where libdwfl would find it by name while recording),
  // <temp>/leak.json the report.
  static void SetUpTestSuite() {
    temp_ = new TempDir();
    app_ = temp_->Path("app");
    debug_ = temp_->Path("kept/app.debug");
    fs::create_directories(temp_->Path("kept"));
    std::string program = std::string(HEAPGRAPH_PROGRAM_DIR) + "/leak_direct_local";
    std::string out;
    ASSERT_EQ(
        shell::RunShellCommand("cp " + program + " " + app_ + " && objcopy --only-keep-debug " +
                                   app_ + " " + debug_ + " && strip --strip-all " + app_,
                               &out),
        0);
    build_id_ = report::ElfBuildId(app_);
    ASSERT_FALSE(build_id_.empty());
    ASSERT_EQ(report::ElfBuildId(debug_), build_id_);
    json_ = temp_->Path("leak.json");
    int status = shell::RunShellCommand(std::string("env -u DEBUGINFOD_URLS ") + HEAPGRAPH_CLI +
                                            " run --json " + json_ + " --text /dev/null -- " +
                                            app_ + " malloc 2>&1",
                                        &out);
    ASSERT_EQ(status, 23) << out;  // leaks found
  }
  static void TearDownTestSuite() {
    delete temp_;
    temp_ = nullptr;
  }

  // `heapgraph report leak.json ARGS`, without debuginfod unless `env` sets it.
  static Rendered Report(const std::string& args, const std::string& env = "-u DEBUGINFOD_URLS") {
    Rendered r;
    std::string err = temp_->Path("stderr");
    r.status = shell::RunShellCommand(
        "env " + env + " " + HEAPGRAPH_CLI + " report " + json_ + " " + args + " 2>" + err, &r.out);
    r.err = ReadFile(err);
    return r;
  }
  static std::string Mkdir(const std::string& name) {
    fs::create_directories(temp_->Path(name));
    return temp_->Path(name);
  }
  // The leaking function with its source line, as the text report's stack shows it.
  static bool Named(const std::string& text) {
    return text.find(" in LeakMalloc ") != std::string::npos &&
           text.find("leak_direct.cc:") != std::string::npos;
  }
  static std::string Unnamed() { return ") (build-id " + build_id_ + ")\n"; }

  static TempDir* temp_;
  static std::string app_, debug_, json_, build_id_;
};

TempDir* ReportCommandTest::temp_ = nullptr;
std::string ReportCommandTest::app_, ReportCommandTest::debug_, ReportCommandTest::json_,
    ReportCommandTest::build_id_;

TEST_F(ReportCommandTest, WithoutDebugFilesUnnamedFramesPrintModuleOffsetAndBuildId) {
  Rendered r = Report("");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Named(r.out)) << r.out;
  EXPECT_NE(r.out.find(" (app+0x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(Unnamed()), std::string::npos) << r.out;
  std::string html = temp_->Path("unnamed.html");
  ASSERT_EQ(Report("--html " + html).status, 0);
  EXPECT_NE(ReadFile(html).find("(build-id " + build_id_ + ")"), std::string::npos);
}

TEST_F(ReportCommandTest, ADebugDirInTheBuildIdLayoutNamesTheLeak) {
  std::string dir = Mkdir("by-id");
  fs::create_directories(dir + "/.build-id/" + build_id_.substr(0, 2));
  fs::copy_file(
      debug_, dir + "/.build-id/" + build_id_.substr(0, 2) + "/" + build_id_.substr(2) + ".debug");
  std::string html = temp_->Path("named.html");
  Rendered r = Report("--text --html " + html + " --debug-dir " + dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(Named(r.out)) << r.out;
  EXPECT_NE(ReadFile(html).find("LeakMalloc"), std::string::npos);
}

TEST_F(ReportCommandTest, AFlatDebugDirNamesTheLeakByTheModulesName) {
  std::string dir = Mkdir("flat");
  fs::copy_file(debug_, dir + "/app.debug");
  Rendered r = Report("--debug-dir " + dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Named(r.out)) << r.out;
}

TEST_F(ReportCommandTest, ADebugFileOfAnotherBuildLendsNoNames) {
  std::string dir = Mkdir("other");
  std::string out;
  ASSERT_EQ(
      shell::RunShellCommand("objcopy --only-keep-debug " + std::string(HEAPGRAPH_PROGRAM_DIR) +
                                 "/leak_direct " + dir + "/app.debug",
                             &out),
      0);
  ASSERT_NE(report::ElfBuildId(dir + "/app.debug"), build_id_);
  Rendered r = Report("--debug-dir " + dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Named(r.out)) << r.out;
  EXPECT_NE(r.out.find(Unnamed()), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("heapgraph: warning: " + dir + "/app.debug: build-id "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(": its symbols are not used\n"), std::string::npos) << r.err;
}

TEST_F(ReportCommandTest, AMissingDebugDirIsOneLineAndRenderingGoesOn) {
  Rendered r = Report("--debug-dir " + temp_->Path("missing"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err,
            "heapgraph: warning: --debug-dir " + temp_->Path("missing") + ": no such directory\n");
  EXPECT_NE(r.out.find(Unnamed()), std::string::npos) << r.out;
}

// A debuginfod server: python3's http.server on a directory laid out as debuginfod serves
// (/buildid/<id>/debuginfo), on a free port of 127.0.0.1.
class DebuginfodServer {
 public:
  explicit DebuginfodServer(const std::string& root, const std::string& log) {
    std::vector<std::string> args{"python3", "-u",        "-m",          "http.server", "0",
                                  "--bind",  "127.0.0.1", "--directory", root};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawnp(&pid_, "python3", &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    // "Serving HTTP on 127.0.0.1 port N (...)": python may take seconds to start on a busy machine.
    for (int tries = 0; pid_ > 0 && port_.empty() && tries < 1200; ++tries) {
      std::string text = ReadFile(log);
      size_t at = text.find(" port ");
      if (at != std::string::npos && text.find(' ', at + 6) != std::string::npos) {
        port_ = text.substr(at + 6, text.find(' ', at + 6) - at - 6);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }
  ~DebuginfodServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string url() const { return port_.empty() ? "" : "http://127.0.0.1:" + port_; }

 private:
  pid_t pid_ = -1;
  std::string port_;
};

TEST_F(ReportCommandTest, ADebuginfodServerNamesTheLeak) {
  if (!report::DebugFileSearch::DebuginfodAvailable()) {
    GTEST_SKIP() << "heapgraph was built without libdebuginfod (Debian: libdebuginfod-dev)";
  }
  std::string out;
  if (shell::RunShellCommand("python3 -c pass 2>&1", &out) != 0) {
    GTEST_SKIP() << "no python3 to serve as a debuginfod server";
  }
  std::string root = Mkdir("debuginfod");
  fs::create_directories(root + "/buildid/" + build_id_);
  fs::copy_file(debug_, root + "/buildid/" + build_id_ + "/debuginfo");
  DebuginfodServer server(root, temp_->Path("http.log"));
  ASSERT_NE(server.url(), "") << ReadFile(temp_->Path("http.log"));
  std::string env = "DEBUGINFOD_URLS=" + server.url() + " DEBUGINFOD_CACHE_PATH=";
  // The stripped program still where it ran: libdwfl asks the server for its debug info.
  Rendered r = Report("", env + temp_->Path("cache1"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Named(r.out)) << r.out;
  // Rendered elsewhere, without the program: heapgraph asks the server by build-id.
  fs::rename(app_, app_ + ".away");
  r = Report("", env + temp_->Path("cache2"));
  fs::rename(app_ + ".away", app_);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Named(r.out)) << r.out;
  EXPECT_NE(ReadFile(temp_->Path("http.log")).find("GET /buildid/" + build_id_ + "/debuginfo"),
            std::string::npos);
}

}  // namespace
}  // namespace heapgraph
