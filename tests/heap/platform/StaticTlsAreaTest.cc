// tests/heap: a static-TLS thread-local found from one thread is located in every other thread
// (real threads, each checking its own copy), including threads that never touched it.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "heap/platform/StaticTlsArea.h"

namespace heapgraph {
namespace {

__thread uint64_t t_area[64] __attribute__((tls_model("initial-exec")));
__thread char t_other __attribute__((tls_model("initial-exec")));

TEST(StaticTlsAreaTest, OneOffsetLocatesTheObjectInEveryThread) {
  StaticTlsArea area = StaticTlsArea::Of(t_area, sizeof(t_area));
  EXPECT_EQ(area.size(), sizeof(t_area));
  EXPECT_EQ(area.BeginIn(StaticTlsArea::ThreadPointer()), reinterpret_cast<uint64_t>(t_area));
  std::vector<uint64_t> expected(8), located(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < expected.size(); ++i) {
    threads.emplace_back([&, i] {
      // Odd threads never touch t_area before it is located.
      located[i] = area.BeginIn(StaticTlsArea::ThreadPointer());
      if (i % 2 == 0) t_area[0] = i;
      t_other = 1;
      expected[i] = reinterpret_cast<uint64_t>(t_area);
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(located[i], expected[i]) << i;
    for (size_t j = 0; j < i; ++j) EXPECT_NE(located[i], located[j]);  // distinct copies
  }
}

TEST(StaticTlsAreaTest, TheAreaLiesInTheStaticTlsBlockOnTheArchitecturesSide) {
  using StaticTlsInfoFn = void (*)(size_t*, size_t*);
  auto info = reinterpret_cast<StaticTlsInfoFn>(dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"));
  ASSERT_NE(info, nullptr);
  size_t size = 0, align = 0;
  info(&size, &align);
  StaticTlsArea area = StaticTlsArea::Of(t_area, sizeof(t_area));
#if defined(__x86_64__)
  // Variant II: static TLS below the thread pointer, which is glibc's struct pthread.
  EXPECT_EQ(StaticTlsArea::ThreadPointer(), reinterpret_cast<uint64_t>(pthread_self()));
  EXPECT_LT(area.offset(), 0);
  EXPECT_LE(-area.offset(), static_cast<int64_t>(size));
#else
  EXPECT_GT(area.offset(), 0);
  EXPECT_LE(area.offset() + static_cast<int64_t>(sizeof(t_area)), static_cast<int64_t>(size));
#endif
}

TEST(StaticTlsAreaTest, DefaultIsEmpty) {
  StaticTlsArea none;
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(none.offset(), 0);
}

}  // namespace
}  // namespace heapgraph
