#pragma once
// Private: the float32 vector operations and the vectorised exp of the SIMD softmax kernels,
// written once over xsimd::batch<float, A> (Note [Runtime SIMD dispatch] in simd.h). Included only
// by softmax_simd_impl.h, itself included only by the per-architecture files softmax_{avx2,
// avx512}.cpp.
//
// Everything here is in an anonymous namespace, and xsimd's own functions are templates on the
// architecture A, so nothing compiled with -mavx2 or -mavx512f can be picked by the linker for code
// that runs on other CPUs (an inline function emitted in two files with different -m flags is one
// symbol, and the linker keeps either).
#include <xsimd/xsimd.hpp>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <cstdint>
#include <type_traits>
#include <utility>

namespace minigrad::detail::simd {
namespace {

// Note [Vectorised exp]
// The classic reduction of Cephes' expf (as Sleef and PyTorch's Vectorized<float>::exp):
// x = n ln2 + r with n = round(x / ln2) and |r| <= ln2 / 2, r computed in two steps (Cody-Waite:
// ln2 = C1 + C2 where n * C1 is exact), e^r by a polynomial, then scaled by 2^n. n is rounded by
// adding 1.5 2^23 + 127 in the FMA x log2e + that (the sum's last bits are then 127 + n, the
// exponent field of 2^n: AVX2 shifts them into place instead of converting n) and subtracting it.
// The polynomial is degree 6, 1 + r + r^2 (c2 + c3 r + ... + c6 r^4), by Horner's rule to the
// end (c6 ... c2, then two FMAs by r onto 1): its coefficients minimise the relative error on
// [-ln2/2, ln2/2] (4e-9 with them rounded to float, a fifteenth of an ulp;
// scripts/fit_exp_poly.py).
// Cephes' degree 7 (1 + r + r^2 P5(r)) gave a max error of 0.971 ulp; this one 0.847 ulp over
// the same sweep, with one FMA fewer, and AVX2's common path needs no rounding instruction,
// conversion or clamp (exp and softmax faster on both levels: docs/performance.md, "Kernels
// alone").
// Inputs are clamped to [-104, 89] first: exp(-104) < 2^-150 rounds to 0 and exp(89) > FLT_MAX, so
// -inf gives 0 and +inf gives inf; x is the clamps' second operand, which min/max return when
// either is NaN (x86's minps/maxps, what xsimd::min/max are on x86), so NaN propagates. The scaling
// by 2^n for n in [-150, 128] is exact until the final multiply: 2^n = 2^(n/2) 2^(n - n/2) with
// both factors normal, so results in the denormal range are rounded once (AVX-512's vscalefps gives
// the same correctly rounded product in one instruction, the one place an intrinsic is used; AVX2
// multiplies by 2^n once when every lane's 2^n is a normal float, the common case, and then needs
// no clamp). Max error < 1 ulp (tests/core/test_vec_math.cpp sweeps it against std::exp on every
// level). Not xsimd::exp: its float exp is less accurate, and its double one breaks on NaN (fuzz
// finding F2).
constexpr float kExpHi = 89.0f;
constexpr float kExpLo = -104.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kRoundMagic = 12583039.0f;  // 1.5 2^23 + 127
constexpr float kC1 = 0.693359375f;
constexpr float kC2 = -2.12194440e-4f;
/// c6 ... c2 (scripts/fit_exp_poly.py).
constexpr float kP0 = 1.3814611593e-3f;
constexpr float kP1 = 8.3687100559e-3f;
constexpr float kP2 = 4.1668388993e-2f;
constexpr float kP3 = 1.6666521132e-1f;
constexpr float kP4 = 4.9999994040e-1f;

/// The operations the kernels use, over xsimd::batch<float, A>. A "mask" is the number k of
/// leading lanes a partial load or store touches. xsimd 8.1 has no masked loads, so a tail is the
/// ISA's masked load / store (AVX2 vmaskmovps, AVX-512 a k-mask), which reads and writes nothing
/// past the k lanes. The portable form goes through a small stack buffer; for the short rows of
/// attention ([B, H, 24, 24]: one full vector and one tail per row on AVX-512) that buffer cost a
/// store-forwarding stall per tail and made softmax several times slower than PyTorch's.
template <class A>
struct Vec {
  using Reg = xsimd::batch<float, A>;
  using Mask = std::int64_t;
  static constexpr std::int64_t kWidth = static_cast<std::int64_t>(Reg::size);

  static Reg load(const float* p) { return Reg::load_unaligned(p); }
  static void store(float* p, Reg v) { v.store_unaligned(p); }
  /// The first k (1 .. kWidth - 1) lanes.
  static Mask tail_mask(std::int64_t k) { return k; }
  /// The first k lanes of p, fill elsewhere (lanes past k are not read).
  static Reg load_partial(const float* p, Mask k, Reg fill) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<A, xsimd::avx512f>) {
      return _mm512_mask_loadu_ps(fill, lanes512(k), p);
    }
#endif
#if defined(__AVX2__)
    if constexpr (std::is_same_v<A, xsimd::fma3<xsimd::avx2>>) {
      const __m256i m = lanes256(k);
      return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
    }
#endif
    alignas(64) float b[kWidth];
    fill.store_aligned(b);
    for (std::int64_t l = 0; l < k; ++l) b[l] = p[l];
    return Reg::load_aligned(b);
  }
  static void store_partial(float* p, Mask k, Reg v) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<A, xsimd::avx512f>) {
      _mm512_mask_storeu_ps(p, lanes512(k), v);
      return;
    }
#endif
#if defined(__AVX2__)
    if constexpr (std::is_same_v<A, xsimd::fma3<xsimd::avx2>>) {
      _mm256_maskstore_ps(p, lanes256(k), v);
      return;
    }
#endif
    alignas(64) float b[kWidth];
    v.store_aligned(b);
    for (std::int64_t l = 0; l < k; ++l) p[l] = b[l];
  }
  /// v on the first k lanes, 0 elsewhere.
  static Reg keep(Reg v, Mask k) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<A, xsimd::avx512f>) return _mm512_maskz_mov_ps(lanes512(k), v);
#endif
#if defined(__AVX2__)
    if constexpr (std::is_same_v<A, xsimd::fma3<xsimd::avx2>>) {
      return _mm256_and_ps(v, _mm256_castsi256_ps(lanes256(k)));
    }
#endif
    alignas(64) float b[kWidth];
    v.store_aligned(b);
    for (std::int64_t l = k; l < kWidth; ++l) b[l] = 0.0f;
    return Reg::load_aligned(b);
  }
#if defined(__AVX512F__)
  /// The first k lanes (0 <= k <= 16) as an AVX-512 mask.
  static __mmask16 lanes512(Mask k) {
    return static_cast<__mmask16>((1u << static_cast<unsigned>(k)) - 1u);
  }
#endif
#if defined(__AVX2__)
  /// The first k lanes (0 <= k <= 8) as an AVX2 mask vector: all ones where the lane is below k.
  static __m256i lanes256(Mask k) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
#endif

  static Reg set1(float v) { return Reg(v); }
  static Reg zero() { return Reg(0.0f); }
  static Reg add(Reg a, Reg b) { return a + b; }
  static Reg sub(Reg a, Reg b) { return a - b; }
  static Reg mul(Reg a, Reg b) { return a * b; }
  /// a * b + c (one rounding where A has FMA: fma3<avx2> and avx512f).
  static Reg fmadd(Reg a, Reg b, Reg c) {
#if defined(__AVX512F__)
    // xsimd 8.1.0 has no avx512f fma: its generic a * b + c is fused only when GCC contracts it,
    // and it did not in gelu's exact square (x * x - hi came out 0 once x * x was shared).
    if constexpr (std::is_same_v<A, xsimd::avx512f>) return _mm512_fmadd_ps(a, b, c);
#endif
    return xsimd::fma(a, b, c);
  }
  /// -a. c - a * b is written fmadd(a, neg(b), c) with neg(b) made once outside the loop (or a
  /// negated constant): the same single rounding as a fused c - a * b, and no xsimd::fnma, whose
  /// 8.1.0 avx512f version negates a on every call.
  static Reg neg(Reg a) { return -a; }
  /// a / b and sqrt(a), correctly rounded (as their scalar forms: the same bits).
  static Reg div(Reg a, Reg b) { return a / b; }
  static Reg sqrt(Reg a) { return xsimd::sqrt(a); }
  /// a, hidden from the optimiser: GCC contracts a multiply feeding an add into one fma
  /// (-ffp-contract=fast), which rounds once where the scalar code rounds twice (the fused Adam
  /// update, Note [Fused Adam] in optim.h, must round as PyTorch does).
  static Reg rounded(Reg a) {
    typename Reg::register_type r = a;
#if defined(__AVX512F__)
    asm("" : "+v"(r));
#else
    asm("" : "+x"(r));
#endif
    return Reg(r);
  }
  /// a > b ? a : b; b when either is NaN (x86 semantics, relied on).
  static Reg max(Reg a, Reg b) { return xsimd::max(a, b); }
  /// a < b ? a : b; b when either is NaN.
  static Reg min(Reg a, Reg b) { return xsimd::min(a, b); }
  static Reg abs(Reg a) { return xsimd::abs(a); }
  /// a where x >= 0, b elsewhere (and where x is NaN).
  static Reg where_nonneg(Reg x, Reg a, Reg b) { return xsimd::select(x >= Reg(0.0f), a, b); }
  /// a where x <= c, b elsewhere (and where x is NaN).
  static Reg where_le(Reg x, Reg c, Reg a, Reg b) { return xsimd::select(x <= c, a, b); }
  /// Whether scale() is one instruction whose denormal results cost nothing extra (AVX-512).
  static constexpr bool kFastScale = std::is_same_v<A, xsimd::avx512f>;
  /// p * 2^n for integral n in [-150, 128] (NaN n only with NaN p), rounded once.
  static Reg scale(Reg p, Reg n) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<A, xsimd::avx512f>) {
      // vscalefps: the same result in one instruction. The masked form with every lane set: the
      // unmasked one passes _mm512_undefined_ps() through, which GCC 12 reports as
      // maybe-uninitialized.
      const __m512 pv = p;
      return _mm512_mask_scalef_ps(pv, static_cast<__mmask16>(0xFFFF), pv, n);
    }
#endif
    using Int = xsimd::batch<std::int32_t, A>;
    const Int ni = xsimd::batch_cast<std::int32_t>(n);
    const Int n1 = ni >> 1;
    const Int n2 = ni - n1;
    const Int bias(127);
    const Reg s1 = xsimd::bitwise_cast<Reg>((n1 + bias) << 23);
    const Reg s2 = xsimd::bitwise_cast<Reg>((n2 + bias) << 23);
    return (p * s1) * s2;
  }
  /// Whether every lane's n is in [-126, 127], where 2^n is a normal float (false for NaN).
  /// kNonPositive: n <= 0 is known (only the lower bound is checked).
  template <bool kNonPositive = false>
  static bool all_normal_scale(Reg n) {
    if constexpr (kNonPositive) {
      return xsimd::all(n >= Reg(-126.0f));
    } else {
      return xsimd::all((n >= Reg(-126.0f)) && (n <= Reg(127.0f)));
    }
  }
  /// p * 2^n for n in [-126, 127], from t whose low bits are 127 + n (exp_round): one multiply,
  /// the same correctly rounded product as scale().
  static Reg scale_normal(Reg p, Reg t) {
    using Int = xsimd::batch<std::int32_t, A>;
    return p * xsimd::bitwise_cast<Reg>(xsimd::bitwise_cast<Int>(t) << 23);
  }
  /// v with its lanes rotated down by kH (lane l gets lane (l + kH) mod kWidth).
  template <std::int64_t kH, std::size_t... kI>
  static Reg rotate(Reg v, std::index_sequence<kI...>) {
    return xsimd::swizzle(
        v, xsimd::batch_constant<xsimd::batch<std::uint32_t, A>,
                                 static_cast<std::uint32_t>((kI + kH) % kWidth)...>{});
  }
  /// Folds the lanes by halves (lane l with lane l + kWidth/2, then l + kWidth/4, ...), the order
  /// of the hand-written AVX2 / AVX-512 code this replaced; the result is in lane 0. Not
  /// xsimd::hadd: 8.1.0's avx512f version uses an AVX512DQ instruction (_mm512_extractf32x8_ps)
  /// and does not compile for plain avx512f; and there is no xsimd reduce_max in 8.1.0.
  template <std::int64_t kH, class F>
  static Reg fold(Reg v, F f) {
    if constexpr (kH == 0) {
      return v;
    } else {
      return fold<kH / 2>(f(v, rotate<kH>(v, std::make_index_sequence<kWidth>{})), f);
    }
  }
  static float lane0(Reg v) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<A, xsimd::avx512f>) {
      return _mm512_cvtss_f32(static_cast<__m512>(v));
    }
#endif
#if defined(__AVX2__)
    if constexpr (std::is_same_v<A, xsimd::fma3<xsimd::avx2>>) {
      return _mm256_cvtss_f32(static_cast<__m256>(v));
    }
#endif
    alignas(64) float b[kWidth];
    v.store_aligned(b);
    return b[0];
  }
  static float reduce_add(Reg v) {
#if defined(__AVX512F__)
    // AVX-512: GCC's / clang's reduction sequence (256- then 128-bit halves: the same halving
    // order, so the same bits) has a shorter dependency chain than 4 lane permutes, which made
    // the forward slower (two reductions per row).
    if constexpr (std::is_same_v<A, xsimd::avx512f>) return _mm512_reduce_add_ps(v);
#endif
    return lane0(fold<kWidth / 2>(v, [](Reg a, Reg b) { return a + b; }));
  }
  /// The max of the lanes (none is NaN: row_max keeps NaN out).
  static float reduce_max(Reg v) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<A, xsimd::avx512f>) return _mm512_reduce_max_ps(v);
#endif
    return lane0(fold<kWidth / 2>(v, [](Reg a, Reg b) { return xsimd::max(a, b); }));
  }
  /// The kWidth x kWidth matrix whose row i is r[i], transposed in place: afterwards r[j] holds
  /// what was column j (the GEMM's packing of a transposed operand, gemm_simd_impl.h).
  static void transpose(Reg* r) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<A, xsimd::avx512f>) {
      // Pairs of rows interleaved by 32 then 64 bits within each 128-bit lane, then the 128-bit
      // lanes gathered in two rounds of shuffle_f32x4. The 64-bit step leaves columns 4l + 1 and
      // 4l + 2 swapped, undone by the order of the last copy.
      __m512 t[16], u[16];
      for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
      }
      for (int i = 0; i < 4; ++i) {
        for (int h = 0; h < 2; ++h) {
          const __m512d x = _mm512_castps_pd(t[4 * i + h]), y = _mm512_castps_pd(t[4 * i + 2 + h]);
          u[4 * i + h] = _mm512_castpd_ps(_mm512_unpacklo_pd(x, y));
          u[4 * i + 2 + h] = _mm512_castpd_ps(_mm512_unpackhi_pd(x, y));
        }
      }
      for (int i = 0; i < 2; ++i) {
        for (int x = 0; x < 4; ++x) {
          t[8 * i + x] = _mm512_shuffle_f32x4(u[8 * i + x], u[8 * i + 4 + x], 0x88);
          t[8 * i + 4 + x] = _mm512_shuffle_f32x4(u[8 * i + x], u[8 * i + 4 + x], 0xdd);
        }
      }
      constexpr int kSwap[16] = {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15};
      for (int x = 0; x < 8; ++x) {
        u[x] = _mm512_shuffle_f32x4(t[x], t[8 + x], 0x88);
        u[8 + x] = _mm512_shuffle_f32x4(t[x], t[8 + x], 0xdd);
      }
      for (int x = 0; x < 16; ++x) r[x] = u[kSwap[x]];
      return;
    }
#endif
#if defined(__AVX2__)
    if constexpr (std::is_same_v<A, xsimd::fma3<xsimd::avx2>>) {
      __m256 t[8], u[8];
      for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
      }
      for (int i = 0; i < 2; ++i) {
        u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
        u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
      }
      for (int x = 0; x < 4; ++x) {
        r[x] = _mm256_permute2f128_ps(u[x], u[4 + x], 0x20);
        r[4 + x] = _mm256_permute2f128_ps(u[x], u[4 + x], 0x31);
      }
      return;
    }
#endif
    alignas(64) float b[kWidth * kWidth];
    for (std::int64_t i = 0; i < kWidth; ++i) r[i].store_aligned(b + i * kWidth);
    for (std::int64_t j = 0; j < kWidth; ++j) {
      alignas(64) float col[kWidth];
      for (std::int64_t i = 0; i < kWidth; ++i) col[i] = b[i * kWidth + j];
      r[j] = Reg::load_aligned(col);
    }
  }
};

/// n = round(x log2e) as t - kRoundMagic, with t = x log2e + kRoundMagic in one FMA: t's last
/// bits are then 127 + n, the exponent field of 2^n (V::scale_normal).
template <class V>
typename V::Reg exp_round(typename V::Reg x, typename V::Reg* t) {
  *t = V::fmadd(x, V::set1(kLog2e), V::set1(kRoundMagic));
  return V::sub(*t, V::set1(kRoundMagic));
}

/// e^r for |r| <= ln2 / 2 (a little more is fine), with r = x - n ln2 in two steps.
template <class V>
typename V::Reg exp_poly(typename V::Reg x, typename V::Reg n) {
  using Reg = typename V::Reg;
  Reg r = V::fmadd(n, V::set1(-kC1), x);  // x - n C1, exact
  r = V::fmadd(n, V::set1(-kC2), r);
  Reg p = V::set1(kP0);
  p = V::fmadd(p, r, V::set1(kP1));
  p = V::fmadd(p, r, V::set1(kP2));
  p = V::fmadd(p, r, V::set1(kP3));
  p = V::fmadd(p, r, V::set1(kP4));
  p = V::fmadd(p, r, V::set1(1.0f));
  return V::fmadd(p, r, V::set1(1.0f));
}

/// exp of each lane (Note [Vectorised exp]): the kernels' exp (tanh, sigmoid, GELU, softmax's
/// strided and backward paths), inlined where GCC sees fit. kNonPositive: every lane is <= 0 or
/// NaN (x - max of a softmax row), so the upper clamp and bound check are skipped: the same
/// result. kNormalScale: AVX2 first tries the path where every lane's 2^n is a normal float
/// (vexp_fast below).
template <class V, bool kNonPositive = false, bool kNormalScale = false>
typename V::Reg vexp(typename V::Reg x) {
  using Reg = typename V::Reg;
  Reg t;
  if constexpr (!V::kFastScale && kNormalScale) {
    // Where every lane's n is in [-126, 127] (x in about [-87.3, 88.4]: every lane of a softmax
    // row that is not masked far out), x needs no clamp and 2^n is a normal float: one multiply
    // by it, t's bits shifted into place (the two-step scaling below was a quarter of the AVX2
    // exp's instructions). Otherwise (-inf, NaN, far out) the general path from the start.
    const Reg n = exp_round<V>(x, &t);
    if (V::template all_normal_scale<kNonPositive>(n)) return V::scale_normal(exp_poly<V>(x, n), t);
  }
  if constexpr (kNonPositive) {
    x = V::max(V::set1(kExpLo), x);
  } else {
    x = V::max(V::set1(kExpLo), V::min(V::set1(kExpHi), x));
  }
  const Reg n = exp_round<V>(x, &t);
  Reg p = exp_poly<V>(x, n);
  if constexpr (!V::kFastScale) {
    // exp(x) for x <= -104 rounds to 0 anyway, but (p * s1) * s2 would get there through a
    // denormal product, which costs a microcode assist per lane: -inf lanes are common (masked
    // attention scores), and made the AVX2 softmax of a causal mask much slower. 0 * s1 * s2 is
    // the same 0 for free. NaN lanes keep p (NaN).
    p = V::where_le(x, V::set1(kExpLo), V::zero(), p);
  }
  return V::scale(p, n);
}

/// The same exp, always inlined (flatten: vexp too) and with AVX2's one-multiply scaling:
/// softmax's rows and the exp op (both measured faster at AVX2). As a call, AVX2's 8-lane batches
/// went through memory and every row paid it (GCC stopped inlining the fast path into the unrolled
/// row loop). Not for tanh, sigmoid and GELU: with it their AVX2 kernels ran slower (tanh and erf
/// GELU most), with vexp exactly as before.
template <class V, bool kNonPositive = false>
[[gnu::always_inline, gnu::flatten]] inline typename V::Reg vexp_fast(typename V::Reg x) {
  return vexp<V, kNonPositive, true>(x);
}

}  // namespace
}  // namespace minigrad::detail::simd
