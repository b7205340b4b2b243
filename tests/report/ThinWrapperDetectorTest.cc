// ThinWrapperDetector: Capstone's view of hand-assembled x86-64 functions, and real functions of
// this test binary found through its symbol table.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "heap/platform/LoadedObject.h"
#include "report/ThinWrapperDetector.h"

extern "C" __attribute__((noinline, used)) void* ThinWrapperTestForward(size_t n) {
  return malloc(n);
}

extern "C" __attribute__((noinline, used)) uint64_t ThinWrapperTestLoop(const uint64_t* v,
                                                                        size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += v[i] * 3 + (sum >> 7);
  return sum;
}

namespace heapgraph::report {
namespace {

TEST(ThinWrapperDetectorTest, ForwardingCodeIsThin) {
  // push rbp; mov rbp, rsp; call +0; pop rbp; ret
  std::vector<uint8_t> forward = {0x55, 0x48, 0x89, 0xe5, 0xe8, 0, 0, 0, 0, 0x5d, 0xc3};
  EXPECT_TRUE(ThinWrapperDetector::IsThinCode(forward, 0x1000));
  // A tail call: jmp rel32 out of the function.
  std::vector<uint8_t> tail = {0xe9, 0x00, 0x10, 0x00, 0x00};
  EXPECT_TRUE(ThinWrapperDetector::IsThinCode(tail, 0x1000));
  // xmalloc: call malloc; test rax, rax; je fail; ret; fail: call oom (behind the branch).
  std::vector<uint8_t> xmalloc = {0xe8, 0,    0,    0, 0, 0x48, 0x85, 0xc0, 0x74,
                                  0x01, 0xc3, 0xe8, 0, 0, 0,    0,    0xc3};
  EXPECT_TRUE(ThinWrapperDetector::IsThinCode(xmalloc, 0x1000));
}

TEST(ThinWrapperDetectorTest, AllocationFollowedByOwnWorkIsNot) {
  // call malloc; mov rdi, rax; call memset; ret: the function uses what it allocated.
  std::vector<uint8_t> fill = {0xe8, 0, 0, 0, 0, 0x48, 0x89, 0xc7, 0xe8, 0, 0, 0, 0, 0xc3};
  EXPECT_FALSE(ThinWrapperDetector::IsThinCode(fill, 0x1000));
}

TEST(ThinWrapperDetectorTest, LoopsAndCallFreeCodeAreNot) {
  // loop: dec edi; jne loop; call +0; ret
  std::vector<uint8_t> loop = {0xff, 0xcf, 0x75, 0xfc, 0xe8, 0, 0, 0, 0, 0xc3};
  EXPECT_FALSE(ThinWrapperDetector::IsThinCode(loop, 0x1000));
  std::vector<uint8_t> leaf = {0x31, 0xc0, 0xc3};  // xor eax, eax; ret
  EXPECT_FALSE(ThinWrapperDetector::IsThinCode(leaf, 0x1000));
  // Three calls: more than forwarding.
  std::vector<uint8_t> three = {0xe8, 0, 0, 0, 0, 0xe8, 0, 0, 0, 0, 0xe8, 0, 0, 0, 0, 0xc3};
  EXPECT_FALSE(ThinWrapperDetector::IsThinCode(three, 0x1000));
}

std::string SelfPath() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "";
}

// The ELF vaddr of a function of this executable: its run-time address minus the load bias (0
// when the executable is not position independent, as sanitized test executables are not).
uint64_t ElfAddress(const void* function) {
  const auto address = reinterpret_cast<uintptr_t>(function);
  LoadedObject object;
  return LoadedObject::Find(address, &object) ? address - object.bias : 0;
}

TEST(ThinWrapperDetectorTest, FindsFunctionsInAnElfFile) {
  ThinWrapperDetector detector;
  std::string self = SelfPath();
  EXPECT_TRUE(detector.IsThinWrapper(
      self, ElfAddress(reinterpret_cast<void*>(&ThinWrapperTestForward)) + 1));
  EXPECT_FALSE(
      detector.IsThinWrapper(self, ElfAddress(reinterpret_cast<void*>(&ThinWrapperTestLoop)) + 1));
  EXPECT_FALSE(detector.IsThinWrapper("/nonexistent", 0x1000));
}

}  // namespace
}  // namespace heapgraph::report
