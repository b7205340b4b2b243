// ExitRecord: the `exit` file written by DumpRetention parses back, and bad files are one line.
#include <gtest/gtest.h>
#include <signal.h>

#include "heap/session/DumpRetention.h"
#include "report/ExitRecord.h"

namespace heapgraph::report {
namespace {

TEST(ExitRecordTest, RoundTripsDumpRetentionsFormat) {
  ExitClassification c;
  c.kind = ExitClass::kCrash;
  c.reason = "a fatal signal was delivered (crash)";
  c.signal = SIGBUS;
  c.signal_code = 2;
  c.signal_address = 0x1234;
  c.oom_kills_before = 3;
  c.foreground = false;
  LineBuffer text;
  DumpRetention::Format(c, 99, 42, &text);
  ExitRecord r = ExitRecord::Parse(std::string(text.data(), text.size()));
  EXPECT_EQ(r.kind, "crash");
  EXPECT_EQ(r.reason, c.reason);
  EXPECT_EQ(r.signal, static_cast<uint32_t>(SIGBUS));
  EXPECT_EQ(r.signal_code, 2);
  EXPECT_EQ(r.signal_address, 0x1234u);
  EXPECT_EQ(r.oom_kills_before, 3u);
  EXPECT_EQ(r.oom_kills_now, format::kUnknownCounter);
  EXPECT_FALSE(r.foreground);
  EXPECT_FALSE(r.exit_status_known);
  EXPECT_EQ(r.source, "exit file");
}

TEST(ExitRecordTest, RejectsWhatItDoesNotKnow) {
  for (const char* bad :
       {"", "kind crash\n", "heapgraph-exit 1\nkind boom\n", "heapgraph-exit 1\nreason x\n",
        "heapgraph-exit 1\nkind crash\nsignal -1\n",
        "heapgraph-exit 1\nkind crash\nsignal 99999999999999999999\n"}) {
    try {
      ExitRecord::Parse(bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const RecordingError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("exit: ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace heapgraph::report
