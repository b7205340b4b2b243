// The HTML reports in a real browser (issue 15 item 5): the demo's leak report (`heapgraph run
// --html` on examples/demo_app: plain leaks and two typed retain cycles) and the FOOM report of a
// program killed with SIGKILL while its ledger grew (`heapgraph foom --html`), each loaded by
// headless Chromium (`--dump-dom`: the DOM after the page's script ran). Checked: the leak groups,
// the cycle pictures (inline `<svg>` naming the members' types), the FOOM verdict, categories and
// flame graph, nothing fetched from the network, and no console message (an uncaught script error
// is one).
// Skipped, with the reason, where no browser is installed; the README's test command installs
// Debian's chromium. HEAPGRAPH_BROWSER names another Chromium-compatible binary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/ChildProcess.h"
#include "tests/FileText.h"

namespace heapgraph::proctest {
namespace {

using std::chrono::milliseconds;

// The browser to use: $HEAPGRAPH_BROWSER, else the first of Debian's names found on PATH.
std::string FindBrowser() {
  if (const char* named = getenv("HEAPGRAPH_BROWSER"); named != nullptr && named[0] != '\0') {
    return named;
  }
  const char* path = getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      std::filesystem::path candidate =
          std::filesystem::path(dirs.substr(start, end - start)) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
      start = end + 1;
    }
  }
  return "";
}

struct LoadedPage {
  std::string dom;                   // the serialized DOM after the page's script ran
  std::vector<std::string> console;  // the browser's console lines
};

// Loads `page` in the headless browser and returns its DOM and console lines. The profile lives
// in `scratch`; `--no-sandbox` because the suite runs as root on CI.
LoadedPage Load(const std::string& browser, const std::string& page, const std::string& scratch) {
  RunResult run = RunToExit(browser,
                            {"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--user-data-dir=" + scratch + "/profile", "--enable-logging=stderr",
                             "--v=0", "--dump-dom", "file://" + page},
                            {"HOME=" + scratch}, milliseconds(180000));
  EXPECT_TRUE(ExitedZero(run)) << run.stderr_text;
  LoadedPage loaded;
  for (const std::string& line : run.lines) loaded.dom += line + "\n";
  for (const std::string& line : run.stderr_lines) {
    if (line.find(":CONSOLE") != std::string::npos) loaded.console.push_back(line);
  }
  return loaded;
}

// Nothing on the page refers to the network (an attachment opens offline): no script, style,
// image or font from a URL. SVG's namespace declarations are names, not fetches.
void ExpectSelfContained(const std::string& html) {
  for (const char* fetch : {"src=\"http", "href=\"http", "url(http", "@import", "<link "}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
}

class ReportPagesBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    browser_ = FindBrowser();
    if (browser_.empty()) {
      GTEST_SKIP()
          << "no headless browser (chromium) installed; `apt-get install chromium`, or set "
             "HEAPGRAPH_BROWSER";
    }
  }
  // Runs `heapgraph ARGS` (which writes `page`), checks the page is self-contained, loads it and
  // expects no console message; the DOM after the page's script ran.
  std::string RenderAndLoad(const std::vector<std::string>& args, const std::string& page) {
    RunResult run = RunToExit(HEAPGRAPH_CLI, args, {}, milliseconds(180000));
    EXPECT_TRUE(ExitedZero(run)) << run.stderr_text;
    std::string html = ReadFile(page);
    EXPECT_FALSE(html.empty()) << run.stderr_text;
    ExpectSelfContained(html);
    LoadedPage loaded = Load(browser_, page, root_.path());
    EXPECT_EQ(loaded.console, std::vector<std::string>{}) << "no console message, no script error";
    return loaded.dom;
  }

  std::string browser_;
  TempRoot root_;
};

TEST_F(ReportPagesBrowserTest, DemoLeakPageShowsItsGroupsAndDrawsBothCycles) {
  std::string page = root_.path() + "/demo-leaks.html";
  std::string dom = RenderAndLoad({"run", "--exitcode", "0", "--html", page, "--json",
                                   root_.path() + "/demo.json", "--", HEAPGRAPH_DEMO_APP},
                                  page);
  EXPECT_NE(dom.find("heapgraph leak report"), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("Direct leaks"), std::string::npos);
  EXPECT_GE(CountOf(dom, "class=\"group\""), 5u) << "avatars, chain, contact, indicator";
  EXPECT_NE(dom.find("CacheAvatar"), std::string::npos);
  EXPECT_NE(dom.find("BuildLeakedChain"), std::string::npos);
  // One picture per cycle, each naming its members' types and the edges' fields.
  EXPECT_EQ(CountOf(dom, "<svg"), 2u);
  size_t first = dom.find("<svg");
  ASSERT_NE(first, std::string::npos);
  std::string pictures = dom.substr(first);
  for (const char* name : {"Contact", "Conversation", "peer", "TypingIndicator", "on_timeout"}) {
    EXPECT_NE(pictures.find(name), std::string::npos) << name;
  }
  EXPECT_NE(dom.find("shared_ptr"), std::string::npos);
  EXPECT_NE(dom.find("function-self"), std::string::npos);
}

TEST_F(ReportPagesBrowserTest, FoomPageOfAKilledProgramShowsItsVerdictAndWhatHeldTheMemory) {
  ChildProcess child(ProgramPath("hg_foom"), {"grow", "20000"},
                     RecordingEnv(root_.path(),
                                  "memory_limit=40M,watch_interval_ms=10,"
                                  "watermarks=10/20/30/40/50"));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  std::this_thread::sleep_for(milliseconds(300));
  child.Kill(SIGKILL);
  child.Wait();
  std::string page = root_.path() + "/foom.html";
  std::string dom = RenderAndLoad({"foom", root_.DirectoryOf(child.pid()), "--html", page}, page);
  EXPECT_NE(dom.find("heapgraph FOOM report"), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("likely_oom_kill"), std::string::npos) << dom.substr(0, 4000);
  EXPECT_NE(dom.find("Malloc 1000 B"), std::string::npos);
  EXPECT_NE(dom.find("GrowLedger"), std::string::npos);
  EXPECT_NE(dom.find("<svg class=\"flame\""), std::string::npos) << "the top stacks' flame graph";
}

}  // namespace
}  // namespace heapgraph::proctest
