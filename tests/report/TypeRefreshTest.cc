// tests/report: TypeRefresh on a live-allocation tree (in a temporary directory) whose blocks are
// real objects of this process: C++ objects are named, plain blocks and freed-looking garbage are
// not, the records are sorted by address with their seq, and the `types` file reads back.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "report/TypeRefresh.h"

namespace heapgraph::report {
namespace {

struct Shape {
  virtual ~Shape() = default;
  double area = 0;
};
struct Circle : Shape {
  double radius = 1;
};

class TypeRefreshTest : public testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/hg-type-refresh-XXXXXX";
    dir_ = mkdtemp(pattern);
    dir_fd_ = open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_TRUE(tree_.Create(dir_fd_, "heap.tree", 4, 12));
  }
  void TearDown() override {
    close(dir_fd_);
    std::filesystem::remove_all(dir_);
  }
  void Record(const void* p, uint64_t size, uint32_t seq) {
    BlockRecord b;
    b.address = reinterpret_cast<uint64_t>(p);
    b.size = size;
    b.seq = seq;
    b.stack = 1;
    b.function = format::AllocFunction::kMalloc;
    ASSERT_TRUE(tree_.Insert(b));
  }
  std::string dir_;
  int dir_fd_ = -1;
  LiveAllocationTree tree_;
};

TEST_F(TypeRefreshTest, NamesTheCxxObjectsAndWritesTheTypesFile) {
  std::vector<std::unique_ptr<Shape>> shapes;
  for (uint32_t i = 0; i < 100; ++i) {
    shapes.push_back(i % 4 == 0 ? std::make_unique<Circle>() : std::make_unique<Shape>());
    Record(shapes.back().get(), i % 4 == 0 ? sizeof(Circle) : sizeof(Shape), 1000 + i);
  }
  auto plain = std::make_unique<uint64_t[]>(8);
  plain[0] = 0x12345678;  // not a vptr
  Record(plain.get(), 64, 7);
  auto tiny = std::make_unique<uint64_t>(reinterpret_cast<uint64_t>(*reinterpret_cast<void**>(
      shapes[1].get())));  // a vptr in an 8-byte block: too small to be an object, not examined
  Record(tiny.get(), 8, 8);

  TypeSnapshot snapshot = TypeRefresh::Take(tree_);
  EXPECT_EQ(snapshot.blocks_read, 102u);
  ASSERT_EQ(snapshot.blocks.size(), 100u);
  std::map<std::string, int> counts;
  for (size_t i = 0; i < snapshot.blocks.size(); ++i) {
    const TypedBlock& b = snapshot.blocks[i];
    if (i > 0) {
      EXPECT_LT(snapshot.blocks[i - 1].address, b.address);
    }
    ASSERT_LT(b.type, snapshot.names.size());
    ++counts[snapshot.names[b.type]];
    EXPECT_GE(b.seq, 1000u);
  }
  EXPECT_EQ(counts["heapgraph::report::(anonymous namespace)::Circle"], 25);
  EXPECT_EQ(counts["heapgraph::report::(anonymous namespace)::Shape"], 75);

  ASSERT_TRUE(TypeRefresh::Write(snapshot, dir_fd_, 42));
  std::ifstream in(dir_ + "/" + format::kTypesFile, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::string file = bytes.str();
  format::TypesHeader h;
  ASSERT_GE(file.size(), sizeof(h));
  memcpy(&h, file.data(), sizeof(h));
  EXPECT_EQ(memcmp(h.file.magic, format::kTypesMagic, 8), 0);
  EXPECT_EQ(h.record_count, 100u);
  EXPECT_EQ(h.name_count, 2u);
  EXPECT_EQ(h.sequence, 42u);
  EXPECT_EQ(file.size(), h.records_offset + 100 * sizeof(format::TypeRecord));
  format::TypeRecord first;
  memcpy(&first, file.data() + h.records_offset, sizeof(first));
  EXPECT_EQ(first.address, snapshot.blocks[0].address);
  EXPECT_EQ(first.seq, snapshot.blocks[0].seq);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/types.tmp"));
}

}  // namespace
}  // namespace heapgraph::report
