// TypesFile: the watcher's type records read back by (address, seq); corrupt files are one line.
#include <gtest/gtest.h>

#include <fstream>

#include "reader/RecordingReader.h"
#include "reader/TypesFile.h"
#include "tests/TempDir.h"
#include "tests/reader/TypesFileBuilder.h"

namespace heapgraph {
namespace {

void Write(const TempDir& dir, const std::string& bytes) {
  std::ofstream(std::string(dir.path()) + "/" + format::kTypesFile, std::ios::binary) << bytes;
}

TEST(TypesFileTest, AbsentFileIsNoTypes) {
  TempDir dir;
  EXPECT_FALSE(TypesFile::Read(dir.path()).has_value());
}

TEST(TypesFileTest, LooksUpByAddressAndSequence) {
  TempDir dir;
  // Unsorted on purpose: the reader sorts.
  Write(dir, synthetic::BuildTypesFile({"std::string", "Widget"},
                                       {{0x3000, 7, 1}, {0x1000, 1, 0}, {0x1000, 9, 1}}));
  std::optional<TypesFile> types = TypesFile::Read(dir.path());
  ASSERT_TRUE(types.has_value());
  EXPECT_EQ(3u, types->record_count());
  ASSERT_NE(nullptr, types->TypeOf(0x1000, 1));
  EXPECT_EQ("std::string", *types->TypeOf(0x1000, 1));
  EXPECT_EQ("Widget", *types->TypeOf(0x1000, 9));
  EXPECT_EQ("Widget", *types->TypeOf(0x3000, 7));
  EXPECT_EQ(nullptr, types->TypeOf(0x3000, 8));  // address reused by another allocation
  EXPECT_EQ(nullptr, types->TypeOf(0x2000, 1));
}

TEST(TypesFileTest, CorruptFilesAreOneLineErrors) {
  std::string good = synthetic::BuildTypesFile({"A"}, {{0x10, 1, 0}});
  auto corrupt = [&](size_t offset, uint64_t value, size_t width) {
    std::string bytes = good;
    memcpy(bytes.data() + offset, &value, width);
    return bytes;
  };
  std::vector<std::string> bad = {
      "",
      good.substr(0, 20),
      corrupt(0, 0x41, 1),
      corrupt(offsetof(format::TypesHeader, record_count), 1ull << 40, 8),
      corrupt(offsetof(format::TypesHeader, names_offset), 1ull << 60, 8),
      corrupt(offsetof(format::TypesHeader, name_count), 0, 4),  // record names type 0 of none
      good.substr(0, good.size() - 1)};
  for (const std::string& bytes : bad) {
    TempDir dir;
    Write(dir, bytes);
    try {
      TypesFile::Read(dir.path());
      ADD_FAILURE() << "accepted a corrupt file of " << bytes.size() << " bytes";
    } catch (const RecordingError& e) {
      EXPECT_EQ(0u, std::string(e.what()).rfind("types: ", 0)) << e.what();
    }
  }
}

}  // namespace
}  // namespace heapgraph
