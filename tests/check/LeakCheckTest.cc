// tests/report: WriteLeakReportFiles, the leak check's last step, on a report large enough for the
// text to be written on a SideThread (1,000+ records; serial on one CPU): the files are exactly
// the serial order's, and a JSON write error is a warning that the text file lists.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "check/LeakCheck.h"
#include "report/LeakReportJson.h"
#include "report/LeakReportText.h"

namespace heapgraph::report {
namespace {

LeakReport ManyRecords(size_t records) {
  LeakReport report;
  FrameList shared;
  ReportFrame libc;
  libc.address = 0x7f0000001234;
  libc.module = "libc.so.6";
  libc.module_path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  libc.function = "__libc_start_main";
  shared.push_back(libc);
  for (size_t i = 0; i < records; ++i) {
    LeakRecord r;
    r.stack_id = static_cast<uint32_t>(i + 1);
    r.count = 1;
    r.size = r.block_size = r.retained_bytes = 32;
    r.type = "Malloc 32 B";
    ReportFrame f;
    f.address = 0x555500000000 + i;
    f.module = "program";
    f.module_path = "/bin/program";
    f.offset = i;
    f.function = "Leak" + std::to_string(i) + "()";
    f.file = "/src/leak.cc";
    f.line = static_cast<int>(i + 1);
    r.stack.push_back(f);
    r.stack.append(shared);
    r.examples = {0x600000 + 32 * i};
    report.leaks.push_back(std::move(r));
  }
  report.summary.direct_blocks = records;
  return report;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class LeakCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/heapgraph-leak-check-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(LeakCheckTest, BothFilesAreTheSerialOrdersFiles) {
  LeakReport report = ManyRecords(1500);
  LeakCheckOptions options;
  options.json_path = dir_ + "/leaks.json";
  options.text_path = dir_ + "/leaks.txt";
  WriteLeakReportFiles(options, report);
  EXPECT_TRUE(report.warnings.empty());
  EXPECT_EQ(Read(options.json_path), LeakReportJsonText(report) + "\n");
  EXPECT_EQ(Read(options.text_path),
            FormatLeakReportText(report, LeakCheckTextOptions(options, true)));
  EXPECT_NE(
      Read(options.text_path).find("Full report (every stack and block): " + options.json_path),
      std::string::npos);
}

TEST_F(LeakCheckTest, AJsonWriteErrorIsListedInTheTextFile) {
  LeakReport report = ManyRecords(1500);
  LeakCheckOptions options;
  options.json_path = dir_ + "/missing/leaks.json";
  options.text_path = dir_ + "/leaks.txt";
  WriteLeakReportFiles(options, report);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("cannot write " + options.json_path), std::string::npos);
  std::string text = Read(options.text_path);
  EXPECT_EQ(text, FormatLeakReportText(report, LeakCheckTextOptions(options, false)));
  EXPECT_NE(text.find("cannot write " + options.json_path), std::string::npos);
  EXPECT_EQ(text.find("Full report"), std::string::npos);  // the JSON was not written
}

TEST_F(LeakCheckTest, BothWriteErrorsAreWarningsJsonFirst) {
  LeakReport report = ManyRecords(1500);
  LeakCheckOptions options;
  options.json_path = dir_ + "/missing/leaks.json";
  options.text_path = dir_ + "/missing/leaks.txt";
  WriteLeakReportFiles(options, report);
  ASSERT_EQ(report.warnings.size(), 2u);
  EXPECT_NE(report.warnings[0].find("leaks.json"), std::string::npos);
  EXPECT_NE(report.warnings[1].find("leaks.txt"), std::string::npos);
}

TEST_F(LeakCheckTest, ASmallReportIsWrittenTheSameWay) {
  LeakReport report = ManyRecords(3);
  LeakCheckOptions options;
  options.json_path = dir_ + "/leaks.json";
  options.text_path = dir_ + "/leaks.txt";
  WriteLeakReportFiles(options, report);
  EXPECT_EQ(Read(options.json_path), LeakReportJsonText(report) + "\n");
  EXPECT_EQ(Read(options.text_path),
            FormatLeakReportText(report, LeakCheckTextOptions(options, true)));
}

}  // namespace
}  // namespace heapgraph::report
