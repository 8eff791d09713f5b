// bench::fma_peak_gflops (fma_peak.h): 12 independent accumulators of FMAs (enough to keep two FMA
// pipes of 4-cycle latency busy), compiled for AVX2 + FMA and for AVX-512 through target
// attributes, so that the bench itself needs no -m flags; __builtin_cpu_supports picks the widest.
#include "fma_peak.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bench {
namespace {

constexpr int kChains = 12;
constexpr long kIters = 1 << 20;

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) float chains_avx2() {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < kIters; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], m, a);
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  return _mm256_cvtss_f32(sum);
}

__attribute__((target("avx512f"))) float chains_avx512() {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < kIters; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], m, a);
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  return lanes[0];
}
#endif

}  // namespace

double fma_peak_gflops() {
#if defined(__x86_64__)
  float (*run)() = nullptr;
  int width = 0;
  if (__builtin_cpu_supports("avx512f")) {
    run = chains_avx512;
    width = 16;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    run = chains_avx2;
    width = 8;
  }
  if (run == nullptr) return 0;
  static volatile float sink = 0;
  double best = 0;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    sink = sink + run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 2.0 * width * kChains * static_cast<double>(kIters) / s / 1e9);
  }
  return best;
#else
  return 0;
#endif
}

}  // namespace bench
