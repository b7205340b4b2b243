// tests/heap: UnwindRuleCache. Rules come back as stored, field by field; Forget makes every
// earlier rule a miss and a new store of the same address wins; and with real threads storing and
// finding the same addresses at once while another thread starts new generations, a found rule is
// always the one stored for its address in the generation the finder asked for. Misses map no page
// that no store wrote; one code region's addresses share a page until it is full.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "heap/runtime/UnwindRuleCache.h"

namespace heapgraph {
namespace {

// A rule that depends on its argument only, so that any reader can check what it found. A
// kNotSimple rule holds only no_fde, or signal_frame and its three words.
UnwindRule RuleFor(uintptr_t address) {
  UnwindRule rule;
  rule.kind = static_cast<UnwindRule::Kind>(address % 3);
  if (rule.kind == UnwindRule::kNotSimple) {
    rule.no_fde = (address & 8) != 0;
    rule.signal_frame = !rule.no_fde && (address & 16) != 0;
    for (int i = 0; rule.signal_frame && i < 3; ++i) {
      rule.signal_words[i] = static_cast<uint8_t>((address >> (3 + 2 * i)) % 128);
    }
    return rule;
  }
  rule.cfa_from_rbp = (address & 8) != 0;
  rule.rbp_saved = (address & 16) != 0;
  rule.cfa_offset = static_cast<uint32_t>(address % EhFrameRules::kMaxCfaOffset);
  rule.rbp_offset = -static_cast<int32_t>((address >> 3) % EhFrameRules::kMaxRbpDepth);
  return rule;
}

bool Same(const UnwindRule& a, const UnwindRule& b) {
  return a.kind == b.kind && a.cfa_from_rbp == b.cfa_from_rbp && a.no_fde == b.no_fde &&
         a.rbp_saved == b.rbp_saved && a.cfa_offset == b.cfa_offset &&
         a.rbp_offset == b.rbp_offset && a.signal_frame == b.signal_frame &&
         a.signal_words[0] == b.signal_words[0] && a.signal_words[1] == b.signal_words[1] &&
         a.signal_words[2] == b.signal_words[2];
}

void ExpectSame(const UnwindRule& a, const UnwindRule& b) {
  EXPECT_TRUE(Same(a, b)) << "kind " << int{a.kind} << "/" << int{b.kind} << " cfa +"
                          << a.cfa_offset << "/" << b.cfa_offset << " rbp " << a.rbp_offset << "/"
                          << b.rbp_offset;
}

TEST(UnwindRuleCacheTest, FindsWhatWasStored) {
  UnwindRuleCache cache;
  ASSERT_TRUE(cache.Initialize());
  uint32_t generation = cache.Generation();
  UnwindRuleCache::Packed rule;
  EXPECT_FALSE(cache.Find(0x401234, generation, &rule));
  for (uintptr_t address = 0x400000; address < 0x400000 + 3000 * 7; address += 7) {
    cache.Store(address, generation, RuleFor(address));
  }
  for (uintptr_t address = 0x400000; address < 0x400000 + 3000 * 7; address += 7) {
    ASSERT_TRUE(cache.Find(address, generation, &rule)) << address;
    ExpectSame(rule.Unpack(), RuleFor(address));
  }
  UnwindRule extreme;
  extreme.kind = UnwindRule::kSimple;
  extreme.cfa_offset = EhFrameRules::kMaxCfaOffset;
  extreme.rbp_saved = true;
  extreme.rbp_offset = -static_cast<int32_t>(EhFrameRules::kMaxRbpDepth);
  cache.Store(0x7fff12345678, generation, extreme);
  ASSERT_TRUE(cache.Find(0x7fff12345678, generation, &rule));
  ExpectSame(rule.Unpack(), extreme);
  UnwindRule signal;  // glibc's restorer on x86-64, and the largest words
  signal.signal_frame = true;
  signal.signal_words[0] = 21, signal.signal_words[1] = 20, signal.signal_words[2] = 127;
  cache.Store(0x7fff12345690, generation, signal);
  ASSERT_TRUE(cache.Find(0x7fff12345690, generation, &rule));
  EXPECT_TRUE(rule.signal_frame() && !rule.no_fde() && !rule.simple() && !rule.end());
  EXPECT_EQ(rule.signal_word(0), 21u);
  EXPECT_EQ(rule.signal_word(2), 127u);
  ExpectSame(rule.Unpack(), signal);
}

// Pages of the table mapped now (mincore counts a page mapped to the zero page too).
size_t MappedPages(const UnwindRuleCache& cache) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((cache.end() - cache.begin() + page - 1) / page);
  if (mincore(reinterpret_cast<void*>(cache.begin()), cache.end() - cache.begin(),
              resident.data()) != 0) {
    ADD_FAILURE() << "mincore: " << strerror(errno);
  }
  size_t count = 0;
  for (unsigned char r : resident) count += r & 1;
  return count;
}

// A lookup never reads a page no store wrote: it would map the zero page, which the next store
// there must copy, with a TLB flush on every core the process runs on.
TEST(UnwindRuleCacheTest, MissesReadNoPageThatNoStoreWrote) {
  UnwindRuleCache cache;
  ASSERT_TRUE(cache.Initialize());
  const uint32_t generation = cache.Generation();
  UnwindRuleCache::Packed rule;
  for (uintptr_t address = 0x400000; address < 0x400000 + 100000 * 13; address += 13) {
    ASSERT_FALSE(cache.Find(address, generation, &rule));
  }
  EXPECT_EQ(MappedPages(cache), 0u);
  cache.Store(0x401000, generation, RuleFor(0x401000));
  const size_t after_one = MappedPages(cache);
  EXPECT_GE(after_one, 1u);
  EXPECT_LE(after_one, 2u);  // a probe run may cross into the next page
  for (uintptr_t address = 0x400000; address < 0x400000 + 100000 * 13; address += 13) {
    if (address != 0x401000) {
      EXPECT_FALSE(cache.Find(address, generation, &rule));
    }
  }
  EXPECT_EQ(MappedPages(cache), after_one);
  ASSERT_TRUE(cache.Find(0x401000, generation, &rule));
  ExpectSame(rule.Unpack(), RuleFor(0x401000));
}

// The return addresses of one code region (16 KiB) share a page of the table: a short program
// touches a page per region it runs, not one per address. A region with more addresses than its
// page holds spills into the rest of the table, and every address is still found.
TEST(UnwindRuleCacheTest, OneCodeRegionFillsOnePageThenSpills) {
  UnwindRuleCache cache;
  ASSERT_TRUE(cache.Initialize());
  const uint32_t generation = cache.Generation();
  const uintptr_t region = 0x7f1234560000;  // 16 KiB aligned
  for (uintptr_t i = 0; i < 100; ++i) cache.Store(region + i * 16, generation, RuleFor(i));
  EXPECT_LE(MappedPages(cache), 2u);  // its page, and the next if a probe run crosses into it
  for (uintptr_t i = 100; i < 1000; ++i) cache.Store(region + i * 16, generation, RuleFor(i));
  EXPECT_GT(MappedPages(cache), 2u);
  UnwindRuleCache::Packed rule;
  for (uintptr_t i = 0; i < 1000; ++i) {
    ASSERT_TRUE(cache.Find(region + i * 16, generation, &rule)) << i;
    ExpectSame(rule.Unpack(), RuleFor(i));
  }
}

TEST(UnwindRuleCacheTest, ForgetStartsANewGeneration) {
  UnwindRuleCache cache;
  ASSERT_TRUE(cache.Initialize());
  uint32_t old_generation = cache.Generation();
  UnwindRule first = RuleFor(0x500000);
  cache.Store(0x500000, old_generation, first);
  cache.Forget();
  uint32_t generation = cache.Generation();
  EXPECT_NE(generation, old_generation);
  UnwindRuleCache::Packed rule;
  EXPECT_FALSE(cache.Find(0x500000, generation, &rule));
  UnwindRule second = RuleFor(0x500001);  // another library at the same address
  cache.Store(0x500000, generation, second);
  ASSERT_TRUE(cache.Find(0x500000, generation, &rule));
  ExpectSame(rule.Unpack(), second);
  // A capture that read the old generation before the Forget misses the new rule, and a late
  // store of the old rule does not come back in the new generation.
  EXPECT_FALSE(cache.Find(0x500000, old_generation, &rule));
  cache.Store(0x500000, old_generation, first);
  EXPECT_FALSE(cache.Find(0x500000, generation, &rule));
}

TEST(UnwindRuleCacheTest, ThreadsStoringAndFindingWhileGenerationsChangeAgree) {
  UnwindRuleCache cache;
  ASSERT_TRUE(cache.Initialize());
  constexpr int kThreads = 4;
  constexpr uintptr_t kAddresses = 20000;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (uintptr_t i = 0; i < kAddresses; ++i) {
          uintptr_t address = 0x10000 + ((i * 7919 + t * 104729) % kAddresses) * 5;
          uint32_t generation = cache.Generation();
          UnwindRuleCache::Packed rule;
          if (cache.Find(address, generation, &rule)) {
            if (!Same(rule.Unpack(), RuleFor(address + generation))) {
              wrong.fetch_add(1, std::memory_order_relaxed);
            }
          } else {
            cache.Store(address, generation, RuleFor(address + generation));
          }
        }
      }
    });
  }
  // Meanwhile new generations, in which every address has another rule (a library reloaded).
  std::atomic<bool> done{false};
  std::thread forgetter([&] {
    while (!done.load()) {
      cache.Forget();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  for (std::thread& thread : threads) thread.join();
  done = true;
  forgetter.join();
  EXPECT_EQ(wrong.load(), 0);
  // Every address keeps its slot across generations: stored again now, each is found.
  uint32_t generation = cache.Generation();
  for (uintptr_t i = 0; i < kAddresses; ++i) {
    uintptr_t address = 0x10000 + i * 5;
    cache.Store(address, generation, RuleFor(address + generation));
    UnwindRuleCache::Packed rule;
    ASSERT_TRUE(cache.Find(address, generation, &rule)) << address;
    ExpectSame(rule.Unpack(), RuleFor(address + generation));
  }
}

}  // namespace
}  // namespace heapgraph
