// The caching allocator behind tensor buffers (Note [Caching allocator], core/src/alloc.h):
// reuse, alignment, the per-thread cap, tensors freed on another thread, live counts, and that
// AddressSanitizer still sees a use after free.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "minigrad/minigrad.h"

namespace mg = minigrad;

// Private entry points of core/src/alloc.cpp, declared here for the test only.
namespace minigrad::detail {
void* cached_alloc(std::size_t nbytes) noexcept;
void cached_free(void* p, std::size_t nbytes) noexcept;
std::size_t cached_bytes() noexcept;
void release_cached_blocks() noexcept;
bool caching_enabled() noexcept;
}  // namespace minigrad::detail

namespace {

#if defined(__SANITIZE_ADDRESS__)
#define MG_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MG_TEST_ASAN 1
#endif
#endif
#ifndef MG_TEST_ASAN
#define MG_TEST_ASAN 0
#endif
constexpr bool kAsan = MG_TEST_ASAN != 0;

bool aligned64(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }

TEST(CachingAllocator, IsCompiledOutUnderAddressSanitizer) {
  EXPECT_EQ(mg::detail::caching_enabled(), !kAsan);
}

TEST(CachingAllocator, BlocksAreAlignedAndReusedPerSizeClass) {
  mg::detail::release_cached_blocks();
  for (std::size_t n : {1u, 63u, 64u, 65u, 1000u, 1025u, 5000u, 1u << 20, (1u << 20) + 1,
                        (5u << 18) + 1, 3u << 21, (256u << 20) - 1, 256u << 20, (256u << 20) + 1}) {
    void* p = mg::detail::cached_alloc(n);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned64(p)) << n;
    static_cast<char*>(p)[n - 1] = 1;  // the whole request is usable
    mg::detail::cached_free(p, n);
  }
  if (!mg::detail::caching_enabled()) {
    EXPECT_EQ(mg::detail::cached_bytes(), 0u);
    return;
  }
  // A freed block is handed out again for a request of the same class (65..128 bytes).
  void* a = mg::detail::cached_alloc(100);
  mg::detail::cached_free(a, 100);
  EXPECT_EQ(mg::detail::cached_alloc(120), a);
  mg::detail::cached_free(a, 120);
  // Above 1 MiB, four classes per power of two: 1 MiB + 1 byte takes a 1.25 MiB block, which
  // serves any request up to 1.25 MiB; 1.25 MiB + 1 takes the 1.5 MiB class.
  mg::detail::release_cached_blocks();
  std::size_t before = mg::detail::cached_bytes();
  void* big = mg::detail::cached_alloc((1u << 20) + 1);
  mg::detail::cached_free(big, (1u << 20) + 1);
  EXPECT_EQ(mg::detail::cached_bytes(), before + (5u << 18));
  EXPECT_EQ(mg::detail::cached_alloc(5u << 18), big);
  mg::detail::cached_free(big, 5u << 18);
  void* bigger = mg::detail::cached_alloc((5u << 18) + 1);
  EXPECT_NE(bigger, big);
  mg::detail::cached_free(bigger, (5u << 18) + 1);
  EXPECT_EQ(mg::detail::cached_bytes(), before + (5u << 18) + (6u << 18));
  // Blocks larger than 256 MiB are never cached.
  before = mg::detail::cached_bytes();
  void* huge = mg::detail::cached_alloc((256u << 20) + 1);
  mg::detail::cached_free(huge, (256u << 20) + 1);
  EXPECT_EQ(mg::detail::cached_bytes(), before);
  mg::detail::release_cached_blocks();
  EXPECT_EQ(mg::detail::cached_bytes(), 0u);
}

TEST(CachingAllocator, CapsTheBytesEachThreadKeeps) {
  mg::detail::release_cached_blocks();
  // 1.25 GiB of 32 MiB blocks freed at once: the cache keeps at most its cap (1 GiB). (The
  // blocks are never written, so this costs address space, not memory.)
  std::vector<void*> blocks;
  for (int i = 0; i < 40; ++i) blocks.push_back(mg::detail::cached_alloc(32u << 20));
  for (void* p : blocks) mg::detail::cached_free(p, 32u << 20);
  EXPECT_LE(mg::detail::cached_bytes(), std::size_t{1} << 30);
  if (mg::detail::caching_enabled()) {
    EXPECT_EQ(mg::detail::cached_bytes(), std::size_t{1} << 30);
  }
  mg::detail::release_cached_blocks();
}

TEST(CachingAllocator, TensorsFreedOnAnotherThreadAreCorrect) {
  const std::int64_t storages = mg::live_storage_count();
  std::vector<mg::Tensor> made;
  for (int i = 0; i < 200; ++i) made.push_back(mg::full({3, i % 7 + 1}, static_cast<double>(i)));
  // Another thread frees them (into its own cache, released when it exits) and allocates its own.
  std::thread worker([&made] {
    made.clear();
    for (int i = 0; i < 200; ++i) {
      mg::Tensor t = mg::full({i % 5 + 1, 4}, 2.0);
      EXPECT_DOUBLE_EQ(t.sum().item<double>(), 8.0 * (i % 5 + 1));
    }
  });
  worker.join();
  EXPECT_EQ(mg::live_storage_count(), storages);
  // This thread still allocates correctly, also the sizes the other thread took.
  for (int i = 0; i < 50; ++i) {
    mg::Tensor t = mg::ones({3, i % 7 + 1});
    EXPECT_TRUE(aligned64(t.data_ptr<float>()));
    EXPECT_DOUBLE_EQ(t.sum().item<double>(), 3.0 * (i % 7 + 1));
  }
  EXPECT_EQ(mg::live_storage_count(), storages);
}

TEST(CachingAllocator, ManyThreadsTrainConcurrently) {
  const std::int64_t storages = mg::live_storage_count();
  const std::int64_t nodes = mg::autograd::live_node_count();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      mg::Tensor w = mg::full({4, 4}, 0.1).requires_grad_();
      mg::Tensor x = mg::ones({3, 4});
      for (int step = 0; step < 200; ++step) {
        mg::Tensor loss = mg::matmul(x, w).relu().sum();
        loss.backward();
        mg::NoGradGuard g;
        w.copy_(w - w.grad() * 0.001);
        w.set_grad(mg::Tensor());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mg::live_storage_count(), storages);
  EXPECT_EQ(mg::autograd::live_node_count(), nodes);
}

// Fresh tensors never see a previous tensor's values where the op defines them.
TEST(CachingAllocator, ReusedBuffersAreFullyInitialisedByCreationOps) {
  for (int i = 0; i < 100; ++i) {
    { mg::Tensor junk = mg::full({8, 8}, 123.0); }
    mg::Tensor z = mg::zeros({8, 8});
    EXPECT_DOUBLE_EQ(z.abs().sum().item<double>(), 0.0);
  }
}

#if MG_TEST_ASAN
// Under ASan nothing is cached, so reading a dead tensor's buffer is reported.
TEST(CachingAllocatorDeathTest, UseAfterFreeIsReportedUnderAddressSanitizer) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        float* p = nullptr;
        {
          mg::Tensor t = mg::ones({4});
          p = t.data_ptr<float>();
        }
        volatile float v = p[0];
        (void)v;
      },
      "heap-use-after-free");
}
#endif

}  // namespace
