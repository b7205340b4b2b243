// reader/FileHeaderCheck: the header checks the appended files share, one line each: truncated,
// bad magic, unsupported version, header_size out of bounds; a good header is copied out.
#include <gtest/gtest.h>

#include "reader/FileHeaderCheck.h"
#include "reader/RecordingError.h"
#include "tests/reader/SyntheticLagFile.h"

namespace heapgraph {
namespace {

std::string LagHeaderError(const std::string& bytes) {
  format::LagHeader h;
  try {
    ReadFileHeader(bytes, "lag", format::kLagMagic, &h);
  } catch (const RecordingError& e) {
    return e.what();
  }
  return "";
}

TEST(FileHeaderCheckTest, GoodHeaderIsCopied) {
  format::LagHeader h = {};
  ReadFileHeader(lagfile::LagHeaderBytes(), "lag", format::kLagMagic, &h);
  EXPECT_EQ(h.threshold_ms, 2000u);
  EXPECT_EQ(h.file.header_size, sizeof(h));
}

TEST(FileHeaderCheckTest, EachProblemIsOneLine) {
  std::string good = lagfile::LagHeaderBytes();
  EXPECT_EQ(LagHeaderError(good.substr(0, 10)), "lag: truncated header");
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_EQ(LagHeaderError(bad), "lag: not a heapgraph lag file (bad magic)");
  format::LagHeader h;
  memcpy(&h, good.data(), sizeof(h));
  h.file.version = 7;
  EXPECT_EQ(LagHeaderError(std::string(reinterpret_cast<const char*>(&h), sizeof(h))),
            "lag: unsupported format version 7 (this reader knows 1)");
  h.file.version = 1;
  h.file.header_size = sizeof(h) + 100;  // beyond the file
  EXPECT_EQ(LagHeaderError(std::string(reinterpret_cast<const char*>(&h), sizeof(h))),
            "lag: corrupt header");
  h.file.header_size = 4;  // shorter than the struct
  EXPECT_EQ(LagHeaderError(std::string(reinterpret_cast<const char*>(&h), sizeof(h))),
            "lag: corrupt header");
}

}  // namespace
}  // namespace heapgraph
