// tests/check: a program that starts as root and drops to nobody (setresuid) can still be checked
// (issue 12, item 7): the report reads the recording through the recorder's open descriptors,
// never by the path of the 0700 directory; a signal check, which can no longer write its reports
// there, says so in one line and writes the text report to stderr. Needs root (skipped otherwise).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/ShellCommand.h"

namespace {

const std::string kDroppedProgram = std::string(HEAPGRAPH_PROGRAM_DIR) + "/leak_check_dropped";

TEST(LeakCheckDroppedPrivilegesTest, ChecksWorkAfterTheProgramDropsToNobody) {
  if (getuid() != 0) GTEST_SKIP() << "needs root, to drop privileges";
  char recordings[] = "/tmp/heapgraph-dropped-XXXXXX";
  char reports[] = "/tmp/heapgraph-dropped-reports-XXXXXX";
  ASSERT_NE(mkdtemp(recordings), nullptr);
  ASSERT_NE(mkdtemp(reports), nullptr);
  ASSERT_EQ(chmod(reports, 0777), 0);  // nobody writes the API check's report here
  std::string err = std::string(reports) + "/stderr", out;
  int status =
      heapgraph::shell::RunShellCommand(std::string("HEAPGRAPH_OPTIONS=dir=") + recordings + " " +
                                            kDroppedProgram + " " + reports + " 2>" + err,
                                        &out);
  std::ifstream err_file(err);
  std::stringstream stderr_text;
  stderr_text << err_file.rdbuf();
  ASSERT_EQ(status, 0) << out << stderr_text.str();
  EXPECT_EQ(out, "check 5 \n") << stderr_text.str();
  std::ifstream json_file(std::string(reports) + "/report.json");
  ASSERT_TRUE(json_file) << stderr_text.str();
  nlohmann::json json = nlohmann::json::parse(json_file);
  EXPECT_EQ(json["summary"]["direct_blocks"].get<int>(), 5);
  EXPECT_EQ(json["summary"]["direct_bytes"].get<int>(), 1000);
  EXPECT_NE(stderr_text.str().find("heapgraph: cannot write leak reports into the recording "
                                   "directory: Permission denied; the text report goes to stderr"),
            std::string::npos)
      << stderr_text.str();
  EXPECT_NE(stderr_text.str().find("SUMMARY: heapgraph: 1000 byte(s) leaked in 5 allocation(s)"),
            std::string::npos)
      << stderr_text.str();
  std::filesystem::remove_all(recordings);
  std::filesystem::remove_all(reports);
}

}  // namespace
