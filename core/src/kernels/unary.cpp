// The floating-point unary ops and the fused backwards of tanh, sigmoid and gelu (unary.h): each
// op is a struct of its formulas (Exp, Sigmoid, ...), and forward_impl / backward_impl choose the
// path. Compiled without -m flags; the AVX2 / AVX-512 kernels are reached through the run-time
// table (Note [Runtime SIMD dispatch], simd.h).
#include "kernels/unary.h"

#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "kernels/loops.h"
#include "kernels/simd.h"
#include "kernels/xt.h"
#include "parallel.h"

namespace minigrad::detail::unary {

namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kC = 0.044715;  // the cubic coefficient of gelu's tanh approximation

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

/// Whether strides lay shape out row-major without gaps (size-1 dims ignored, as
/// Tensor::is_contiguous).
bool contiguous(const Shape& shape, const Shape& strides) {
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

Shape row_major(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// Each op: `vec(e)`, the xtensor expression over a float32 view (vectorised by xsimd);
// `scalar(v)`, the value in T; and where the kernel table has the op, `simd(k, x, y, n)` with
// kSimd true. The table's kernels are several times faster than the xtensor expressions
// (docs/performance.md, "Kernels alone"). An op with a fused backward has `derivative(g, v)`
// (g * op'(v)) and, in the table, `simd_backward(k, g, v, gx, n)`.
//
// NOTE: vec(e) returns an expression that holds e by reference: no local inside it may be an
// operand (an xtensor expression keeps an lvalue operand by reference, and the returned one would
// outlive it; the fuzzer's ASan build caught it in sigmoid, F9).

struct NoSimd {
  static constexpr bool kSimd = false;
  static constexpr bool kSimdBackward = false;
  static constexpr std::int64_t kGrain = kGrainSize;
  static void simd(const simd::Kernels&, const float*, float*, std::int64_t) {}
  static void simd_backward(const simd::Kernels&, const float*, const float*, float*,
                            std::int64_t) {}
};

struct Exp : NoSimd {
  // The kernel table's exp is softmax's (<= 2 ulp over every float, VecMath tests).
  static constexpr bool kSimd = true;
  static void simd(const simd::Kernels& k, const float* x, float* y, std::int64_t n) {
    k.exp(x, y, n);
  }
  static auto vec(auto&& e) { return xt::exp(e); }
  static auto scalar(auto v) { return std::exp(v); }
};

struct Log : NoSimd {
  static auto vec(auto&& e) { return xt::log(e); }
  static auto scalar(auto v) { return std::log(v); }
};

struct Sqrt : NoSimd {
  static auto vec(auto&& e) { return xt::sqrt(e); }
  static auto scalar(auto v) { return std::sqrt(v); }
};

struct Rsqrt : NoSimd {
  static auto vec(auto&& e) { return 1 / xt::sqrt(e); }
  static auto scalar(auto v) { return 1 / std::sqrt(v); }
};

struct Tanh : NoSimd {
  static constexpr bool kSimd = true, kSimdBackward = true;
  static void simd(const simd::Kernels& k, const float* x, float* y, std::int64_t n) {
    k.tanh(x, y, n);
  }
  static auto vec(auto&& e) { return xt::tanh(e); }
  static auto scalar(auto v) { return std::tanh(v); }
  // g * (1 - y^2) with one FMA, as PyTorch rounds it (and the table's kernel: the kernels'
  // comment in activation_simd_impl.h).
  static void simd_backward(const simd::Kernels& k, const float* g, const float* y, float* gx,
                            std::int64_t n) {
    k.tanh_backward(g, y, gx, n);
  }
  template <typename T>
  static T derivative(T g, T y) {
    return g * std::fma(-y, y, T(1));
  }
};

// NOTE: with e = exp(-|x|), 1 / (1 + e) for x >= 0 and e / (1 + e) below: no exp overflows, and
// sigmoid keeps its denormal values down to x = -104 (float32), as the SIMD kernel (Note
// [Vectorised tanh and sigmoid]); PyTorch's 1 / (1 + exp(-x)) gives 0 there.
struct Sigmoid : NoSimd {
  static constexpr bool kSimd = true, kSimdBackward = true;
  static void simd(const simd::Kernels& k, const float* x, float* y, std::int64_t n) {
    k.sigmoid(x, y, n);
  }
  static auto vec(auto&& e) {
    return xt::where(e >= 0, 1 / (1 + xt::exp(-xt::abs(e))),
                     xt::exp(-xt::abs(e)) / (1 + xt::exp(-xt::abs(e))));
  }
  static auto scalar(auto v) {
    const auto en = std::exp(-std::abs(v));
    return v >= 0 ? 1 / (1 + en) : en / (1 + en);
  }
  // g * (1 - y) * y, PyTorch's rounding.
  static void simd_backward(const simd::Kernels& k, const float* g, const float* y, float* gx,
                            std::int64_t n) {
    k.sigmoid_backward(g, y, gx, n);
  }
  template <typename T>
  static T derivative(T g, T y) {
    return g * (1 - y) * y;
  }
};

struct Erf : NoSimd {
  static auto vec(auto&& e) { return xt::erf(e); }
  static auto scalar(auto v) { return std::erf(v); }
};

/// gelu, x Phi(x) (kTanh false) or its tanh approximation: the table's kernels (Note [Vectorised
/// GELU] in gelu_simd_impl.h) on 2 grains (they cost about what an add does per element: the
/// tiny_lm step's 196,608-element GELUs split in two).
template <bool kTanh>
struct Gelu : NoSimd {
  static constexpr bool kSimd = true, kSimdBackward = true;
  static constexpr std::int64_t kGrain = kGrainSize * 2;
  static void simd(const simd::Kernels& k, const float* x, float* y, std::int64_t n) {
    k.gelu(x, y, n, kTanh);
  }
  // In the element type (float32 math for float32, as PyTorch), not promoted to double.
  static auto vec(auto&& e) {
    using T = typename std::decay_t<decltype(e)>::value_type;
    if constexpr (kTanh)
      return T(0.5) * e * (T(1) + xt::tanh(T(kSqrt2OverPi) * (e + T(kC) * e * e * e)));
    else
      return T(0.5) * e * (T(1) + xt::erf(e * T(kInvSqrt2)));
  }
  static auto scalar(auto v) {
    using T = decltype(v);
    if constexpr (kTanh)
      return static_cast<T>(0.5 * v * (1 + std::tanh(kSqrt2OverPi * (v + kC * v * v * v))));
    else
      return static_cast<T>(0.5 * v * (1 + std::erf(v * kInvSqrt2)));
  }
  static void simd_backward(const simd::Kernels& k, const float* g, const float* x, float* gx,
                            std::int64_t n) {
    k.gelu_backward(g, x, gx, n, kTanh);
  }
  /// g * gelu'(x): Phi(x) + x phi(x), or the tanh form's derivative.
  template <typename T>
  static T derivative(T g, T v) {
    if constexpr (!kTanh) {
      return g * (static_cast<T>(0.5) * (1 + std::erf(v * static_cast<T>(kInvSqrt2))) +
                  v * std::exp(v * v * static_cast<T>(-0.5)) * static_cast<T>(kInvSqrt2Pi));
    } else {
      const T k = static_cast<T>(kSqrt2OverPi), c = static_cast<T>(kC);
      const T t = std::tanh((v + v * v * v * c) * k);
      return g * (static_cast<T>(0.5) * (1 + t) +
                  static_cast<T>(0.5) * v * (1 - t * t) * k * (1 + 3 * c * v * v));
    }
  }
};

struct Silu : NoSimd {
  static auto vec(auto&& e) { return e / (1 + xt::exp(-e)); }
  static auto scalar(auto v) { return v / (1 + std::exp(-v)); }
};

struct Mish : NoSimd {
  static auto vec(auto&& e) { return e * xt::tanh(xt::log1p(xt::exp(e))); }
  static auto scalar(auto v) { return v * std::tanh(std::log1p(std::exp(v))); }
};

/// Calls f.template operator()<F>() with F the struct of op.
template <typename Fn>
void visit(Op op, Fn&& f) {
  switch (op) {
    case Op::kExp:
      return f.template operator()<Exp>();
    case Op::kLog:
      return f.template operator()<Log>();
    case Op::kSqrt:
      return f.template operator()<Sqrt>();
    case Op::kRsqrt:
      return f.template operator()<Rsqrt>();
    case Op::kTanh:
      return f.template operator()<Tanh>();
    case Op::kSigmoid:
      return f.template operator()<Sigmoid>();
    case Op::kErf:
      return f.template operator()<Erf>();
    case Op::kGelu:
      return f.template operator()<Gelu<false>>();
    case Op::kGeluTanh:
      return f.template operator()<Gelu<true>>();
    case Op::kSilu:
      return f.template operator()<Silu>();
    case Op::kMish:
      return f.template operator()<Mish>();
  }
}

// NOTE: float64 never goes through xsimd (fuzz finding F2): without AVX-512 there is no double ->
// int64 conversion instruction, and xsimd's exp (also inside tanh, sigmoid, ...) converts the
// exponent of NaN or +-inf with a plain C++ cast, which is undefined behaviour. float64 and
// strided inputs run the loop with the std:: function.
template <typename F, typename T>
void forward_impl(const Shape& shape, const T* x, const Shape& sx, T* y) {
  const std::int64_t n = numel(shape);
  if constexpr (std::is_same_v<T, float>) {
    if (n > 0 && contiguous(shape, sx)) {
      if (const simd::Kernels* k = simd::kernels_f32(); k && F::kSimd) {
        parallel_for(
            0, n, F::kGrain,
            [&](std::int64_t b, std::int64_t e) { F::simd(*k, x + b, y + b, e - b); }, kSimdAlign);
        return;
      }
      parallel_for(
          0, n, kGrainSize,
          [&](std::int64_t b, std::int64_t e) {
            auto len = static_cast<std::size_t>(e - b);
            auto xi = adapt_1d(x + b, len);
            auto xo = adapt_1d(y + b, len);
            xt::noalias(xo) = F::vec(xi);
          },
          kSimdAlign);
      return;
    }
  }
  unary_loop<T, T>(shape, x, sx, y, row_major(shape),
                   [](T v) { return static_cast<T>(F::scalar(v)); });
}

template <typename F, typename T>
void backward_impl(const Shape& shape, const T* g, const Shape& sg, const T* v, const Shape& sv,
                   T* gx) {
  if constexpr (requires { F::template derivative<T>(T(), T()); }) {
    const std::int64_t n = numel(shape);
    if constexpr (std::is_same_v<T, float>) {
      if (n > 0 && contiguous(shape, sg) && contiguous(shape, sv)) {
        if (const simd::Kernels* k = simd::kernels_f32(); k && F::kSimdBackward) {
          parallel_for(
              0, n, F::kGrain,
              [&](std::int64_t b, std::int64_t e) {
                F::simd_backward(*k, g + b, v + b, gx + b, e - b);
              },
              kSimdAlign);
          return;
        }
        if constexpr (std::is_same_v<F, Gelu<false>>) {
          // Without the table (no AVX2): vectorised through xsimd.
          const T half = 0.5f, inv_sqrt2 = static_cast<T>(kInvSqrt2),
                  inv_sqrt2pi = static_cast<T>(kInvSqrt2Pi);
          parallel_for(
              0, n, kGrainSize,
              [&](std::int64_t b, std::int64_t e) {
                auto len = static_cast<std::size_t>(e - b);
                auto xv = adapt_1d(v + b, len);
                auto gv = adapt_1d(g + b, len);
                auto ov = adapt_1d(gx + b, len);
                xt::noalias(ov) = gv * (half * (T{1} + xt::erf(xv * inv_sqrt2)) +
                                        xv * xt::exp(xv * xv * -half) * inv_sqrt2pi);
              },
              kSimdAlign);
          return;
        }
      }
    }
    binary_loop<T, T>(shape, v, sv, g, sg, gx, row_major(shape),
                      [](T vv, T gv) { return F::derivative(gv, vv); });
  } else {
    throw std::logic_error("unary::backward: this op has no fused backward");
  }
}

}  // namespace

template <typename T>
void forward(Op op, const Shape& shape, const T* x, const Shape& sx, T* y) {
  visit(op, [&]<typename F>() { forward_impl<F>(shape, x, sx, y); });
}

template <typename T>
void backward(Op op, const Shape& shape, const T* g, const Shape& sg, const T* v, const Shape& sv,
              T* gx) {
  visit(op, [&]<typename F>() { backward_impl<F>(shape, g, sg, v, sv, gx); });
}

template void forward<float>(Op, const Shape&, const float*, const Shape&, float*);
template void forward<double>(Op, const Shape&, const double*, const Shape&, double*);
template void backward<float>(Op, const Shape&, const float*, const Shape&, const float*,
                              const Shape&, float*);
template void backward<double>(Op, const Shape&, const double*, const Shape&, const double*,
                               const Shape&, double*);

}  // namespace minigrad::detail::unary
