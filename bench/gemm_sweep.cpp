// The measurement behind Note [Panel GEMM] (core/src/kernels/gemm.cpp): minigrad's own float32
// GEMM kernel against OpenBLAS's cblas_sgemm, with cold caches (a 64 MB buffer is written between
// calls, as a training step's other tensors would), over products onto n <= 64 columns (m, k and
// the four layouts swept) and a few wider ones, on every SIMD level this CPU has. Prints each
// shape's best-of time ratio (ours / OpenBLAS; lower is better) and the geometric mean over the
// sweep. OPENBLAS_CORETYPE picks OpenBLAS's kernels (Haswell: its AVX2 ones).
//   build/bench/gemm_sweep            the sweep
//   build/bench/gemm_sweep --wide     GPT-2's and attention's wider products too
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/simd.h"

namespace simd = minigrad::detail::simd;

namespace {

std::vector<float> g_flush(16 << 20);

void flush_caches() {
  for (std::size_t i = 0; i < g_flush.size(); i += 16) g_flush[i] += 1.0f;
}

struct Shape {
  bool ta, tb;
  std::int64_t m, n, k;
};

/// Best-of seconds of OpenBLAS and of the kernel for one product.
std::pair<double, double> time_shape(const simd::Kernels* kern, const Shape& s) {
  const std::int64_t m = s.m, n = s.n, k = s.k;
  std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  std::vector<float> c(static_cast<std::size_t>(m * n));
  std::mt19937 gen(0);
  std::normal_distribution<float> dist;
  for (auto& v : a) v = dist(gen);
  for (auto& v : b) v = dist(gen);
  const std::int64_t lda = s.ta ? m : k, ldb = s.tb ? k : n;
  const double flops = 2.0 * static_cast<double>(m * n * k);
  const int reps = static_cast<int>(std::clamp(2e9 / flops, 5.0, 10.0));
  using Clock = std::chrono::steady_clock;
  double blas = 1e30, ours = 1e30;
  for (int r = 0; r < reps; ++r) {
    flush_caches();
    auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f,
                a.data(), static_cast<blasint>(lda), b.data(), static_cast<blasint>(ldb), 0.0f,
                c.data(), static_cast<blasint>(n));
    blas = std::min(blas, std::chrono::duration<double>(Clock::now() - t0).count());
    flush_caches();
    t0 = Clock::now();
    kern->gemm(s.ta, s.tb, m, n, k, a.data(), lda, b.data(), ldb, c.data(), n, 1.0f, 0.0f);
    ours = std::min(ours, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return {blas, ours};
}

}  // namespace

int main(int argc, char** argv) {
  const bool wide = argc > 1 && std::strcmp(argv[1], "--wide") == 0;
  openblas_set_num_threads(1);
  std::vector<Shape> shapes;
  if (wide) {
    // GPT-2's products (B T = 256 rows: each Linear's forward NT, input gradient NN and weight
    // gradient TN, the tied head's three), attention's, fewer rows, and a square one.
    shapes = {{false, true, 256, 2304, 768},   {false, true, 256, 768, 768},
              {false, true, 256, 3072, 768},   {false, true, 256, 768, 3072},
              {false, false, 256, 768, 2304},  {false, false, 256, 768, 3072},
              {false, false, 256, 3072, 768},  {true, false, 2304, 768, 256},
              {true, false, 3072, 768, 256},   {true, false, 768, 3072, 256},
              {false, true, 256, 50257, 768},  {false, false, 256, 768, 50257},
              {true, false, 50257, 768, 256},  {false, true, 512, 512, 64},
              {false, false, 768, 256, 64},    {false, false, 128, 128, 64},
              {false, true, 128, 128, 64},     {true, true, 300, 200, 100},
              {false, false, 1, 768, 768},     {false, true, 4, 2304, 768},
              {true, false, 16, 768, 256},     {false, false, 48, 300, 300},
              {false, false, 1024, 1024, 1024}};
  } else {
    for (std::int64_t n : {16, 50, 64})
      for (std::int64_t m : {64, 200, 2048})
        for (std::int64_t k : {100, 512, 3000})
          for (int layout = 0; layout < 4; ++layout)
            shapes.push_back({(layout & 1) != 0, (layout & 2) != 0, m, n, k});
  }
  for (auto level : {simd::Level::kAvx2, simd::Level::kAvx512}) {
    const simd::Kernels* kern = simd::kernels_f32_at(level);
    if (kern == nullptr) continue;
    double log_sum = 0;
    int counted = 0;
    for (const Shape& s : shapes) {
      // The sweep times only what Note [Panel GEMM] routes to the kernel (n <= 64, and k <= 64
      // or m >= 64 with not both transposed); --wide times everything it lists.
      if (!wide && s.ta && s.tb) continue;
      const auto [blas, ours] = time_shape(kern, s);
      const double flops = 2.0 * static_cast<double>(s.m * s.n * s.k);
      std::printf("%-6s %c%c m %5lld n %5lld k %5lld  openblas %6.1f  ours %6.1f GFLOP/s  %.2f\n",
                  kern->name, s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', static_cast<long long>(s.m),
                  static_cast<long long>(s.n), static_cast<long long>(s.k), flops / blas / 1e9,
                  flops / ours / 1e9, ours / blas);
      log_sum += std::log(ours / blas);
      ++counted;
    }
    std::printf("%s: geometric mean of ours / openblas over %d shapes: %.2f\n", kern->name, counted,
                std::exp(log_sum / counted));
  }
  return 0;
}
