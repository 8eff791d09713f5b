// The round trip of a cache line between two threads (one store and the other's reply), the
// cost behind every handoff of minigrad's thread pool. On this project's 2-core virtual machines
// it has read ~55 ns, and ~350 ns during the streaks in which the 2-thread tiny_lm step gains
// nothing (docs/performance.md, 2026-12-06): the two virtual cores then sit far apart on the host.
//   build/bench/core_latency
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

int main() {
  alignas(64) static std::atomic<int> flag{0};
  constexpr int kRounds = 2000000;
  std::thread other([] {
    for (int i = 0; i < kRounds; ++i) {
      while (flag.load(std::memory_order_acquire) != 1) {
      }
      flag.store(0, std::memory_order_release);
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kRounds; ++i) {
    flag.store(1, std::memory_order_release);
    while (flag.load(std::memory_order_acquire) != 0) {
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  other.join();
  std::printf("round trip between two threads: %.1f ns\n", s / kRounds * 1e9);
  return 0;
}
