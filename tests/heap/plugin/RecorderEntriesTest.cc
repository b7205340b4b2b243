// tests/heap/plugin: RecorderEntries finds the recorder's entries wherever the process exports
// them. This test program exports stand-ins of its own (ENABLE_EXPORTS), declared by
// heap/plugin/ScanInterface.h like libheapgraph.so's, and is never linked with libheapgraph.so.
#include <gtest/gtest.h>

#include "heap/plugin/RecorderEntries.h"

extern "C" {
int heapgraph_internal_begin_snapshot(HeapgraphRecorderView*) {
  return -1;
}
void heapgraph_internal_end_snapshot(void) {}
int heapgraph_internal_ignore_thread(int) {
  return 0;
}
}

namespace heapgraph {
namespace {

TEST(RecorderEntriesTest, FindsTheExportedEntries) {
  const RecorderEntries& entries = RecorderEntries::Get();
  EXPECT_TRUE(entries.loaded());
  EXPECT_EQ(entries.begin_snapshot, &heapgraph_internal_begin_snapshot);
  EXPECT_EQ(entries.end_snapshot, &heapgraph_internal_end_snapshot);
  EXPECT_EQ(entries.ignore_thread, &heapgraph_internal_ignore_thread);
}

TEST(RecorderEntriesTest, ResolvesOnce) {
  EXPECT_EQ(&RecorderEntries::Get(), &RecorderEntries::Get());
}

TEST(RecorderEntriesTest, LoadedNeedsTheSnapshotPair) {
  RecorderEntries entries;
  EXPECT_FALSE(entries.loaded());
  entries.begin_snapshot = &heapgraph_internal_begin_snapshot;
  EXPECT_FALSE(entries.loaded());
  entries.end_snapshot = &heapgraph_internal_end_snapshot;
  EXPECT_TRUE(entries.loaded());
}

}  // namespace
}  // namespace heapgraph
