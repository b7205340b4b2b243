// tests/report: TypeRefresh on a live-allocation tree (in a temporary directory) whose blocks are
// real objects of this process: C++ objects are named by the typed-graph readers (vtables,
// shared_ptr control blocks and the objects they manage, std::function functors), plain blocks
// are not, a recorded block whose memory was unmapped is skipped without a fault, the records are
// sorted by address with their seq, and the `types` file reads back.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "check/TypeRefresh.h"

namespace heapgraph::report {
namespace {

struct Shape {
  virtual ~Shape() = default;
  double area = 0;
};
struct Circle : Shape {
  double radius = 1;
};
struct Payload {  // not polymorphic: only its owner can name it
  uint64_t words[6] = {};
};

// Logs what it allocates, so that a test can record the blocks the library allocates for it.
template <typename T>
struct LoggingAllocator {
  using value_type = T;
  explicit LoggingAllocator(std::vector<std::pair<void*, size_t>>* log) : log(log) {}
  template <typename U>
  LoggingAllocator(const LoggingAllocator<U>& other) : log(other.log) {}
  T* allocate(size_t n) {
    void* p = ::operator new(n * sizeof(T));
    log->push_back({p, n * sizeof(T)});
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { ::operator delete(p); }
  std::vector<std::pair<void*, size_t>>* log;
};
template <typename T, typename U>
bool operator==(const LoggingAllocator<T>&, const LoggingAllocator<U>&) {
  return true;
}

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
      shapes[1].get())));  // a vptr alone: an object of a class without data members
  Record(tiny.get(), 8, 8);

  TypeRefresh refresh;
  TypeSnapshot snapshot = refresh.Take(tree_);
  EXPECT_EQ(snapshot.blocks_read, 102u);
  ASSERT_EQ(snapshot.blocks.size(), 101u);
  std::map<std::string, int> counts;
  for (size_t i = 0; i < snapshot.blocks.size(); ++i) {
    const TypedBlock& b = snapshot.blocks[i];
    if (i > 0) {
      EXPECT_LT(snapshot.blocks[i - 1].address, b.address);
    }
    ASSERT_LT(b.type, snapshot.names.size());
    ++counts[snapshot.names[b.type]];
    EXPECT_TRUE(b.seq >= 1000u || b.seq == 8u) << b.seq;
  }
  EXPECT_EQ(counts["heapgraph::report::(anonymous namespace)::Circle"], 25);
  EXPECT_EQ(counts["heapgraph::report::(anonymous namespace)::Shape"], 76);

  ASSERT_TRUE(TypeRefresh::Write(snapshot, dir_fd_, 42));
  std::ifstream in(dir_ + "/" + format::kTypesFile, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::string file = bytes.str();
  format::TypesHeader h;
  ASSERT_GE(file.size(), sizeof(h));
  memcpy(&h, file.data(), sizeof(h));
  EXPECT_EQ(memcmp(h.file.magic, format::kTypesMagic, 8), 0);
  EXPECT_EQ(h.record_count, 101u);
  EXPECT_EQ(h.name_count, 2u);
  EXPECT_EQ(h.sequence, 42u);
  EXPECT_EQ(file.size(), h.records_offset + 101 * sizeof(format::TypeRecord));
  format::TypeRecord first;
  memcpy(&first, file.data() + h.records_offset, sizeof(first));
  EXPECT_EQ(first.address, snapshot.blocks[0].address);
  EXPECT_EQ(first.seq, snapshot.blocks[0].seq);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/types.tmp"));
}

// The other built-in readers, through the same live reads, and a block unmapped under the reader.
TEST_F(TypeRefreshTest, NamesSharedPtrTargetsAndFunctorsAndSkipsUnmappedBlocks) {
  std::vector<std::pair<void*, size_t>> log;
  LoggingAllocator<char> allocator(&log);
  // make_shared's one block (control block + object) is the object itself.
  std::shared_ptr<Circle> inplace = std::allocate_shared<Circle>(allocator);
  // A separate object owned through a control block: the control block names the object.
  auto* payload = new Payload();
  std::shared_ptr<Payload> owned(payload, std::default_delete<Payload>(), allocator);
  ASSERT_EQ(log.size(), 2u);
  for (size_t i = 0; i < log.size(); ++i) Record(log[i].first, log[i].second, 10 + i);
  Record(payload, sizeof(Payload), 20);
  // A std::function on the heap whose lambda is too large to be stored inline.
  uint64_t state[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto* function = new std::function<uint64_t()>([state] { return state[0] + state[7]; });
  void* functor = *reinterpret_cast<void**>(function);  // libstdc++: _M_functor._M_access<T*>()
  Record(function, sizeof(*function), 30);
  Record(functor, sizeof(state), 31);
  // A page that held an object and was unmapped since.
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  *static_cast<void**>(page) = *reinterpret_cast<void**>(inplace.get());
  ASSERT_EQ(munmap(page, 4096), 0);
  Record(page, 4096, 40);

  TypeRefresh refresh;
  TypeSnapshot snapshot = refresh.Take(tree_);
  std::map<uint32_t, std::string> by_seq;
  for (const TypedBlock& b : snapshot.blocks) by_seq[b.seq] = snapshot.names[b.type];
  EXPECT_EQ(by_seq[10], "heapgraph::report::(anonymous namespace)::Circle");
  EXPECT_EQ(by_seq[11].rfind("shared_ptr control block<", 0), 0u) << by_seq[11];
  EXPECT_EQ(by_seq[20], "heapgraph::report::(anonymous namespace)::Payload");
  EXPECT_EQ(by_seq[31].rfind("std::function<lambda in", 0), 0u) << by_seq[31];
  EXPECT_EQ(by_seq.count(30), 0u);  // the std::function object itself has no type
  EXPECT_EQ(by_seq.count(40), 0u);
  EXPECT_EQ(snapshot.blocks_read, 6u);
  // The readers were prepared once; a second refresh reuses them.
  refresh.Take(tree_);
  EXPECT_EQ(refresh.preparations(), 1u);
  delete function;
}

// A types file that cannot be written whole (the file-size limit cuts it short) is not renamed
// into place: the previous one stays and no temporary file is left.
TEST_F(TypeRefreshTest, AShortWriteKeepsThePreviousTypesFile) {
  TypeSnapshot snapshot;
  snapshot.names = {"Shape"};
  for (uint32_t i = 0; i < 1000; ++i) snapshot.blocks.push_back({0x10000 + 64 * i, i, 0});
  ASSERT_TRUE(TypeRefresh::Write(snapshot, dir_fd_, 1));
  auto size = std::filesystem::file_size(dir_ + "/" + format::kTypesFile);

  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit small = saved;
  small.rlim_cur = sizeof(format::TypesHeader) + 4;  // the header fits, the rest does not
  sighandler_t previous = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool written = TypeRefresh::Write(snapshot, dir_fd_, 2);
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, previous);

  EXPECT_FALSE(written);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/types.tmp"));
  EXPECT_EQ(std::filesystem::file_size(dir_ + "/" + format::kTypesFile), size);
  std::ifstream in(dir_ + "/" + format::kTypesFile, std::ios::binary);
  format::TypesHeader h;
  ASSERT_TRUE(in.read(reinterpret_cast<char*>(&h), sizeof(h)));
  EXPECT_EQ(h.sequence, 1u);
}

}  // namespace
}  // namespace heapgraph::report
