// tests/heap/plugin: RecordingIgnored sets the thread's ignore flag for its lifetime and restores
// the previous one, nested or not; without the recorder's entry it does nothing.
#include <gtest/gtest.h>

#include "heap/plugin/RecordingIgnored.h"

namespace heapgraph {
namespace {

thread_local int t_ignored = 0;
thread_local int t_calls = 0;

int FakeIgnoreThread(int ignore) {
  ++t_calls;
  int before = t_ignored;
  t_ignored = ignore != 0 ? 1 : 0;
  return before;
}

TEST(RecordingIgnoredTest, IgnoresWhileItLivesAndRestores) {
  t_ignored = 0;
  {
    RecordingIgnored ignored(&FakeIgnoreThread);
    EXPECT_EQ(t_ignored, 1);
  }
  EXPECT_EQ(t_ignored, 0);
}

TEST(RecordingIgnoredTest, KeepsAnOuterSetting) {
  t_ignored = 1;
  {
    RecordingIgnored ignored(&FakeIgnoreThread);
    EXPECT_EQ(t_ignored, 1);
  }
  EXPECT_EQ(t_ignored, 1);
  t_ignored = 0;
  {
    RecordingIgnored outer(&FakeIgnoreThread);
    { RecordingIgnored inner(&FakeIgnoreThread); }
    EXPECT_EQ(t_ignored, 1);
  }
  EXPECT_EQ(t_ignored, 0);
}

TEST(RecordingIgnoredTest, WithoutTheRecorderDoesNothing) {
  t_calls = 0;
  { RecordingIgnored ignored(nullptr); }
  EXPECT_EQ(t_calls, 0);
}

}  // namespace
}  // namespace heapgraph
