// HtmlPageWriter and option leak_html on a real program: the at-exit check of
// tests/programs/cycle_cxx (a leaked shared_ptr cycle) writes its report as a page (0600, one
// picture of the cycle naming cyc::Alpha and cyc::Beta, naming the saved JSON, no heap contents
// unless option leak_preview asks), "%p" expanded; a page that cannot be written is one line on
// stderr while the JSON and the verdict stand; and without libheapgraph_html.so beside the caller
// the writer says so in one line (this test binary has none beside it).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>

#include "check/HtmlPageWriter.h"
#include "tests/ChildProcess.h"
#include "tests/FileText.h"

namespace heapgraph::proctest {
namespace {

RunResult RunCycles(const std::string& root, const std::string& html,
                    const std::string& more = "") {
  return RunToExit(ProgramPath("cycle_cxx"), {"shared_leaked"},
                   RecordingEnv(root, "leak_check=1,leak_text=,leak_json=" + root +
                                          "/leaks-%p.json,leak_html=" + html + more));
}

TEST(HtmlPageWriterTest, AtExitCheckWritesThePageOfItsReport) {
  TempRoot root;
  RunResult run = RunCycles(root.path(), root.path() + "/leaks-%p.html");
  ASSERT_TRUE(run.status && WIFEXITED(*run.status)) << run.stderr_text;
  EXPECT_EQ(run.stderr_text, "");
  std::string page_path, json_path;
  for (const auto& entry : std::filesystem::directory_iterator(root.path())) {
    std::string name = entry.path().filename();
    if (name.ends_with(".html")) page_path = entry.path();
    if (name.ends_with(".json")) json_path = entry.path();
  }
  ASSERT_FALSE(page_path.empty()) << "%p expanded: leaks-<pid>.html";
  EXPECT_EQ(page_path.find('%'), std::string::npos);
  struct stat st {};
  ASSERT_EQ(stat(page_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string page = ReadFile(page_path);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(CountOf(page, "<svg"), 1u) << "one picture: the cycle";
  EXPECT_NE(page.find("cyc::Alpha"), std::string::npos);
  EXPECT_NE(page.find("cyc::Beta"), std::string::npos);
  EXPECT_NE(page.find(json_path), std::string::npos) << "the page names its JSON";
  EXPECT_EQ(page.find("First "), std::string::npos) << "no heap contents unless asked";
  EXPECT_EQ(ReadFile(json_path).find("\"preview\""), std::string::npos);
}

// Option leak_preview: the first bytes of the direct leak, in the JSON and on the page.
TEST(HtmlPageWriterTest, PreviewOnlyWhenAsked) {
  TempRoot root;
  RunResult run = RunCycles(root.path(), root.path() + "/page.html", ",leak_preview=16");
  ASSERT_TRUE(run.status && WIFEXITED(*run.status)) << run.stderr_text;
  std::string json;
  for (const auto& entry : std::filesystem::directory_iterator(root.path())) {
    if (entry.path().filename().string().ends_with(".json")) json = ReadFile(entry.path());
  }
  EXPECT_NE(json.find("\"preview\": \""), std::string::npos) << json.substr(0, 3000);
  EXPECT_NE(ReadFile(root.path() + "/page.html").find("First 16 bytes of"), std::string::npos);
}

TEST(HtmlPageWriterTest, APageThatCannotBeWrittenIsOneLineAndTheReportStands) {
  TempRoot root;
  RunResult run = RunCycles(root.path(), root.path() + "/missing/dir/page.html");
  ASSERT_TRUE(run.status && WIFEXITED(*run.status)) << run.stderr_text;
  ASSERT_EQ(run.stderr_lines.size(), 1u) << run.stderr_text;
  EXPECT_EQ(run.stderr_lines[0].rfind(
                "heapgraph: cannot write " + root.path() + "/missing/dir/page.html", 0),
            0u)
      << run.stderr_text;
  bool json = false;
  for (const auto& entry : std::filesystem::directory_iterator(root.path())) {
    json = json || entry.path().filename().string().ends_with(".json");
  }
  EXPECT_TRUE(json);
}

TEST(HtmlPageWriterTest, WithoutTheRendererBesideTheCallerItSaysSoInOneLine) {
  TempRoot root;
  std::string error;
  EXPECT_FALSE(report::HtmlPageWriter::Write("{}", "", root.path() + "/page.html", &error));
  EXPECT_EQ(error.rfind("cannot load the HTML renderer: ", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace heapgraph::proctest
