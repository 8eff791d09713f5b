// fuzz_ops: libFuzzer target that reads its input as a small tensor program.
//
//   byte 0            number of input tensors (1 + b % 4) and of ops ((b / 4) % (kMaxOps + 1))
//   per input         rank, sizes, dtype, fill, seed, view kind, view arguments, requires_grad
//   per op            an opcode byte, two operand bytes and the op's argument bytes (run_op)
//   then              how the program ends: which backward, with what gradient (finish)
//
// A missing byte reads as 0, so every input is a valid program. Operands are taken from a pool
// that starts with the inputs and collects every result. Arguments are often invalid on purpose
// (dims out of range, shapes that do not match, out-of-range indices, NaN options).
//
// The only allowed outcomes of every op are a result or a minigrad::Error; nothing else is caught,
// so any other exception, a crash or an ASan/UBSan report fails the run. After each op the results
// are read back (to_vector) and, at the end, each leaf's gradient must have the leaf's shape and
// dtype; a violation aborts with a message (kInvariant).
//
// tests/fuzz/gen_corpus.py writes the seed corpus in this format; scripts/fuzz runs the target.
// Where one call reads several argument bytes (`mg::sum(a, in.dims(), in.flag())`), the order is
// clang's left-to-right evaluation of arguments; the target is built with clang only.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "minigrad/autograd.h"
#include "minigrad/nn/attention.h"
#include "minigrad/nn/functional.h"
#include "minigrad/nn/layers.h"
#include "minigrad/nn/loss.h"
#include "minigrad/ops.h"
#include "minigrad/tensor.h"

namespace mg = minigrad;
namespace F = minigrad::nn::functional;
using mg::Shape;
using mg::Tensor;

namespace {

constexpr int kMaxOps = 16;
// Results with more elements are not kept in the pool, and ops whose output could exceed
// kMaxOutput elements are skipped: the fuzzer looks for bugs, not for out-of-memory.
constexpr std::int64_t kMaxPoolNumel = 512;
constexpr std::int64_t kMaxOutput = std::int64_t{1} << 16;
constexpr std::size_t kMaxPool = 24;

/// A broken invariant (not an Error, not a sanitizer report): print and abort so that libFuzzer
/// records the input.
[[noreturn]] void invariant_failed(const std::string& what) {
  std::fprintf(stderr, "fuzz_ops: invariant violated: %s\n", what.c_str());
  std::abort();
}

/// Reads the fuzzer's bytes front to back; past the end every read gives 0.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool empty() const { return pos_ >= size_; }
  /// A value in [0, n) for n <= 256.
  std::uint32_t pick(std::uint32_t n) { return byte() % n; }
  bool flag() { return (byte() & 1) != 0; }

  /// A dim: mostly in [-6, 6], rarely an extreme value.
  std::int64_t dim() {
    std::uint8_t b = byte();
    if (b >= 248) return special_int(b);
    return static_cast<std::int64_t>(b % 13) - 6;
  }
  /// A size or count: mostly in [-1, 6], rarely an extreme value.
  std::int64_t size() {
    std::uint8_t b = byte();
    if (b >= 248) return special_int(b);
    return static_cast<std::int64_t>(b % 8) - 1;
  }
  /// An index: mostly in [-7, 7], rarely an extreme value.
  std::int64_t index() {
    std::uint8_t b = byte();
    if (b >= 248) return special_int(b);
    return static_cast<std::int64_t>(b % 15) - 7;
  }
  /// A double from a table of ordinary and nasty values.
  double real() {
    static const double kTable[] = {0.0,
                                    1.0,
                                    -1.0,
                                    0.5,
                                    2.0,
                                    -2.0,
                                    3.0,
                                    -0.5,
                                    0.1,
                                    1e-7,
                                    1e4,
                                    -1e4,
                                    1e30,
                                    -1e30,
                                    1e308,
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(),
                                    -0.0,
                                    4.9e-324,
                                    1.5,
                                    -7.25,
                                    100.0,
                                    9.3e18,
                                    -9.3e18,
                                    0.9999,
                                    1.0000001,
                                    5.0,
                                    -3.0,
                                    0.25,
                                    6.0,
                                    -100.0};
    return kTable[pick(sizeof(kTable) / sizeof(kTable[0]))];
  }
  mg::Scalar scalar() {
    switch (pick(4)) {
      case 0:
        return mg::Scalar(flag());
      case 1:
        return mg::Scalar(static_cast<long long>(index()));
      default:
        return mg::Scalar(real());
    }
  }
  mg::Dtype dtype() {
    static const mg::Dtype kDtypes[] = {mg::kFloat32, mg::kFloat64, mg::kInt64, mg::kBool};
    return kDtypes[pick(4)];
  }
  /// 0-3 dims (possibly repeated or out of range).
  Shape dims() {
    Shape d(pick(4));
    for (auto& v : d) v = dim();
    return d;
  }
  /// A shape argument of 0-5 sizes (possibly -1, negative or huge).
  Shape shape() {
    Shape s(pick(6));
    for (auto& v : s) v = size();
    return s;
  }
  std::string reduction() {
    static const char* kReductions[] = {"mean", "sum", "none", "batchmean", "", "bogus"};
    return kReductions[pick(6)];
  }

 private:
  static std::int64_t special_int(std::uint8_t b) {
    static const std::int64_t kSpecial[] = {std::numeric_limits<std::int64_t>::min(),
                                            std::numeric_limits<std::int64_t>::max(),
                                            std::numeric_limits<std::int64_t>::min() + 1,
                                            std::int64_t{1} << 32,
                                            -(std::int64_t{1} << 32),
                                            std::int64_t{1} << 62,
                                            1000,
                                            -1000};
    return kSpecial[b % 8];
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

/// An upper bound of the number of elements of the broadcast of these shapes (max per dim),
/// saturating at kMaxOutput + 1.
std::int64_t broadcast_bound(std::initializer_list<const Tensor*> ts) {
  std::size_t nd = 0;
  for (const Tensor* t : ts)
    if (t->defined()) nd = std::max(nd, t->shape().size());
  std::int64_t n = 1;
  for (std::size_t i = 0; i < nd; ++i) {
    std::int64_t m = 1;
    for (const Tensor* t : ts) {
      if (!t->defined()) continue;
      const Shape& s = t->shape();
      if (i < s.size()) m = std::max(m, s[s.size() - 1 - i]);
    }
    if (m > kMaxOutput || n * m > kMaxOutput) return kMaxOutput + 1;
    n *= m;
  }
  return n;
}

bool too_big(std::initializer_list<const Tensor*> ts) { return broadcast_bound(ts) > kMaxOutput; }

/// True for a shape that is valid but asks for more than kMaxOutput elements (a legitimately huge
/// allocation, not a bug to find); a negative size, or a product that overflows int64, is false.
bool huge_shape(const Shape& s) {
  std::int64_t n = 1;
  bool huge = false;
  for (auto v : s) {
    if (v < 0) return false;
    if (v == 0) return false;
    if (__builtin_mul_overflow(n, v, &n)) return false;
    if (n > kMaxOutput) huge = true;
  }
  return huge;
}

/// A shape argument of a creation op that is skipped: one with a huge number of elements.
bool skip_shape(const Shape& s) { return huge_shape(s); }

/// Elements of arange(start, end, step) when finite, else 0 (the op itself rejects the rest).
bool huge_range(double start, double end, double step) {
  double n = (end - start) / step;
  return std::isfinite(n) && n > static_cast<double>(kMaxOutput);
}

/// `count` values for a tensor of dtype, from `fill` and `seed`.
std::vector<double> make_values(std::int64_t count, mg::Dtype dtype, int fill, std::uint8_t seed,
                                Input& in) {
  std::vector<double> v(static_cast<std::size_t>(count));
  std::uint32_t state = seed * 2654435761u + 1;
  auto next = [&state]() {
    state = state * 1664525u + 1013904223u;
    return state >> 16;
  };
  static const double kSpecialFloats[] = {0.0,
                                          -0.0,
                                          1.0,
                                          -1.0,
                                          1e4,
                                          -1e4,
                                          3e38,
                                          -3e38,
                                          1e-40,
                                          std::numeric_limits<double>::infinity(),
                                          -std::numeric_limits<double>::infinity(),
                                          std::numeric_limits<double>::quiet_NaN(),
                                          0.5,
                                          88.8,
                                          -88.8};
  static const double kSpecialInts[] = {
      0, 1, -1, 2, -2, 5, 6, -7, 4611686018427387904.0, -9223372036854775808.0};
  for (auto& x : v) {
    switch (fill) {
      case 0:
        x = static_cast<double>(next() % 11) - 4;
        break;
      case 1:
        if (mg::is_floating_point(dtype))
          x = kSpecialFloats[next() % (sizeof(kSpecialFloats) / sizeof(double))];
        else
          x = kSpecialInts[next() % (sizeof(kSpecialInts) / sizeof(double))];
        break;
      case 2:
        x = mg::is_floating_point(dtype) ? (static_cast<double>(next() % 2001) - 1000) / 250.0
                                         : static_cast<double>(next() % 7);
        break;
      default:
        x = static_cast<double>(static_cast<std::int8_t>(in.byte())) / 16;
        break;
    }
    if (dtype == mg::kBool) x = x != 0 ? 1 : 0;
    if (dtype == mg::kInt64) x = std::trunc(x);
  }
  return v;
}

struct State {
  std::vector<Tensor> pool;
  std::vector<Tensor> leaves;  // tensors the program set requires_grad on
  std::vector<std::shared_ptr<mg::nn::MultiheadAttentionImpl>> modules;
};

/// One input tensor: random rank, sizes, dtype and values, possibly a non-contiguous view of a
/// leaf that requires grad.
Tensor make_input(Input& in, State& st) {
  Shape shape(in.pick(5));
  for (auto& s : shape) s = in.pick(6);
  mg::Dtype dtype = in.dtype();
  int fill = static_cast<int>(in.pick(4));
  std::uint8_t seed = in.byte();
  int view = static_cast<int>(in.pick(5));
  std::int64_t a = in.byte(), b = in.byte();
  bool requires_grad = in.flag() && mg::is_floating_point(dtype);
  std::int64_t nd = static_cast<std::int64_t>(shape.size());

  // The base tensor's shape, from which a view of `shape` is taken.
  Shape base = shape;
  if (view == 1 && nd >= 2) {  // transposed view
    a %= nd;
    b %= nd;
    std::swap(base[a], base[b]);
  } else if (view == 2 && nd >= 1) {  // expanded view: some dims 1 in the base
    for (std::int64_t i = 0; i < nd; ++i)
      if ((a >> (i % 8)) & 1) base[i] = 1;
  } else if (view == 3 && nd >= 1) {  // narrowed view
    a %= nd;
    base[a] += b % 3;
  } else if (view == 4 && nd >= 2) {  // permuted view (a rotation of the dims)
    std::rotate(base.begin(), base.begin() + 1, base.end());
  } else {
    view = 0;
  }
  Tensor t = mg::tensor(make_values(numel_of(base), dtype, fill, seed, in), base, dtype);
  if (requires_grad) {
    t.requires_grad_();
    st.leaves.push_back(t);
  }
  switch (view) {
    case 1:
      t = t.transpose(a, b);
      break;
    case 2:
      t = t.expand(shape);
      break;
    case 3:
      t = t.narrow(a, (b / 3) % (base[a] - shape[a] + 1), shape[a]);
      break;
    case 4: {
      Shape perm(nd);
      for (std::int64_t i = 0; i < nd; ++i) perm[i] = (i + nd - 1) % nd;
      t = t.permute(perm);
      break;
    }
    default:
      break;
  }
  if (t.shape() != shape)
    invariant_failed("input view has shape " + mg::detail::shape_str(t.shape()) + ", expected " +
                     mg::detail::shape_str(shape));
  return t;
}

/// A new int64 tensor of small random values (indices, targets), of a random or given shape.
Tensor make_index(Input& in, std::optional<Shape> shape = std::nullopt) {
  Shape s;
  if (shape) {
    s = *shape;
  } else {
    s.resize(in.pick(4));
    for (auto& v : s) v = in.pick(5);
  }
  std::int64_t n = numel_of(s);
  int mode = static_cast<int>(in.pick(4));
  std::uint8_t seed = in.byte();
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint32_t state = seed + 7u;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    std::uint32_t r = state >> 16;
    switch (mode) {
      case 0:
        x = r % 3;
        break;  // in range for most dims
      case 1:
        x = static_cast<double>(r % 15) - 7;
        break;  // often out of range
      case 2:
        x = (r % 5 == 0) ? -100 : static_cast<double>(r % 4);
        break;  // ignore_index
      default:
        x = (r % 2) ? 4611686018427387904.0 : -9223372036854775808.0;
        break;
    }
  }
  return mg::tensor(v, s, mg::kInt64);
}

/// A reshape target for x: often valid, sometimes not.
Shape reshape_target(Input& in, const Tensor& x) {
  std::int64_t n = x.numel();
  switch (in.pick(6)) {
    case 0:
      return {-1};
    case 1:
      return {n};
    case 2:
    case 3: {
      std::int64_t d = 1 + in.pick(6);
      if (n % d != 0) d = 1;
      Shape s = in.flag() ? Shape{d, -1} : Shape{-1, d};
      if (in.flag()) s.insert(s.begin() + in.pick(3), 1);
      return s;
    }
    case 4:
      return {-1, -1};
    default:
      return in.shape();
  }
}

/// Reads every element, as a user printing or checking a result would: a view with bad strides
/// or offset shows up as an ASan report here.
void touch(const Tensor& t) {
  if (!t.defined()) return;
  if (t.numel() > kMaxOutput) return;
  std::vector<double> v = t.to_vector<double>();
  if (static_cast<std::int64_t>(v.size()) != t.numel())
    invariant_failed("to_vector returned " + std::to_string(v.size()) + " values for shape " +
                     mg::detail::shape_str(t.shape()));
}

void keep(State& st, const Tensor& t) {
  if (!t.defined()) return;
  touch(t);
  if (t.numel() > kMaxPoolNumel || t.dim() > 8) return;
  if (st.pool.size() >= kMaxPool) st.pool.erase(st.pool.begin() + 1);
  st.pool.push_back(t);
}

/// An operand: a handle (an alias, as in Python) to a tensor of the pool, by value because keep()
/// may reallocate the pool.
Tensor operand(Input& in, State& st) { return st.pool[in.pick(st.pool.size())]; }

std::optional<double> maybe_real(Input& in) {
  if (in.flag()) return in.real();
  return std::nullopt;
}

/// Runs one op on operands from the pool; results go back into the pool.
void run_op(Input& in, State& st) {
  const std::uint8_t op = in.byte();
  Tensor a = operand(in, st);
  Tensor b = operand(in, st);
  switch (op % 96) {
    // ---- elementwise binary (broadcasting, promotion) ----
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7: {
      if (too_big({&a, &b})) return;
      switch (op % 8) {
        case 0:
          keep(st, mg::add(a, b));
          break;
        case 1:
          keep(st, mg::sub(a, b));
          break;
        case 2:
          keep(st, mg::mul(a, b));
          break;
        case 3:
          keep(st, mg::div(a, b));
          break;
        case 4:
          keep(st, mg::maximum(a, b));
          break;
        case 5:
          keep(st, mg::minimum(a, b));
          break;
        case 6:
          keep(st, mg::pow(a, b));
          break;
        default:
          keep(st, a * b + a / b - b);
          break;
      }
      break;
    }
    case 8: {
      if (too_big({&a, &b})) return;
      switch (in.pick(8)) {
        case 0:
          keep(st, a == b);
          break;
        case 1:
          keep(st, a != b);
          break;
        case 2:
          keep(st, a < b);
          break;
        case 3:
          keep(st, a <= b);
          break;
        case 4:
          keep(st, a > b);
          break;
        case 5:
          keep(st, a >= b);
          break;
        case 6:
          keep(st, a & b);
          break;
        default:
          keep(st, mg::logical_or(a, b));
          break;
      }
      break;
    }
    case 9: {
      mg::Scalar s = in.scalar();
      switch (in.pick(8)) {
        case 0:
          keep(st, a + s);
          break;
        case 1:
          keep(st, a - s);
          break;
        case 2:
          keep(st, a * s);
          break;
        case 3:
          keep(st, a / s);
          break;
        case 4:
          keep(st, s - a);
          break;
        case 5:
          keep(st, s / a);
          break;
        case 6:
          keep(st, a < s);
          break;
        default:
          keep(st, a == s);
          break;
      }
      break;
    }
    case 10: {
      if (too_big({&a, &b})) return;
      switch (in.pick(4)) {  // in place: throws on leaves that require grad
        case 0:
          a += b;
          break;
        case 1:
          a -= b;
          break;
        case 2:
          a *= b;
          break;
        default:
          a /= b;
          break;
      }
      touch(a);
      break;
    }
    // ---- unary ----
    case 11:
      keep(st, mg::neg(a));
      break;
    case 12:
      keep(st, mg::exp(a));
      break;
    case 13:
      keep(st, mg::log(a));
      break;
    case 14:
      keep(st, mg::sqrt(a));
      break;
    case 15:
      keep(st, mg::rsqrt(a));
      break;
    case 16:
      keep(st, mg::abs(a));
      break;
    case 17:
      keep(st, mg::sign(a));
      break;
    case 18:
      keep(st, mg::tanh(a));
      break;
    case 19:
      keep(st, mg::sigmoid(a));
      break;
    case 20:
      keep(st, mg::relu(a));
      break;
    case 21:
      keep(st, mg::erf(a));
      break;
    case 22: {
      static const char* kApprox[] = {"none", "tanh", "bogus"};
      keep(st, mg::gelu(a, kApprox[in.pick(3)]));
      break;
    }
    case 23:
      keep(st, in.flag() ? mg::logical_not(a) : ~a);
      break;
    case 24: {
      auto lo = maybe_real(in);
      auto hi = maybe_real(in);
      keep(st, mg::clamp(a, lo, hi));
      break;
    }
    case 25:
      keep(st, mg::pow(a, in.scalar()));
      break;
    case 26:
      keep(st, mg::pow(in.scalar(), a));
      break;
    case 27:
      switch (in.pick(4)) {
        case 0:
          keep(st, a.clone());
          break;
        case 1:
          keep(st, a.contiguous());
          break;
        case 2:
          keep(st, a.to(in.dtype()));
          break;
        default:
          keep(st, a.detach());
          break;
      }
      break;
    // ---- reductions ----
    case 28:
      keep(st, mg::sum(a, in.dims(), in.flag()));
      break;
    case 29:
      keep(st, mg::mean(a, in.dims(), in.flag()));
      break;
    case 30:
      keep(st, mg::amax(a, in.dims(), in.flag()));
      break;
    case 31:
      keep(st, mg::amin(a, in.dims(), in.flag()));
      break;
    case 32: {
      Shape d = in.dims();
      double correction = in.pick(4) == 0 ? in.real() : in.pick(3);
      bool keepdim = in.flag();
      keep(st, in.flag() ? mg::var(a, d, correction, keepdim) : mg::std(a, d, correction, keepdim));
      break;
    }
    case 33:
      keep(st, mg::logsumexp(a, in.dims(), in.flag()));
      break;
    case 34: {
      double p = in.real();
      Shape d = in.dims();
      keep(st, mg::norm(a, p, d, in.flag()));
      break;
    }
    case 35:
      keep(st, in.flag() ? mg::max(a) : mg::min(a));
      break;
    case 36: {
      std::int64_t d = in.dim();
      bool keepdim = in.flag();
      auto [values, indices] = in.flag() ? mg::max(a, d, keepdim) : mg::min(a, d, keepdim);
      keep(st, values);
      keep(st, indices);
      break;
    }
    case 37: {
      std::optional<std::int64_t> d;
      if (in.flag()) d = in.dim();
      bool keepdim = in.flag();
      keep(st, in.flag() ? mg::argmax(a, d, keepdim) : mg::argmin(a, d, keepdim));
      break;
    }
    // ---- linear algebra, softmax ----
    case 38:
    case 39: {
      if (a.numel() * b.numel() > kMaxOutput) return;
      switch (in.pick(3)) {
        case 0:
          keep(st, mg::matmul(a, b));
          break;
        case 1:
          keep(st, mg::mm(a, b));
          break;
        default:
          keep(st, mg::bmm(a, b));
          break;
      }
      break;
    }
    case 40:
      keep(st, mg::softmax(a, in.dim()));
      break;
    case 41:
      keep(st, mg::log_softmax(a, in.dim()));
      break;
    // ---- shape ----
    case 42:
      keep(st, a.reshape(reshape_target(in, a)));
      break;
    case 43:
      keep(st, a.view(reshape_target(in, a)));
      break;
    case 44: {
      Shape perm;
      if (in.flag()) {  // a permutation of the dims
        perm.resize(static_cast<std::size_t>(a.dim()));
        for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
        for (std::size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[in.pick(i)]);
      } else {
        perm = in.dims();
      }
      keep(st, a.permute(perm));
      break;
    }
    case 45: {
      std::int64_t d0 = in.dim(), d1 = in.dim();
      keep(st, a.transpose(d0, d1));
      break;
    }
    case 46: {
      Shape s;
      if (in.flag()) {  // a to b's shape, or a's shape with a new leading dim
        s = in.flag() ? b.shape() : a.shape();
        if (in.flag()) s.insert(s.begin(), in.size());
        if (!s.empty() && in.flag()) s[in.pick(s.size())] = -1;
      } else {
        s = in.shape();
      }
      keep(st, a.expand(s));
      break;
    }
    case 47:
      switch (in.pick(4)) {
        case 0:
          keep(st, a.squeeze());
          break;
        case 1:
          keep(st, a.squeeze(in.dim()));
          break;
        case 2:
          keep(st, a.unsqueeze(in.dim()));
          break;
        default:
          keep(st, a.t());
          break;
      }
      break;
    case 48: {
      std::int64_t d = in.dim(), start = in.index(), length = in.size();
      keep(st, a.narrow(d, start, length));
      break;
    }
    case 49: {
      std::int64_t d = in.dim(), i = in.index();
      keep(st, a.select(d, i));
      break;
    }
    case 50: {
      std::int64_t s = in.dim(), e = in.dim();
      keep(st, a.flatten(s, e));
      break;
    }
    case 51:
    case 52: {
      std::vector<Tensor> list;
      std::uint32_t n = in.pick(4);
      for (std::uint32_t i = 0; i < n; ++i) list.push_back(operand(in, st));
      if (in.flag()) list.push_back(Tensor());  // an undefined tensor in the list
      std::int64_t d = in.dim();
      keep(st, op % 96 == 51 ? mg::cat(list, d) : mg::stack(list, d));
      break;
    }
    case 53: {
      std::vector<Tensor> parts;
      std::int64_t d = in.dim();
      switch (in.pick(3)) {
        case 0:
          parts = a.split(in.size(), d);
          break;
        case 1:
          parts = a.split(in.shape(), d);
          break;
        default:
          parts = a.chunk(in.size(), d);
          break;
      }
      for (const Tensor& p : parts) keep(st, p);
      break;
    }
    // ---- indexing ----
    case 54: {
      std::int64_t d = in.dim();
      Tensor index = in.flag() ? b : make_index(in);
      keep(st, a.index_select(d, index));
      break;
    }
    case 55: {
      std::int64_t d = in.dim();
      Tensor index = in.flag() ? b : make_index(in);
      keep(st, a.gather(d, index));
      break;
    }
    case 56: {
      std::int64_t d = in.dim();
      Tensor index = make_index(in);
      Tensor src = operand(in, st);
      keep(st, mg::scatter_add(a, d, index, src));
      break;
    }
    case 57: {
      std::int64_t d = in.dim();
      Tensor index = make_index(in);
      Tensor source = operand(in, st);
      keep(st, mg::index_add(a, d, index, source));
      break;
    }
    case 58: {
      Tensor c = operand(in, st);
      if (too_big({&a, &b, &c})) return;
      switch (in.pick(3)) {
        case 0:
          keep(st, mg::where(c, a, b));
          break;
        case 1:
          keep(st, mg::where(c, a, in.scalar()));
          break;
        default:
          keep(st, mg::where(c, in.scalar(), b));
          break;
      }
      break;
    }
    case 59: {
      if (too_big({&a, &b})) return;
      keep(st, a.masked_fill(b, in.scalar()));
      break;
    }
    case 60:
      keep(st, in.flag() ? a.tril(in.index()) : a.triu(in.index()));
      break;
    case 61:
      keep(st, make_index(in));
      break;
    case 62:
      keep(st, make_input(in, st));
      break;
    // ---- creation with random arguments ----
    case 63: {
      Shape s = in.shape();
      mg::Dtype dt = in.dtype();
      if (skip_shape(s)) return;
      switch (in.pick(6)) {
        case 0:
          keep(st, mg::zeros(s, dt));
          break;
        case 1:
          keep(st, mg::full(s, in.scalar(), dt));
          break;
        case 2:
          keep(st, mg::randn(s, dt));
          break;
        case 3:
          keep(st, mg::rand(s, dt));
          break;
        case 4: {
          std::int64_t lo = in.index(), hi = in.index();
          keep(st, mg::randint(lo, hi, s, dt));
          break;
        }
        default: {
          std::vector<double> v(in.pick(8), in.real());
          keep(st, mg::tensor(v, s, dt));
          break;
        }
      }
      break;
    }
    case 64: {
      double start = in.real(), end = in.real(), step = in.real();
      switch (in.pick(4)) {
        case 0:
          if (huge_range(start, end, step)) return;
          keep(st, mg::arange(start, end, step, in.dtype()));
          break;
        case 1:
          keep(st, mg::arange(mg::Scalar(static_cast<long long>(in.index()))));
          break;
        case 2: {
          // As arange's: a huge count (INT64_MAX, 2^31) would ask for gigabytes and stop the
          // campaign, not find a bug (issue 36: linspace asked for 16 GiB).
          const std::int64_t steps = in.size();
          if (steps > kMaxOutput) return;
          keep(st, mg::linspace(start, end, steps, in.dtype()));
          break;
        }
        default: {
          std::int64_t n = in.size();
          std::optional<std::int64_t> m;
          if (in.flag()) m = in.size();
          if (skip_shape({n, m.value_or(n)})) return;
          keep(st, mg::eye(n, m, in.dtype()));
          break;
        }
      }
      break;
    }
    case 65: {
      std::int64_t lo = in.index(), hi = in.index();
      std::optional<double> opt_lo = maybe_real(in);
      Shape s = in.shape();
      if (in.flag() && !skip_shape(s)) keep(st, mg::randint(lo, hi, s));
      if (opt_lo) keep(st, mg::full_like(a, *opt_lo));
      keep(st, in.flag() ? mg::rand_like(a) : mg::randn_like(a));
      break;
    }
    // ---- data access ----
    case 66:
      switch (in.pick(6)) {
        case 0:
          (void)a.item<double>();
          break;
        case 1:
          (void)a.item<std::int64_t>();
          break;
        case 2:
          (void)a.item<bool>();
          break;
        case 3:
          (void)a.to_vector<float>();
          break;
        case 4:
          (void)a.to_vector<std::int32_t>();
          break;
        default:
          (void)a.to_vector<std::int64_t>();
          break;
      }
      break;
    case 67:
      switch (in.pick(4)) {
        case 0:
          (void)a.data_ptr<float>();
          break;
        case 1:
          (void)a.data_ptr<double>();
          break;
        case 2:
          (void)a.data_ptr<std::int64_t>();
          break;
        default:
          (void)a.data_ptr<bool>();
          break;
      }
      break;
    case 68: {
      if (a.numel() > kMaxPoolNumel) return;
      std::ostringstream os;
      os << a;
      break;
    }
    case 69: {
      if (too_big({&a, &b})) return;
      if (in.flag()) {
        (void)mg::equal(a, b);
      } else {
        double rtol = in.real(), atol = in.real();
        (void)mg::allclose(a, b, rtol, atol);
      }
      break;
    }
    case 70:
      if (in.flag()) {
        a.fill_(in.scalar());
      } else {
        a.copy_(b);
      }
      touch(a);
      break;
    // ---- autograd on the way ----
    case 71:
      if (in.flag()) {
        a.requires_grad_(in.flag());
        if (a.requires_grad()) st.leaves.push_back(a);
      } else {
        a.retain_grad();
      }
      break;
    case 72: {
      // A hook that keeps, scales or replaces the gradient, possibly with a wrong shape or dtype.
      int kind = static_cast<int>(in.pick(5));
      Shape s = in.shape();
      mg::Dtype dt = in.dtype();
      if (skip_shape(s)) return;
      a.register_hook([kind, s, dt](const Tensor& g) -> Tensor {
        switch (kind) {
          case 0:
            return Tensor();
          case 1:
            return g * 2.0;
          case 2:
            return mg::zeros(s, dt);
          case 3:
            return g.to(dt);
          default:
            return g.sum();
        }
      });
      break;
    }
    case 73: {
      mg::NoGradGuard guard;
      keep(st, a * b.detach());
      break;
    }
    case 74: {
      // Backward in the middle of the program (retain_graph or not); later ops keep going.
      Tensor r = a.sum();
      r.backward(Tensor(), in.flag(), false);
      break;
    }
    // ---- nn::functional ----
    case 75: {
      Tensor bias = in.flag() ? operand(in, st) : Tensor();
      if (a.numel() * b.numel() > kMaxOutput) return;
      keep(st, F::linear(a, b, bias));
      break;
    }
    case 76: {
      if (too_big({&a, &b})) return;
      keep(st, F::mse_loss(a, b, in.reduction()));
      break;
    }
    case 77: {
      Tensor v = operand(in, st);
      Tensor mask = in.flag() ? operand(in, st) : Tensor();
      bool causal = in.flag();
      std::optional<double> scale = maybe_real(in);
      if (a.numel() * b.numel() > kMaxOutput || b.numel() * v.numel() > kMaxOutput) return;
      keep(st, F::scaled_dot_product_attention(a, b, v, mask, 0.0, causal, scale));
      break;
    }
    case 78:
    case 79: {
      // Class-index targets shaped for a, or the pool's b (probabilities, wrong shapes...).
      Tensor target = b;
      if (in.flag()) {
        Shape s;
        if (a.dim() == 1) {
          s = {};
        } else if (a.dim() >= 2) {
          s = a.shape();
          s.erase(s.begin() + 1);
        }
        target = make_index(in, s);
      }
      Tensor weight;
      if (in.flag())
        weight = in.flag() ? operand(in, st)
                           : mg::rand({a.dim() >= 2 ? a.size(1) : (a.dim() == 1 ? a.size(0) : 1)});
      std::int64_t ignore_index = in.flag() ? -100 : in.index();
      std::string reduction = in.reduction();
      if (op % 96 == 78) {
        double ls = in.flag() ? 0.0 : in.real();
        keep(st, F::cross_entropy(a, target, weight, ignore_index, reduction, ls));
      } else {
        keep(st, F::nll_loss(a, target, weight, ignore_index, reduction));
      }
      break;
    }
    case 80: {
      if (too_big({&a, &b})) return;
      std::string reduction = in.reduction();
      keep(st, F::kl_div(a, b, reduction, in.flag()));
      break;
    }
    case 81: {
      Tensor weight = in.flag() ? operand(in, st) : Tensor();
      Tensor pos_weight = in.flag() ? operand(in, st) : Tensor();
      if (too_big({&a, &b, &weight, &pos_weight})) return;
      std::string reduction = in.reduction();
      keep(st, F::binary_cross_entropy_with_logits(a, b, weight, reduction, pos_weight));
      break;
    }
    case 82: {
      Tensor index = in.flag() ? a : make_index(in);
      if (index.numel() * b.numel() > kMaxOutput) return;
      keep(st, F::embedding(index, b));
      break;
    }
    case 83: {
      Shape ns;
      if (in.flag() && a.dim() > 0) {  // a's trailing dims
        std::int64_t k = 1 + in.pick(static_cast<std::uint32_t>(a.dim()));
        ns.assign(a.shape().end() - k, a.shape().end());
      } else {
        ns = in.shape();
      }
      Tensor w = in.flag() ? operand(in, st) : Tensor();
      Tensor bias = in.flag() ? operand(in, st) : Tensor();
      double eps = in.flag() ? 1e-5 : in.real();
      keep(st, F::layer_norm(a, ns, w, bias, eps));
      break;
    }
    case 84: {
      double p = in.flag() ? 0.5 : in.real();
      keep(st, F::dropout(a, p, in.flag()));
      break;
    }
    case 85: {
      switch (in.pick(3)) {
        case 0:
          keep(st, F::relu(a));
          break;
        case 1:
          keep(st, F::softmax(a, in.dim()));
          break;
        default:
          keep(st, F::log_softmax(a, in.dim()));
          break;
      }
      break;
    }
    case 86: {
      // nn::MultiheadAttention with small random sizes, then a forward with pool operands.
      std::int64_t embed = in.size(), heads = in.size();
      if (skip_shape({embed, embed})) return;  // in_proj_weight is (3 embed, embed)
      bool bias = in.flag(), batch_first = in.flag();
      auto mha = std::make_shared<mg::nn::MultiheadAttentionImpl>(
          embed, heads, bias, batch_first, in.flag() ? mg::kFloat32 : mg::kFloat64);
      st.modules.push_back(mha);
      Tensor v = operand(in, st);
      Tensor kpm = in.flag() ? operand(in, st) : Tensor();
      bool need_weights = in.flag();
      Tensor mask = in.flag() ? operand(in, st) : Tensor();
      bool average = in.flag();
      if (a.numel() * b.numel() > kMaxOutput) return;
      auto [out, weights] = (*mha)(a, b, v, kpm, need_weights, mask, average);
      keep(st, out);
      keep(st, weights);
      break;
    }
    case 87: {
      // a second-order gradient: autograd::grad with create_graph, then backward through it.
      std::vector<Tensor> inputs;
      for (const Tensor& l : st.leaves) inputs.push_back(l);
      if (inputs.empty() || !a.requires_grad()) return;
      bool allow_unused = in.flag();
      std::vector<Tensor> g =
          mg::autograd::grad({a.sum()}, inputs, {}, std::nullopt, true, allow_unused);
      for (const Tensor& gi : g) keep(st, gi);
      break;
    }
    case 88: {
      // In-place binary ops with autograd, on the operand itself or on a clone (issue 18).
      Tensor y = in.flag() ? a.clone() : a;
      switch (in.pick(6)) {
        case 0:
          y.add_(b, in.real());
          break;
        case 1:
          y.sub_(b);
          break;
        case 2:
          y.mul_(b);
          break;
        case 3:
          y.div_(b);
          break;
        case 4:
          y.pow_(b);
          break;
        default:
          y.copy_(b);
          break;
      }
      keep(st, y);
      break;
    }
    case 89: {
      // In-place unary ops, possibly on a view of a clone (CopySlices); the base goes back too.
      Tensor base = in.flag() ? a.clone() : a;
      Tensor y = base;
      if (base.dim() >= 1 && base.size(0) > 0 && in.flag()) y = base.select(0, 0);
      if (base.dim() >= 2 && in.flag()) y = base.transpose(0, 1);
      switch (in.pick(7)) {
        case 0:
          y.exp_();
          break;
        case 1:
          y.relu_();
          break;
        case 2:
          y.clamp_(maybe_real(in), maybe_real(in));
          break;
        case 3:
          y.fill_(in.real());
          break;
        case 4:
          y.zero_();
          break;
        case 5:
          y.masked_fill_(b, in.real());
          break;
        default:
          y *= in.real();
          break;
      }
      keep(st, y);
      keep(st, base);
      break;
    }
    case 90: {
      // A hook that registers more hooks, or returns a gradient of another shape or dtype.
      if (!a.requires_grad()) return;
      int kind = static_cast<int>(in.pick(3));
      // A weak handle: the hook lives in the tensor's own node (or leaf), so a strong one would be
      // a reference cycle.
      std::weak_ptr<mg::TensorImpl> self = a.impl_ptr();
      a.register_hook([self, kind](const Tensor& g) {
        if (kind == 0)
          if (auto t = self.lock()) Tensor(t).register_hook([](const Tensor&) { return Tensor(); });
        if (kind == 1) return g.sum();
        if (kind == 2) return g.to(g.dtype() == mg::kFloat32 ? mg::kFloat64 : mg::kFloat32);
        return Tensor();
      });
      keep(st, a * 1.0);
      break;
    }
    case 91: {
      // Printing under random print options (huge edgeitems, zero threshold).
      mg::PrintOptions saved = mg::get_printoptions();
      mg::PrintOptions o = saved;
      o.edgeitems =
          in.flag() ? (std::int64_t{1} << in.pick(63)) : static_cast<std::int64_t>(in.pick(4));
      o.threshold = static_cast<std::int64_t>(in.pick(8));
      o.precision = static_cast<int>(in.pick(10));
      if (a.numel() <= kMaxOutput) {
        mg::set_printoptions(o);
        std::ostringstream os;
        os << a;
        mg::set_printoptions(saved);
      }
      break;
    }
    case 92: {
      // Views with extreme sizes: narrow with a huge length, expand to a negative size.
      if (a.dim() == 0) return;
      std::int64_t huge =
          std::numeric_limits<std::int64_t>::max() - static_cast<std::int64_t>(in.pick(4));
      if (in.flag()) {
        keep(st, a.narrow(in.dim(), static_cast<std::int64_t>(in.pick(3)), huge));
      } else {
        Shape s = a.shape();
        s[0] = in.flag() ? -static_cast<std::int64_t>(in.pick(8)) - 2 : -1;
        keep(st, a.expand(s));
      }
      break;
    }
    default: {
      // Views of views: narrow a transposed / expanded operand and compute through it.
      Tensor v = a.dim() >= 2 ? a.transpose(0, -1) : a.unsqueeze(0);
      keep(st, mg::sum(v * 2.0, {in.dim()}, in.flag()));
      break;
    }
  }
}

/// The end of the program: backward from the last result in one of several ways, then check
/// every leaf's gradient.
void finish(Input& in, State& st) {
  Tensor r = st.pool.back();
  int mode = static_cast<int>(in.pick(6));
  if (!r.defined() || !r.requires_grad()) return;
  try {
    switch (mode) {
      case 0:
        if (r.is_floating_point()) r.sum().backward();
        break;
      case 1:
        r.backward();
        break;  // throws unless r has one element
      case 2: {
        Shape s = in.flag() ? r.shape() : in.shape();
        mg::Dtype dt = in.flag() ? r.dtype() : in.dtype();
        if (skip_shape(s)) return;
        Tensor g = mg::full(s, in.real(), dt);
        if (in.flag() && g.dim() >= 2) g = g.transpose(0, 1);
        r.backward(g);
        break;
      }
      case 3: {
        Tensor s = r.sum();
        bool create_graph = in.flag();
        s.backward(Tensor(), true, create_graph);
        s.backward();  // a second time, after retain_graph
        if (create_graph) {
          for (const Tensor& l : st.leaves) {
            Tensor g = l.grad();
            if (g.defined() && g.requires_grad()) g.sum().backward();
          }
        }
        break;
      }
      case 4: {
        Tensor s = r.sum();
        s.backward();
        s.backward();  // throws when the graph saved tensors
        break;
      }
      default: {
        std::vector<Tensor> leaves = st.leaves;
        if (leaves.empty()) return;
        std::vector<Tensor> g =
            mg::autograd::grad({r.sum()}, leaves, {}, std::nullopt, in.flag(), in.flag());
        for (std::size_t i = 0; i < g.size(); ++i) {
          if (g[i].defined() && g[i].shape() != leaves[i].shape())
            invariant_failed("autograd::grad returned shape " +
                             mg::detail::shape_str(g[i].shape()) + " for an input of shape " +
                             mg::detail::shape_str(leaves[i].shape()));
          touch(g[i]);
        }
        break;
      }
    }
  } catch (const mg::Error&) {
  }
  for (const Tensor& l : st.leaves) {
    Tensor g = l.grad();
    if (!g.defined()) continue;
    if (g.shape() != l.shape() || g.dtype() != l.dtype())
      invariant_failed("a leaf of shape " + mg::detail::shape_str(l.shape()) + " and dtype " +
                       mg::dtype_name(l.dtype()) + " got a gradient of shape " +
                       mg::detail::shape_str(g.shape()) + " and dtype " +
                       mg::dtype_name(g.dtype()));
    touch(g);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  mg::GradModeGuard grad_mode(true);  // restores the thread's grad mode after the run
  mg::manual_seed(0);
  State st;
  const std::uint8_t header = in.byte();
  const int n_inputs = 1 + header % 4;
  const int n_ops = (header / 4) % (kMaxOps + 1);
  for (int i = 0; i < n_inputs; ++i) {
    try {
      st.pool.push_back(make_input(in, st));
    } catch (const mg::Error&) {
    }
  }
  if (st.pool.empty()) st.pool.push_back(mg::zeros({2, 3}));
  for (int i = 0; i < n_ops; ++i) {
    try {
      run_op(in, st);
    } catch (const mg::Error&) {
    }
  }
  finish(in, st);
  return 0;
}
