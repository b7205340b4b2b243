// DumpReportToText on hand-built reports: the summary line (session, stacks not stored), the
// sampled line and sampled groups, torn records, one line per return address with its inline
// chain on "in" lines, and the line counting the groups left out.
#include <gtest/gtest.h>

#include <string>

#include "report/DumpReportText.h"
#include "tests/report/DumpReportTestModel.h"

namespace heapgraph::report {
namespace {

using testing::Group;
using testing::SmallReport;

TEST(DumpReportTextTest, SummaryGroupsAndFrames) {
  EXPECT_EQ(DumpReportToText(SmallReport()),
            "/rec/77-1: 4 live blocks, 244 B, 2 unique stacks, 0 torn, 0 dropped, 2 modules (pid "
            "77, /bin/app, exited)\n"
            "#1 3 blocks, 144 B, Malloc 48 B (stack 3)\n"
            "    #0 0x7f0000001234 libfoo.so+0x1234 (build-id abcd) inner() /src/a.cc:7 [inlined]\n"
            "        in outer() /src/a.cc:12\n"
            "    #1 0x555500001000 app+0x1000\n"
            "    #2 0xdeadbeef0000 ??\n"
            "#2 1 block, 100 B, Malloc 100 B (stack 0)\n"
            "    (no stack captured)\n");
}

TEST(DumpReportTextTest, UnnamedFunctionAndNoFile) {
  DumpReport r = SmallReport();
  ReportFrame f = testing::Where(0x555500002000, "/bin/app", 0x2000, "");
  f.file = "/src/b.cc";
  f.line = 3;
  r.groups[0].addresses = {{FrameList{f}},
                           {FrameList{testing::WithSource(f, "g()", "", 0, false)}}};
  std::string text = DumpReportToText(r);
  EXPECT_NE(text.find("    #0 0x555500002000 app+0x2000 ?? /src/b.cc:3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    #1 0x555500002000 app+0x2000 g()\n"), std::string::npos) << text;
}

TEST(DumpReportTextTest, LeftOutGroupsAreCountedUnlessAStackStoppedTheReport) {
  DumpReport r = SmallReport();
  r.group_count = 5;
  EXPECT_NE(DumpReportToText(r).find("\n... 3 more groups (--top 0 shows all)\n"),
            std::string::npos);
  r.unreadable_stack = "stacks: corrupt node 4 (empty slot)";
  r.groups.pop_back();
  std::string text = DumpReportToText(r);
  EXPECT_EQ(text.find("more groups"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n#2 "), std::string::npos) << text;
}

TEST(DumpReportTextTest, NoSessionAndStacksNotStored) {
  DumpReport r = SmallReport();
  r.session.reset();
  r.stacks_dropped = 6;
  r.dropped = 2;
  std::string text = DumpReportToText(r);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "/rec/77-1: 4 live blocks, 244 B, 2 unique stacks, 0 torn, 2 dropped, 2 modules, 6 "
            "stacks not stored");
}

TEST(DumpReportTextTest, TornRecords) {
  DumpReport r = SmallReport();
  r.torn.push_back({TreeKind::kHeap, 1, format::kRehashing, true, 12});
  r.torn.push_back({TreeKind::kVm, 0, 5, true, 1});
  r.torn.push_back({TreeKind::kHeap, 1, 3, false, 1});
  std::string text = DumpReportToText(r);
  EXPECT_NE(text.find(", 3 torn, "), std::string::npos) << text;
  EXPECT_NE(text.find("\ntorn: heap.tree shard 1 (writer died rehashing it; 12 records not read)\n"
                      "torn: vm.tree shard 0 node 5 (writer died while changing it)\n"
                      "torn: heap.tree shard 1 node 3 (inconsistent, skipped)\n#1 "),
            std::string::npos)
      << text;
}

TEST(DumpReportTextTest, SampledRecordingShowsEstimates) {
  DumpReport r = SmallReport();
  r.sample_mean = 1024;
  StackGroup g;
  g.stack = 3;
  g.count = 2;
  g.bytes = 128;
  g.category = "Malloc 64 B";
  g.estimate = SampleEstimate(1024);
  g.estimate.Add(64);
  g.estimate.Add(64);
  r.groups[0].group = g;
  r.live = g.estimate;
  std::string text = DumpReportToText(r);
  // p = 1 - exp(-64/1024): each block stands for 16.5 blocks.
  std::string estimate = "≈ 33 ± 23 blocks, ≈ 2.06 KiB ± 1.41 KiB";
  EXPECT_NE(text.find("\nsampled recording (sample=1.00 KiB): the blocks above are a sample; "
                      "estimated live " +
                      estimate + " (± one standard error)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n#1 2 sampled blocks (128 B), " + estimate + ", Malloc 64 B (stack 3)\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace heapgraph::report
