// tests/heap: PressureTimeline on synthetic pressure files: entries and categories read back, a
// short last entry dropped and flagged, and one-line errors for everything malformed.
#include <gtest/gtest.h>

#include <cstring>

#include "reader/PressureTimeline.h"
#include "reader/RecordingReader.h"

namespace heapgraph {
namespace {

std::string PressureHeaderBytes() {
  format::PressureHeader h = {};
  memcpy(h.file.magic, format::kPressureMagic, 8);
  h.file.version = 1;
  h.file.header_size = sizeof(h);
  h.record_size = sizeof(format::PressureRecord);
  h.category_size = sizeof(format::CategoryTotal);
  h.watermark_count = 3;
  h.watermarks[0] = 50;
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h));
}

std::string Entry(uint32_t watermark, uint32_t categories) {
  format::PressureRecord r = {};
  r.tag = format::kPressureRecordTag;
  r.watermark = watermark;
  r.category_count = categories;
  std::string s(reinterpret_cast<const char*>(&r), sizeof(r));
  for (uint32_t i = 0; i < categories; ++i) {
    format::CategoryTotal c = {64 * (i + 1), format::kCategoryHeap, 0, i + 1,
                               64 * (i + 1) * (i + 1)};
    s.append(reinterpret_cast<const char*>(&c), sizeof(c));
  }
  return s;
}

std::string ParseError(const std::string& bytes) {
  try {
    PressureTimeline t("/nonexistent");
    t.Parse(bytes);
  } catch (const RecordingError& e) {
    return e.what();
  }
  return "";
}

TEST(PressureTimelineTest, ReadsEntriesAndCategories) {
  PressureTimeline t("/nonexistent");
  EXPECT_FALSE(t.present());
  t.Parse(PressureHeaderBytes() + Entry(50, 2) + Entry(75, 0) + Entry(90, 3));
  ASSERT_EQ(t.entries().size(), 3u);
  EXPECT_EQ(t.entries()[0].record.watermark, 50u);
  EXPECT_EQ(t.entries()[0].categories.size(), 2u);
  EXPECT_EQ(t.entries()[2].categories[2].bytes, 64u * 3 * 3);
  EXPECT_FALSE(t.truncated());
  EXPECT_EQ(t.header().watermarks[0], 50u);
}

TEST(PressureTimelineTest, ShortLastEntryIsDroppedAndFlagged) {
  std::string bytes = PressureHeaderBytes() + Entry(50, 1) + Entry(75, 4);
  PressureTimeline t("/nonexistent");
  t.Parse(bytes.substr(0, bytes.size() - 5));
  EXPECT_EQ(t.entries().size(), 1u);
  EXPECT_TRUE(t.truncated());
}

TEST(PressureTimelineTest, MalformedFilesGiveOneLineErrors) {
  EXPECT_EQ(ParseError("short"), "pressure: truncated header");
  std::string bad_magic = PressureHeaderBytes();
  bad_magic[0] = 'X';
  EXPECT_EQ(ParseError(bad_magic), "pressure: not a heapgraph pressure file (bad magic)");
  std::string bad_version = PressureHeaderBytes();
  bad_version[8] = 9;
  EXPECT_EQ(ParseError(bad_version),
            "pressure: unsupported format version 9 (this reader knows 1)");
  std::string bad_tag = PressureHeaderBytes() + Entry(50, 0);
  bad_tag[sizeof(format::PressureHeader)] = 'Z';
  EXPECT_NE(ParseError(bad_tag).find("bad tag"), std::string::npos);
  std::string huge = PressureHeaderBytes() + Entry(50, 0);
  uint32_t count = 0xFFFFFFFF;
  memcpy(&huge[sizeof(format::PressureHeader) + offsetof(format::PressureRecord, category_count)],
         &count, 4);
  EXPECT_NE(ParseError(huge).find("category_count"), std::string::npos);
}

}  // namespace
}  // namespace heapgraph
