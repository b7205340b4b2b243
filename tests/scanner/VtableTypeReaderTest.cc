// tests/scanner: VtableTypeReader on objects of this process: polymorphic classes (single,
// multiple and virtual inheritance: the three type_info kinds) are named; plain data, pointers
// into a vtable past its address point, heap pointers and unmapped addresses are not, and never
// fault.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <memory>

#include "scanner/VtableTypeReader.h"

namespace heapgraph::scanner {
namespace {

struct Plain {
  virtual ~Plain() = default;
};
namespace deep {
struct Single : Plain {
  int x = 1;
};
struct Other {
  virtual ~Other() = default;
};
struct Multiple : Plain, Other {};
struct Virtual : virtual Plain {};
}  // namespace deep

uint64_t FirstWord(const void* object) {
  uint64_t word;
  memcpy(&word, object, sizeof(word));
  return word;
}

TEST(VtableTypeReaderTest, NamesPolymorphicObjectsOfEveryTypeInfoKind) {
  auto plain = std::make_unique<Plain>();
  auto single = std::make_unique<deep::Single>();
  auto multiple = std::make_unique<deep::Multiple>();
  auto virt = std::make_unique<deep::Virtual>();
  VtableTypeReader reader;
  const std::string* name = reader.TypeOf(FirstWord(plain.get()));
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(*name, "heapgraph::scanner::(anonymous namespace)::Plain");
  ASSERT_NE(reader.TypeOf(FirstWord(single.get())), nullptr);
  EXPECT_EQ(*reader.TypeOf(FirstWord(single.get())),
            "heapgraph::scanner::(anonymous namespace)::deep::Single");
  ASSERT_NE(reader.TypeOf(FirstWord(multiple.get())), nullptr);
  EXPECT_NE(reader.TypeOf(FirstWord(multiple.get()))->find("deep::Multiple"), std::string::npos);
  ASSERT_NE(reader.TypeOf(FirstWord(virt.get())), nullptr);
  EXPECT_NE(reader.TypeOf(FirstWord(virt.get()))->find("deep::Virtual"), std::string::npos);
  EXPECT_EQ(reader.TypeOf(FirstWord(plain.get())), name) << "cached";
}

TEST(VtableTypeReaderTest, RejectsEverythingElseWithoutFaulting) {
  auto single = std::make_unique<deep::Single>();
  VtableTypeReader reader;
  uint64_t vptr = FirstWord(single.get());
  EXPECT_EQ(reader.TypeOf(vptr + 8), nullptr) << "past the address point";
  EXPECT_EQ(reader.TypeOf(vptr + 1), nullptr) << "misaligned";
  auto data = std::make_unique<uint64_t[]>(4);
  EXPECT_EQ(reader.TypeOf(reinterpret_cast<uint64_t>(data.get())), nullptr) << "heap";
  static const char kText[] = "just some read-only text, long enough";
  EXPECT_EQ(reader.TypeOf(reinterpret_cast<uint64_t>(kText) + 16), nullptr) << "rodata";
  void* gone = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(gone, 4096);
  EXPECT_EQ(reader.TypeOf(reinterpret_cast<uint64_t>(gone) + 16), nullptr) << "unmapped";
  for (uint64_t garbage : {uint64_t{0}, uint64_t{16}, ~uint64_t{0} - 7, uint64_t{0x7fff0000}}) {
    EXPECT_EQ(reader.TypeOf(garbage), nullptr) << garbage;
  }
}

TEST(VtableTypeReaderTest, ReadWordsFailsOnUnmappedMemory) {
  uint64_t word = 5, out[1];
  EXPECT_TRUE(VtableTypeReader::ReadWords(reinterpret_cast<uint64_t>(&word), out, 1));
  EXPECT_EQ(out[0], 5u);
  EXPECT_FALSE(VtableTypeReader::ReadWords(8, out, 1));
}

}  // namespace
}  // namespace heapgraph::scanner
