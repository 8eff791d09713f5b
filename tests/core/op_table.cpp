// The op table: samples and error inputs of every differentiable op (see op_table.h).
#include "core/op_table.h"

#include "attention_function.h"

#include <cmath>
#include <utility>

namespace minigrad::testing {

using autograd::GradcheckFn;
using V = std::vector<Tensor>;

double sample_value(std::int64_t i, std::int64_t seed) {
  double t = static_cast<double>(i + 1) * 0.6180339887498949 +
             static_cast<double>(seed) * 0.4142135623730951;
  t = t - std::floor(t);
  return t < 0.5 ? 3.6 * t - 2.0 : 3.6 * t - 1.6;
}

Tensor make(const Shape& shape, std::int64_t seed) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = sample_value(i, seed);
  return tensor(v, shape, kFloat64);
}

Tensor arg(const Shape& shape, std::int64_t seed) { return make(shape, seed).requires_grad_(); }

Tensor arg_pos(const Shape& shape, std::int64_t seed) {
  return abs(make(shape, seed)).requires_grad_();
}

Tensor arg_t(const Shape& base_shape, std::int64_t seed) {
  return make(base_shape, seed).detach().transpose(0, 1).requires_grad_();
}

Tensor indices(const std::vector<double>& values, const Shape& shape) {
  return tensor(values, shape, kInt64);
}

Tensor mask(const std::vector<double>& values, const Shape& shape) {
  return tensor(values, shape, kBool);
}

namespace {

Sample s(std::string desc, V inputs, GradcheckFn fn = {}) {
  return Sample{std::move(desc), std::move(inputs), std::move(fn)};
}

ErrorInput e(std::string op, std::string desc, std::function<void()> call) {
  return ErrorInput{std::move(desc), std::move(op), std::move(call)};
}

using Maker = Tensor (*)(const Shape&, std::int64_t);
using BinaryOp = Tensor (*)(const Tensor&, const Tensor&);

/// Samples of a broadcasting binary op; `ma` and `mb` make the two operands (arg or arg_pos).
std::vector<Sample> binary_samples(Maker ma, Maker mb, BinaryOp op) {
  auto ma_t = [ma](const Shape& base, std::int64_t seed) {
    // A non-contiguous leaf with ma's values.
    return ma(base, seed).detach().transpose(0, 1).requires_grad_();
  };
  return {
      s("same shape", {ma({2, 3}, 1), mb({2, 3}, 2)}),
      s("broadcast row", {ma({2, 3}, 1), mb({3}, 2)}),
      s("broadcast size-1 dims", {ma({2, 1}, 1), mb({1, 3}, 2)}),
      s("0-dim operand", {ma({}, 1), mb({2, 3}, 2)}),
      s("non-contiguous", {ma_t({3, 2}, 1), mb({2, 3}, 2)}),
      s("both non-contiguous, broadcast", {ma_t({3, 2}, 1), ma_t({1, 2}, 2)}),
      s("expanded inside fn", {ma({3}, 1), mb({4, 3}, 2)},
        [op](const V& v) {
          return op(v[0].expand({4, 3}), v[1]);
        }),
      s("3-D broadcast", {ma({2, 1, 3}, 1), mb({4, 1}, 2)}),
      s("empty", {ma({0, 3}, 1), mb({3}, 2)}),
      s("only b requires grad", {ma({2, 3}, 1).detach(), mb({2, 3}, 2)}),
  };
}

/// Samples of a unary op on inputs made by m.
std::vector<Sample> unary_samples(Maker m) {
  return {
      s("2-D", {m({2, 3}, 1)}),
      s("non-contiguous", {m({3, 2}, 2).detach().transpose(0, 1).requires_grad_()}),
      s("0-dim", {m({}, 3)}),
      s("size-1 dims", {m({1, 4, 1}, 4)}),
      s("empty", {m({0, 2}, 5)}),
  };
}

OpInfo entry(std::string name, GradcheckFn fn, std::vector<Sample> samples,
             std::vector<ErrorInput> errors = {}, bool gradgrad = true) {
  OpInfo op;
  op.name = std::move(name);
  op.fn = std::move(fn);
  op.samples = std::move(samples);
  op.error_inputs = std::move(errors);
  op.gradgrad = gradgrad;
  return op;
}

Tensor undefined() { return Tensor(); }

// ---------------------------------------------------------------- elementwise

void add_elementwise(std::vector<OpInfo>& t) {
  auto bad_broadcast = [](Tensor (*op)(const Tensor&, const Tensor&)) {
    return [op] { op(make({2, 3}, 1), make({4}, 2)); };
  };
  t.push_back(
      entry("add", [](const V& v) { return add(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return add(a, b); }),
            {e("add", "shapes (2, 3) and (4,) do not broadcast",
               bad_broadcast([](const Tensor& a, const Tensor& b) { return add(a, b); })),
             e("add", "undefined operand", [] { add(undefined(), make({2}, 1)); })}));
  t.push_back(
      entry("sub", [](const V& v) { return sub(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return sub(a, b); }),
            {e("sub", "shapes (2, 3) and (4,) do not broadcast",
               bad_broadcast([](const Tensor& a, const Tensor& b) { return sub(a, b); })),
             e("sub", "bool - bool", [] {
               sub(mask({1, 0}, {2}), mask({0, 1}, {2}));
             })}));
  t.push_back(
      entry("mul", [](const V& v) { return mul(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return mul(a, b); }),
            {e("mul", "shapes (2, 3) and (4,) do not broadcast",
               bad_broadcast([](const Tensor& a, const Tensor& b) { return mul(a, b); }))}));
  t.push_back(
      entry("div", [](const V& v) { return div(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return div(a, b); }),
            {e("div", "shapes (2, 3) and (4,) do not broadcast",
               bad_broadcast([](const Tensor& a, const Tensor& b) { return div(a, b); }))}));
  t.push_back(entry(
      "maximum", [](const V& v) { return maximum(v[0], v[1]); },
      binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return maximum(a, b); }),
      {e("maximum", "shapes (2, 3) and (4,) do not broadcast",
         bad_broadcast([](const Tensor& a, const Tensor& b) { return maximum(a, b); }))}));
  t.push_back(entry(
      "minimum", [](const V& v) { return minimum(v[0], v[1]); },
      binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return minimum(a, b); }),
      {e("minimum", "shapes (2, 3) and (4,) do not broadcast",
         bad_broadcast([](const Tensor& a, const Tensor& b) { return minimum(a, b); }))}));
  t.push_back(entry(
      "pow_tensor", [](const V& v) { return pow(v[0], v[1]); },
      binary_samples(arg_pos, arg, [](const Tensor& a, const Tensor& b) { return pow(a, b); }),
      {e("pow", "int64 base and int64 exponent tensors",
         [] {
           pow(indices({1, 2}, {2}), indices({2, 3}, {2}));
         }),
       e("pow", "shapes (2, 3) and (4,) do not broadcast",
         bad_broadcast([](const Tensor& a, const Tensor& b) { return pow(a, b); }))}));

  // Scalar forms (a float and an int Scalar: both keep float64).
  auto scalar_samples = [](Maker m) {
    std::vector<Sample> r = unary_samples(m);
    r.push_back(s("1-D", {m({3}, 6)}));
    return r;
  };
  t.push_back(entry("add_scalar", [](const V& v) { return add(add(v[0], 2.5), 3); },
                    scalar_samples(arg),
                    {e("add", "undefined tensor", [] { add(undefined(), 2.0); })}));
  t.push_back(entry("sub_scalar", [](const V& v) { return sub(sub(v[0], 2.5), 3); },
                    scalar_samples(arg),
                    {e("sub", "undefined tensor", [] { sub(undefined(), 2.0); })}));
  t.push_back(entry("mul_scalar", [](const V& v) { return mul(mul(v[0], 2.5), -3); },
                    scalar_samples(arg),
                    {e("mul", "undefined tensor", [] { mul(undefined(), 2.0); })}));
  t.push_back(entry("div_scalar", [](const V& v) { return div(div(v[0], 2.5), -3); },
                    scalar_samples(arg),
                    {e("div", "undefined tensor", [] { div(undefined(), 2.0); })}));
  t.push_back(entry("rsub_scalar", [](const V& v) { return 2.5 - v[0]; }, scalar_samples(arg),
                    {e("sub", "undefined tensor", [] { 2.5 - undefined(); })}));
  t.push_back(entry("rdiv_scalar", [](const V& v) { return 2.5 / v[0]; }, scalar_samples(arg),
                    {e("div", "undefined tensor", [] { 2.5 / undefined(); })}));

  // Unary math.
  t.push_back(entry("neg", [](const V& v) { return neg(v[0]); }, unary_samples(arg),
                    {e("neg", "bool tensor", [] {
                      neg(mask({1, 0}, {2}));
                    })}));
  t.push_back(entry("exp", [](const V& v) { return exp(v[0]); }, unary_samples(arg),
                    {e("exp", "undefined tensor", [] { exp(undefined()); })}));
  t.push_back(entry("log", [](const V& v) { return log(v[0]); }, unary_samples(arg_pos),
                    {e("log", "undefined tensor", [] { log(undefined()); })}));
  t.push_back(entry("sqrt", [](const V& v) { return sqrt(v[0]); }, unary_samples(arg_pos),
                    {e("sqrt", "undefined tensor", [] { sqrt(undefined()); })}));
  t.push_back(entry("rsqrt", [](const V& v) { return rsqrt(v[0]); }, unary_samples(arg_pos),
                    {e("rsqrt", "undefined tensor", [] { rsqrt(undefined()); })}));
  t.push_back(entry("abs", [](const V& v) { return abs(v[0]); }, unary_samples(arg),
                    {e("abs", "undefined tensor", [] { abs(undefined()); })}));
  t.push_back(entry("sign", [](const V& v) { return sign(v[0]); }, unary_samples(arg),
                    {e("sign", "undefined tensor", [] { sign(undefined()); })}));
  t.push_back(entry("tanh", [](const V& v) { return tanh(v[0]); }, unary_samples(arg),
                    {e("tanh", "undefined tensor", [] { tanh(undefined()); })}));
  t.push_back(entry("sigmoid", [](const V& v) { return sigmoid(v[0]); }, unary_samples(arg),
                    {e("sigmoid", "undefined tensor", [] { sigmoid(undefined()); })}));
  t.push_back(entry("relu", [](const V& v) { return relu(v[0]); }, unary_samples(arg),
                    {e("relu", "bool tensor", [] {
                      relu(mask({1, 0}, {2}));
                    })}));
  t.push_back(entry("erf", [](const V& v) { return erf(v[0]); }, unary_samples(arg),
                    {e("erf", "undefined tensor", [] { erf(undefined()); })}));
  t.push_back(entry("gelu", [](const V& v) { return gelu(v[0]); }, unary_samples(arg),
                    {e("gelu", "unknown approximate", [] { gelu(make({2}, 1), "fast"); }),
                     e("gelu", "int64 tensor", [] {
                       gelu(indices({1, 2}, {2}));
                     })}));
  t.push_back(entry(
      "gelu_tanh", [](const V& v) { return gelu(v[0], "tanh"); }, unary_samples(arg)));
  t.push_back(entry("silu", [](const V& v) { return silu(v[0]); }, unary_samples(arg),
                    {e("silu", "undefined tensor", [] { silu(undefined()); })}));
  t.push_back(entry("mish", [](const V& v) { return mish(v[0]); }, unary_samples(arg),
                    {e("mish", "undefined tensor", [] { mish(undefined()); })}));
  {
    std::vector<Sample> r = unary_samples(arg);
    r.push_back(s("min only", {arg({3, 4}, 7)},
                  [](const V& v) { return clamp(v[0], -0.5, std::nullopt); }));
    r.push_back(
        s("max only", {arg({3, 4}, 8)}, [](const V& v) { return clamp(v[0], std::nullopt, 0.7); }));
    r.push_back(s("non-contiguous, min only", {arg_t({4, 3}, 9)},
                  [](const V& v) { return clamp(v[0], 0.1); }));
    t.push_back(entry("clamp", [](const V& v) { return clamp(v[0], -0.5, 0.7); }, std::move(r),
                      {e("clamp", "neither bound", [] { clamp(make({2}, 1), std::nullopt); }),
                       e("clamp", "bool tensor", [] {
                         clamp(mask({1, 0}, {2}), 0.0, 1.0);
                       })}));
  }
  {
    std::vector<Sample> r = unary_samples(arg);  // exponent 2
    r.push_back(s("exponent 3 (int)", {arg({2, 3}, 6)}, [](const V& v) { return pow(v[0], 3); }));
    r.push_back(s("exponent 0.5", {arg_pos({2, 3}, 7)}, [](const V& v) { return pow(v[0], 0.5); }));
    r.push_back(
        s("exponent -1.5", {arg_pos({2, 3}, 8)}, [](const V& v) { return pow(v[0], -1.5); }));
    r.push_back(s("exponent 0", {arg({2, 3}, 9)}, [](const V& v) { return pow(v[0], 0); }));
    r.push_back(s("exponent 1", {arg({2, 3}, 10)}, [](const V& v) { return pow(v[0], 1.0); }));
    t.push_back(
        entry("pow_scalar", [](const V& v) { return pow(v[0], 2); }, std::move(r),
              {e("pow", "int64 to a negative int power", [] { pow(indices({2}, {1}), -1); }),
               e("pow", "undefined tensor", [] { pow(undefined(), 2.0); })}));
  }
  {
    std::vector<Sample> r = unary_samples(arg);  // base 2.5
    r.push_back(s("base 0.5", {arg({2, 3}, 6)}, [](const V& v) { return pow(0.5, v[0]); }));
    t.push_back(entry("pow_scalar_base", [](const V& v) { return pow(2.5, v[0]); }, std::move(r),
                      {e("pow", "undefined exponent", [] { pow(2.0, undefined()); })}));
  }

  // where and masked_fill.
  Tensor c23 = mask({1, 0, 0, 1, 1, 0}, {2, 3});
  Tensor c3 = mask({0, 1, 1}, {3});
  t.push_back(entry(
      "where", [](const V& v) { return where(v[0], v[1], v[2]); },
      {s("same shape", {c23, arg({2, 3}, 1), arg({2, 3}, 2)}),
       s("broadcast cond, a and b", {c3, arg({2, 3}, 1), arg({2, 1}, 2)}),
       s("non-contiguous", {c23, arg_t({3, 2}, 1), arg({3}, 2)}),
       s("0-dim operand", {c23, arg({}, 1), arg({2, 3}, 2)}),
       s("scalar b", {c23, arg({2, 3}, 3)}, [](const V& v) { return where(v[0], v[1], 0.5); }),
       s("scalar a", {c3, arg({2, 3}, 4)}, [](const V& v) { return where(v[0], -1.5, v[1]); }),
       s("cond broadcasts a and b", {c23, arg({3}, 5), arg({}, 6)}),
       s("empty", {mask({}, {0, 3}), arg({0, 3}, 1), arg({3}, 2)})},
      {e("where", "int64 condition",
         [] {
           where(indices({1, 0}, {2}), make({2}, 1), make({2}, 2));
         }),
       e("where", "shapes do not broadcast", [] {
         where(mask({1, 0}, {2}), make({3}, 1), make({3}, 2));
       })}));
  t.push_back(
      entry("masked_fill", [](const V& v) { return masked_fill(v[0], v[1], -2.5); },
            {s("same shape", {arg({2, 3}, 1), c23}), s("broadcast mask", {arg({2, 3}, 2), c3}),
             s("size-1 mask dim", {arg({2, 3}, 3), mask({1, 0}, {2, 1})}),
             s("non-contiguous", {arg_t({3, 2}, 4), c23}),
             s("-inf fill, then softmax (attention mask)", {arg({3, 3}, 5)},
               [](const V& v) {
                 return softmax(masked_fill(v[0], triu(ones({3, 3}), 1).to(kBool), -INFINITY), -1);
               }),
             s("empty", {arg({0, 3}, 6), c3})},
            {e("masked_fill", "int64 mask",
               [] {
                 masked_fill(make({2}, 1), indices({1, 0}, {2}), 0.0);
               }),
             e("masked_fill", "mask larger than the tensor", [] {
               masked_fill(make({3}, 1), mask({1, 0, 1, 0, 1, 0}, {2, 3}), 0.0);
             })}));
}

// ---------------------------------------------------------------- reductions

void add_reductions(std::vector<OpInfo>& t) {
  auto dim_errors = [](const char* op, std::function<void(const Tensor&, const Shape&)> call) {
    return std::vector<ErrorInput>{e(op, "dim out of range",
                                     [call] {
                                       call(make({2, 3}, 1), {2});
                                     }),
                                   e(op, "repeated dim", [call] {
                                     call(make({2, 3}, 1), {1, -1});
                                   })};
  };
  t.push_back(entry(
      "sum", [](const V& v) { return sum(v[0]); },
      {s("all", {arg({2, 3}, 1)}),
       s("dim 1", {arg({2, 3}, 2)}, [](const V& v) { return sum(v[0], {1}); }),
       s("dim 0 keepdim", {arg({2, 3}, 3)}, [](const V& v) { return sum(v[0], {0}, true); }),
       s("dims 0, 2 of 3-D", {arg({2, 3, 4}, 4)},
         [](const V& v) {
           return sum(v[0], {0, 2});
         }),
       s("negative dim", {arg({2, 3, 4}, 5)}, [](const V& v) { return sum(v[0], {-2}); }),
       s("non-contiguous", {arg_t({3, 2}, 6)}, [](const V& v) { return sum(v[0], {1}); }),
       s("non-contiguous 3-D, dims 0, 2", {arg_t({3, 2, 4}, 13)},
         [](const V& v) {
           return sum(v[0], {0, 2});
         }),
       s("0-dim", {arg({}, 7)}),
       s("0-dim, dim 0", {arg({}, 11)}, [](const V& v) { return sum(v[0], {0}); }),
       s("all dims keepdim", {arg({2, 3}, 12)}, [](const V& v) { return sum(v[0], {}, true); }),
       s("size-1 dim", {arg({1, 3}, 8)}, [](const V& v) { return sum(v[0], {0}); }),
       s("empty reduced dim", {arg({0, 3}, 9)}, [](const V& v) { return sum(v[0], {0}); }),
       s("empty kept dim", {arg({2, 0}, 10)}, [](const V& v) { return sum(v[0], {0}); })},
      dim_errors("sum", [](const Tensor& x, const Shape& d) { sum(x, d); })));
  t.push_back(entry(
      "mean", [](const V& v) { return mean(v[0]); },
      {s("all", {arg({2, 3}, 1)}),
       s("dim 1", {arg({2, 3}, 2)}, [](const V& v) { return mean(v[0], {1}); }),
       s("dim 0 keepdim", {arg({2, 3}, 3)}, [](const V& v) { return mean(v[0], {0}, true); }),
       s("dims 0, 2 of 3-D", {arg({2, 3, 4}, 4)},
         [](const V& v) {
           return mean(v[0], {0, 2});
         }),
       s("non-contiguous", {arg_t({3, 2}, 6)}, [](const V& v) { return mean(v[0], {-1}); }),
       s("0-dim", {arg({}, 7)}),
       s("empty kept dim", {arg({2, 0}, 10)}, [](const V& v) { return mean(v[0], {0}); })},
      [&] {
        auto r = dim_errors("mean", [](const Tensor& x, const Shape& d) { mean(x, d); });
        r.push_back(e("mean", "int64 tensor", [] { mean(indices({1, 2}, {2})); }));
        return r;
      }()));

  auto values = [](std::tuple<Tensor, Tensor> r) { return std::get<0>(r); };
  t.push_back(entry("max", [](const V& v) { return max(v[0]); },
                    {s("2-D", {arg({2, 3}, 1)}), s("non-contiguous", {arg_t({4, 3}, 2)}),
                     s("0-dim", {arg({}, 3)}), s("1 element", {arg({1, 1}, 4)})},
                    {e("max", "empty tensor", [] {
                      max(make({0, 3}, 1));
                    })}));
  t.push_back(entry("min", [](const V& v) { return min(v[0]); },
                    {s("2-D", {arg({2, 3}, 1)}), s("non-contiguous", {arg_t({4, 3}, 2)}),
                     s("0-dim", {arg({}, 3)})},
                    {e("min", "empty tensor", [] {
                      min(make({0, 3}, 1));
                    })}));
  t.push_back(
      entry("max_dim", [values](const V& v) { return values(max(v[0], 1)); },
            {s("dim 1", {arg({2, 3}, 1)}),
             s("dim 0 keepdim", {arg({3, 4}, 2)},
               [values](const V& v) { return values(max(v[0], 0, true)); }),
             s("negative dim of 3-D", {arg({2, 3, 4}, 3)},
               [values](const V& v) { return values(max(v[0], -1)); }),
             s("non-contiguous", {arg_t({4, 3}, 4)}), s("size-1 dim", {arg({3, 1}, 5)}),
             s("0-dim", {arg({}, 6)}, [values](const V& v) { return values(max(v[0], 0)); })},
            {e("max", "dim out of range",
               [] {
                 max(make({2, 3}, 1), 2);
               }),
             e("max", "reduce a zero-size dim", [] {
               max(make({0, 3}, 1), 0);
             })}));
  t.push_back(entry("min_dim", [values](const V& v) { return values(min(v[0], 1)); },
                    {s("dim 1", {arg({2, 3}, 1)}),
                     s("dim 0 keepdim", {arg({3, 4}, 2)},
                       [values](const V& v) { return values(min(v[0], 0, true)); }),
                     s("non-contiguous", {arg_t({4, 3}, 4)})},
                    {e("min", "dim out of range", [] {
                      min(make({2, 3}, 1), -3);
                    })}));
  auto amax_samples = [](Tensor (*op)(const Tensor&, const Shape&, bool)) {
    return std::vector<Sample>{
        s("all", {arg({2, 3}, 1)}),
        s("dim 1 keepdim", {arg({2, 3}, 2)}, [op](const V& v) { return op(v[0], {1}, true); }),
        s("dims 0, 2 of 3-D", {arg({2, 3, 4}, 3)},
          [op](const V& v) {
            return op(v[0], {0, 2}, false);
          }),
        s("non-contiguous", {arg_t({4, 3}, 4)}, [op](const V& v) { return op(v[0], {0}, false); }),
        s("empty kept dim", {arg({0, 3}, 5)}, [op](const V& v) { return op(v[0], {1}, false); })};
  };
  t.push_back(entry(
      "amax", [](const V& v) { return amax(v[0]); },
      amax_samples([](const Tensor& x, const Shape& d, bool k) { return amax(x, d, k); }),
      [&] {
        auto r = dim_errors("amax", [](const Tensor& x, const Shape& d) { amax(x, d); });
        r.push_back(e("amax", "reduce a zero-size dim", [] { amax(make({0, 3}, 1), {0}); }));
        return r;
      }()));
  t.push_back(entry(
      "amin", [](const V& v) { return amin(v[0]); },
      amax_samples([](const Tensor& x, const Shape& d, bool k) { return amin(x, d, k); }),
      dim_errors("amin", [](const Tensor& x, const Shape& d) { amin(x, d); })));

  t.push_back(entry(
      "var", [](const V& v) { return var(v[0]); },
      {s("all", {arg({2, 3}, 1)}),
       s("dim 1", {arg({2, 3}, 2)}, [](const V& v) { return var(v[0], {1}); }),
       s("correction 0, keepdim", {arg({3, 4}, 3)},
         [](const V& v) { return var(v[0], {0}, 0, true); }),
       s("dims 0, 2 of 3-D", {arg({2, 3, 4}, 4)},
         [](const V& v) {
           return var(v[0], {0, 2});
         }),
       s("non-contiguous", {arg_t({4, 3}, 5)}, [](const V& v) { return var(v[0], {1}); })},
      [&] {
        auto r = dim_errors("var", [](const Tensor& x, const Shape& d) { var(x, d); });
        r.push_back(e("var", "int64 tensor", [] { var(indices({1, 2}, {2})); }));
        return r;
      }()));
  t.push_back(entry(
      "std", [](const V& v) { return std(v[0]); },
      {s("all", {arg({2, 3}, 1)}),
       s("dim 1", {arg({2, 3}, 2)}, [](const V& v) { return std(v[0], {1}); }),
       s("correction 0, keepdim", {arg({3, 4}, 3)},
         [](const V& v) { return std(v[0], {0}, 0, true); }),
       s("non-contiguous", {arg_t({4, 3}, 5)}, [](const V& v) { return std(v[0], {1}); })},
      [&] {
        auto r = dim_errors("std", [](const Tensor& x, const Shape& d) { std(x, d); });
        r.push_back(e("std", "int64 tensor", [] { std(indices({1, 2}, {2})); }));
        return r;
      }()));
  t.push_back(entry(
      "logsumexp", [](const V& v) { return logsumexp(v[0], {1}); },
      {s("dim 1", {arg({2, 3}, 1)}),
       s("dims 0, 1 keepdim", {arg({2, 3}, 2)},
         [](const V& v) {
           return logsumexp(v[0], {0, 1}, true);
         }),
       s("3-D, negative dim", {arg({2, 3, 4}, 3)},
         [](const V& v) { return logsumexp(v[0], {-1}); }),
       s("non-contiguous", {arg_t({4, 3}, 4)}),
       s("large values", {arg({2, 3}, 5)}, [](const V& v) { return logsumexp(v[0] * 300, {1}); }),
       s("empty kept dim", {arg({0, 3}, 6)})},
      dim_errors("logsumexp", [](const Tensor& x, const Shape& d) { logsumexp(x, d); })));
  {
    std::vector<Sample> r;
    for (double p : {1.0, 2.0, 3.0, static_cast<double>(INFINITY)}) {
      std::string ps = std::isinf(p) ? "inf" : std::to_string(static_cast<int>(p));
      r.push_back(
          s("p=" + ps + ", all", {arg({2, 3}, 1)}, [p](const V& v) { return norm(v[0], p); }));
      r.push_back(s("p=" + ps + ", dim 1", {arg({2, 3}, 2)},
                    [p](const V& v) { return norm(v[0], p, {1}); }));
      r.push_back(s("p=" + ps + ", non-contiguous dim 0 keepdim", {arg_t({4, 3}, 3)},
                    [p](const V& v) { return norm(v[0], p, {0}, true); }));
    }
    r.push_back(s("p=0.5, all", {arg({2, 3}, 4)}, [](const V& v) { return norm(v[0], 0.5); }));
    t.push_back(entry(
        "norm", [](const V& v) { return norm(v[0]); }, std::move(r),
        [&] {
          auto r2 = dim_errors("norm", [](const Tensor& x, const Shape& d) { norm(x, 2, d); });
          r2.push_back(e("norm", "p = 0", [] { norm(make({2}, 1), 0); }));
          r2.push_back(e("norm", "int64 tensor", [] { norm(indices({1, 2}, {2})); }));
          return r2;
        }()));
  }
}

// ---------------------------------------------------------------- linear algebra, softmax

void add_linalg(std::vector<OpInfo>& t) {
  t.push_back(entry("matmul", [](const V& v) { return matmul(v[0], v[1]); },
                    {s("1-D . 1-D", {arg({3}, 1), arg({3}, 2)}),
                     s("2-D . 1-D", {arg({2, 3}, 1), arg({3}, 2)}),
                     s("1-D . 2-D", {arg({3}, 1), arg({3, 2}, 2)}),
                     s("2-D . 2-D", {arg({2, 3}, 1), arg({3, 4}, 2)}),
                     s("3-D . 2-D (broadcast batch)", {arg({2, 2, 3}, 1), arg({3, 4}, 2)}),
                     s("2-D . 3-D (broadcast batch)", {arg({2, 3}, 1), arg({2, 3, 2}, 2)}),
                     s("batch dims (2, 1) and (3,)", {arg({2, 1, 2, 3}, 1), arg({3, 3, 2}, 2)}),
                     s("batch (1,) and (2,)", {arg({1, 2, 3}, 1), arg({2, 3, 2}, 2)}),
                     s("3-D . 1-D", {arg({2, 2, 3}, 1), arg({3}, 2)}),
                     s("1-D . 3-D", {arg({3}, 1), arg({2, 3, 2}, 2)}),
                     s("transposed a", {arg_t({3, 2}, 1), arg({3, 4}, 2)}),
                     s("transposed a and b", {arg_t({3, 2}, 1), arg_t({4, 3}, 2)}),
                     s("q . k^T (batched transposed view)", {arg({2, 3, 4}, 1), arg({2, 3, 4}, 2)},
                       [](const V& v) { return matmul(v[0], v[1].transpose(-2, -1)); }),
                     s("permuted batch", {arg({3, 2, 4}, 1), arg({2, 4, 3}, 2)},
                       [](const V& v) {
                         return matmul(v[0].permute({1, 0, 2}), v[1]);
                       }),
                     s("expanded operand", {arg({3, 2}, 1), arg({2, 3}, 2)},
                       [](const V& v) {
                         return matmul(v[0].unsqueeze(0).expand({2, 3, 2}), v[1]);
                       }),
                     s("size-1 dims", {arg({1, 3}, 1), arg({3, 1}, 2)}),
                     s("empty K", {arg({2, 0}, 1), arg({0, 3}, 2)}),
                     s("empty dot", {arg({0}, 1), arg({0}, 2)}),
                     s("empty M", {arg({0, 3}, 1), arg({3, 2}, 2)}),
                     s("only b requires grad", {make({2, 3}, 1), arg({3, 2}, 2)})},
                    {e("matmul", "(2, 3) . (4, 5)",
                       [] {
                         matmul(make({2, 3}, 1), make({4, 5}, 2));
                       }),
                     e("matmul", "0-dim operand", [] { matmul(make({}, 1), make({3}, 2)); }),
                     e("matmul", "dtypes differ",
                       [] {
                         matmul(make({2, 3}, 1), ones({3, 2}));
                       }),
                     e("matmul", "batch dims do not broadcast",
                       [] {
                         matmul(make({2, 2, 3}, 1), make({3, 3, 2}, 2));
                       }),
                     e("matmul", "bool operands", [] {
                       matmul(mask({1, 0}, {1, 2}), mask({1, 0}, {2, 1}));
                     })}));
  t.push_back(entry("mm", [](const V& v) { return mm(v[0], v[1]); },
                    {s("2-D . 2-D", {arg({2, 3}, 1), arg({3, 4}, 2)}),
                     s("transposed operands", {arg_t({3, 2}, 1), arg_t({4, 3}, 2)}),
                     s("size-1 dims", {arg({1, 3}, 1), arg({3, 1}, 2)}),
                     s("empty", {arg({0, 3}, 1), arg({3, 2}, 2)})},
                    {e("mm", "3-D operand",
                       [] {
                         mm(make({1, 2, 3}, 1), make({3, 2}, 2));
                       }),
                     e("mm", "inner sizes differ", [] {
                       mm(make({2, 3}, 1), make({2, 3}, 2));
                     })}));
  t.push_back(entry("bmm", [](const V& v) { return bmm(v[0], v[1]); },
                    {s("3-D . 3-D", {arg({2, 2, 3}, 1), arg({2, 3, 4}, 2)}),
                     s("transposed b", {arg({2, 2, 3}, 1), arg({2, 4, 3}, 2)},
                       [](const V& v) { return bmm(v[0], v[1].transpose(1, 2)); }),
                     s("non-contiguous batch", {arg({2, 3, 3}, 1), arg({2, 3, 2}, 2)},
                       [](const V& v) { return bmm(v[0].transpose(0, 1).narrow(0, 0, 2), v[1]); }),
                     s("batch 1", {arg({1, 2, 3}, 1), arg({1, 3, 2}, 2)})},
                    {e("bmm", "2-D operand",
                       [] {
                         bmm(make({2, 3}, 1), make({3, 2}, 2));
                       }),
                     e("bmm", "batch sizes differ",
                       [] {
                         bmm(make({2, 2, 3}, 1), make({3, 3, 2}, 2));
                       }),
                     e("bmm", "inner sizes differ", [] {
                       bmm(make({2, 2, 3}, 1), make({2, 2, 3}, 2));
                     })}));

  auto softmax_samples = [](Tensor (*op)(const Tensor&, std::int64_t)) {
    return std::vector<Sample>{
        s("dim 1", {arg({2, 3}, 1)}),
        s("dim 0", {arg({3, 4}, 2)}, [op](const V& v) { return op(v[0], 0); }),
        s("3-D, dim -1", {arg({2, 3, 4}, 3)}, [op](const V& v) { return op(v[0], -1); }),
        s("3-D, middle dim", {arg({2, 3, 4}, 4)}, [op](const V& v) { return op(v[0], 1); }),
        s("non-contiguous", {arg_t({4, 3}, 5)}),
        s("size-1 dim", {arg({3, 1}, 6)}),
        s("large logits", {arg({2, 3}, 7)}, [op](const V& v) { return op(v[0] * 1000, 1); }),
        s("0-dim", {arg({}, 8)}, [op](const V& v) { return op(v[0], 0); }),
        s("empty", {arg({0, 3}, 9)})};
  };
  t.push_back(entry("softmax", [](const V& v) { return softmax(v[0], 1); },
                    softmax_samples([](const Tensor& x, std::int64_t d) { return softmax(x, d); }),
                    {e("softmax", "dim out of range",
                       [] {
                         softmax(make({2, 3}, 1), 2);
                       }),
                     e("softmax", "undefined tensor", [] { softmax(undefined(), 0); })}));
  t.push_back(
      entry("log_softmax", [](const V& v) { return log_softmax(v[0], 1); },
            softmax_samples([](const Tensor& x, std::int64_t d) { return log_softmax(x, d); }),
            {e("log_softmax", "dim out of range", [] {
              log_softmax(make({2, 3}, 1), -3);
            })}));
}

// ---------------------------------------------------------------- shape

void add_shape(std::vector<OpInfo>& t) {
  t.push_back(entry(
      "transpose", [](const V& v) { return transpose(v[0], 0, 1); },
      {s("2-D", {arg({2, 3}, 1)}),
       s("3-D dims 0, 2", {arg({2, 3, 4}, 2)}, [](const V& v) { return transpose(v[0], 0, 2); }),
       s("negative dims", {arg({2, 3, 4}, 3)}, [](const V& v) { return v[0].transpose(-1, -2); }),
       s("non-contiguous", {arg_t({3, 2}, 4)}),
       s("same dim", {arg({2, 3}, 5)}, [](const V& v) { return transpose(v[0], 1, 1); }),
       s("0-dim", {arg({}, 7)}, [](const V& v) { return transpose(v[0], 0, -1); }),
       s("empty", {arg({0, 3}, 6)})},
      {e("transpose", "dim out of range", [] {
        transpose(make({2, 3}, 1), 0, 2);
      })}));
  t.push_back(entry("t", [](const V& v) { return v[0].t(); },
                    {s("2-D", {arg({2, 3}, 1)}), s("1-D", {arg({3}, 2)}),
                     s("non-contiguous", {arg_t({3, 2}, 3)})},
                    {e("t", "3-D tensor", [] {
                      make({1, 2, 3}, 1).t();
                    })}));
  t.push_back(entry("permute",
                    [](const V& v) {
                      return permute(v[0], {2, 0, 1});
                    },
                    {s("3-D", {arg({2, 3, 4}, 1)}),
                     s("negative dims", {arg({2, 3, 4}, 2)},
                       [](const V& v) {
                         return v[0].permute({-1, 1, 0});
                       }),
                     s("non-contiguous 2-D", {arg_t({3, 2}, 3)},
                       [](const V& v) {
                         return permute(v[0], {1, 0});
                       })},
                    {e("permute", "wrong number of dims",
                       [] {
                         permute(make({2, 3}, 1), {0});
                       }),
                     e("permute", "repeated dim", [] {
                       permute(make({2, 3}, 1), {1, 1});
                     })}));
  t.push_back(entry("expand",
                    [](const V& v) {
                      return v[0].expand({3, 4});
                    },
                    {s("size-1 dim", {arg({3, 1}, 1)}),
                     s("new leading dims", {arg({3}, 2)},
                       [](const V& v) {
                         return v[0].expand({2, 2, 3});
                       }),
                     s("-1 keeps a size", {arg({1, 3}, 3)},
                       [](const V& v) {
                         return v[0].expand({4, -1});
                       }),
                     s("expand_as", {arg({2, 1}, 4), make({2, 5}, 5)},
                       [](const V& v) { return v[0].expand_as(v[1]); }),
                     s("non-contiguous", {arg_t({1, 3}, 6)},
                       [](const V& v) {
                         return v[0].expand({3, 2});
                       }),
                     s("0-dim", {arg({}, 7)},
                       [](const V& v) {
                         return v[0].expand({2, 3});
                       })},
                    {e("expand", "non-singleton size differs",
                       [] {
                         make({2, 3}, 1).expand({2, 4});
                       }),
                     e("expand", "fewer sizes than dims", [] {
                       make({2, 3}, 1).expand({3});
                     })}));
  t.push_back(entry("unsqueeze", [](const V& v) { return unsqueeze(v[0], 1); },
                    {s("middle", {arg({2, 3}, 1)}),
                     s("end (-1)", {arg({2, 3}, 2)}, [](const V& v) { return v[0].unsqueeze(-1); }),
                     s("0-dim", {arg({}, 3)}, [](const V& v) { return unsqueeze(v[0], 0); }),
                     s("non-contiguous", {arg_t({3, 2}, 4)})},
                    {e("unsqueeze", "dim out of range", [] {
                      unsqueeze(make({2, 3}, 1), 3);
                    })}));
  t.push_back(entry(
      "squeeze", [](const V& v) { return squeeze(v[0]); },
      {s("all size-1 dims", {arg({1, 3, 1}, 1)}),
       s("dim 0", {arg({1, 3}, 2)}, [](const V& v) { return squeeze(v[0], 0); }),
       s("non-size-1 dim (no-op)", {arg({2, 3}, 3)}, [](const V& v) { return v[0].squeeze(1); }),
       s("non-contiguous", {arg_t({3, 1}, 4)}),
       s("0-dim", {arg({}, 5)}, [](const V& v) { return squeeze(v[0], 0); })},
      {e("squeeze", "dim out of range", [] {
        squeeze(make({2, 3}, 1), 2);
      })}));
  t.push_back(entry(
      "select", [](const V& v) { return v[0].select(0, 1); },
      {s("dim 0", {arg({3, 4}, 1)}),
       s("dim 1, negative index", {arg({3, 4}, 2)}, [](const V& v) { return v[0].select(1, -1); }),
       s("1-D to 0-dim", {arg({4}, 3)}, [](const V& v) { return v[0].select(0, 2); }),
       s("non-contiguous", {arg_t({4, 3}, 4)})},
      {e("select", "index out of range",
         [] {
           make({2, 3}, 1).select(1, 3);
         }),
       e("select", "0-dim tensor", [] { make({}, 1).select(0, 0); })}));
  t.push_back(entry(
      "narrow", [](const V& v) { return v[0].narrow(1, 1, 2); },
      {s("dim 1", {arg({3, 4}, 1)}),
       s("dim 0, length 0", {arg({3, 4}, 2)}, [](const V& v) { return v[0].narrow(0, 1, 0); }),
       s("negative start", {arg({3, 4}, 3)}, [](const V& v) { return v[0].narrow(0, -2, 2); }),
       s("non-contiguous", {arg_t({4, 3}, 4)})},
      {e("narrow", "start + length too large",
         [] {
           make({2, 3}, 1).narrow(1, 2, 2);
         }),
       e("narrow", "start out of range", [] {
         make({2, 3}, 1).narrow(1, 4, 0);
       })}));
  t.push_back(entry("reshape",
                    [](const V& v) {
                      return reshape(v[0], {3, 2});
                    },
                    {s("contiguous", {arg({2, 3}, 1)}),
                     s("-1", {arg({2, 3, 2}, 2)},
                       [](const V& v) {
                         return v[0].reshape({-1, 4});
                       }),
                     s("non-contiguous (copies)", {arg_t({3, 2}, 3)},
                       [](const V& v) { return reshape(v[0], {6}); }),
                     s("to 0-dim", {arg({1, 1}, 4)}, [](const V& v) { return reshape(v[0], {}); }),
                     s("expanded (copies)", {arg({3, 1}, 6)},
                       [](const V& v) {
                         return v[0].expand({3, 2}).reshape({6});
                       }),
                     s("empty", {arg({0, 3}, 5)},
                       [](const V& v) {
                         return reshape(v[0], {3, 0});
                       })},
                    {e("reshape", "numel differs",
                       [] {
                         reshape(make({2, 3}, 1), {4});
                       }),
                     e("reshape", "two -1", [] {
                       reshape(make({2, 3}, 1), {-1, -1});
                     })}));
  t.push_back(entry("view",
                    [](const V& v) {
                      return v[0].view({3, 2});
                    },
                    {s("contiguous", {arg({2, 3}, 1)}),
                     s("split a dim", {arg({4, 3}, 2)},
                       [](const V& v) {
                         return v[0].view({2, 2, 3});
                       }),
                     s("non-contiguous, compatible", {arg_t({3, 2}, 3)},
                       [](const V& v) {
                         return v[0].view({2, 3, 1});
                       })},
                    {e("view", "non-contiguous, incompatible",
                       [] {
                         make({3, 2}, 1).t().view({6});
                       }),
                     e("view", "numel differs", [] {
                       make({2, 3}, 1).view({7});
                     })}));
  t.push_back(
      entry("flatten", [](const V& v) { return flatten(v[0]); },
            {s("all", {arg({2, 3, 2}, 1)}),
             s("dims 1..2", {arg({2, 3, 2}, 2)}, [](const V& v) { return v[0].flatten(1); }),
             s("non-contiguous", {arg_t({3, 2}, 3)}), s("0-dim", {arg({}, 4)})},
            {e("flatten", "start after end", [] {
              flatten(make({2, 3, 4}, 1), 2, 1);
            })}));
  t.push_back(entry("contiguous", [](const V& v) { return v[0].contiguous(); },
                    {s("non-contiguous", {arg_t({3, 2}, 1)}), s("contiguous", {arg({2, 3}, 2)})},
                    {e("contiguous", "undefined tensor", [] { undefined().contiguous(); })}));
  t.push_back(entry("clone", [](const V& v) { return v[0].clone(); },
                    {s("2-D", {arg({2, 3}, 1)}), s("non-contiguous", {arg_t({3, 2}, 2)}),
                     s("0-dim", {arg({}, 3)})},
                    {e("clone", "undefined tensor", [] { undefined().clone(); })}));
  {
    OpInfo to_op = entry("to", [](const V& v) { return v[0].to(kFloat32).to(kFloat64); },
                         {s("float64 -> float32 -> float64", {arg({2, 3}, 1)}),
                          s("non-contiguous", {arg_t({3, 2}, 2)}),
                          s("float64 -> float64 (no-op)", {arg({2, 3}, 3)},
                            [](const V& v) { return v[0].to(kFloat64) * 2; })},
                         {e("to", "undefined tensor", [] { undefined().to(kFloat32); })});
    // float32 rounds each value to ~6e-8 relative: finite differences need a large step.
    to_op.tolerances.eps = 1e-2;
    to_op.tolerances.atol = 1e-4;
    t.push_back(std::move(to_op));
  }
}

// ---------------------------------------------------------------- joining and indexing

void add_indexing(std::vector<OpInfo>& t) {
  t.push_back(entry(
      "cat", [](const V& v) { return cat(v, 0); },
      {s("dim 0", {arg({2, 3}, 1), arg({1, 3}, 2)}),
       s("dim 1, three tensors", {arg({2, 3}, 1), arg({2, 1}, 2), arg({2, 2}, 3)},
         [](const V& v) { return cat(v, 1); }),
       s("with an empty tensor", {arg({2, 3}, 1), arg({0, 3}, 2), arg({1, 3}, 3)}),
       s("non-contiguous", {arg_t({3, 2}, 1), arg({2, 3}, 2)}),
       s("int64 tensor without grad (promotes)", {arg({2, 2}, 1), indices({1, 2, 3, 4}, {2, 2})}),
       s("negative dim", {arg({2, 3}, 1), arg({2, 3}, 2)}, [](const V& v) { return cat(v, -1); })},
      {e("cat", "empty list", [] { cat({}); }),
       e("cat", "sizes differ off dim",
         [] {
           cat({make({2, 3}, 1), make({2, 4}, 2)}, 0);
         }),
       e("cat", "0-dim tensor",
         [] {
           cat({make({}, 1), make({}, 2)});
         }),
       e("cat", "dim out of range", [] {
         cat({make({2, 3}, 1)}, 2);
       })}));
  t.push_back(entry("stack", [](const V& v) { return stack(v, 0); },
                    {s("dim 0", {arg({2, 3}, 1), arg({2, 3}, 2)}),
                     s("dim 1", {arg({2, 3}, 1), arg({2, 3}, 2), arg({2, 3}, 3)},
                       [](const V& v) { return stack(v, 1); }),
                     s("dim -1, non-contiguous", {arg_t({3, 2}, 1), arg({2, 3}, 2)},
                       [](const V& v) { return stack(v, -1); }),
                     s("0-dim tensors", {arg({}, 1), arg({}, 2)})},
                    {e("stack", "shapes differ",
                       [] {
                         stack({make({2, 3}, 1), make({3, 2}, 2)});
                       }),
                     e("stack", "empty list", [] { stack({}); })}));
  // split and chunk: every piece is weighted differently so a mixed-up gradient shows.
  auto weighted = [](const std::vector<Tensor>& pieces, std::int64_t dim) {
    std::vector<Tensor> w;
    for (std::size_t i = 0; i < pieces.size(); ++i)
      w.push_back(pieces[i] * static_cast<double>(i + 1));
    return cat(w, dim);
  };
  t.push_back(
      entry("split", [weighted](const V& v) { return weighted(split(v[0], 2, 1), 1); },
            {s("size 2 along dim 1 (last piece smaller)", {arg({2, 5}, 1)}),
             s("sizes {1, 3} along dim 0", {arg({4, 2}, 2)},
               [weighted](const V& v) {
                 return weighted(split(v[0], Shape{1, 3}, 0), 0);
               }),
             s("non-contiguous", {arg_t({5, 2}, 3)}),
             s("one piece only", {arg({2, 5}, 4)}, [](const V& v) { return v[0].split(2, 1)[1]; })},
            {e("split", "sizes do not add up",
               [] {
                 split(make({4}, 1), Shape{1, 2});
               }),
             e("split", "split_size 0", [] { split(make({4}, 1), 0); })}));
  t.push_back(entry("chunk", [weighted](const V& v) { return weighted(chunk(v[0], 3, 1), 1); },
                    {s("3 chunks of 5", {arg({2, 5}, 1)}),
                     s("2 chunks along dim 0", {arg({4, 2}, 2)},
                       [weighted](const V& v) { return weighted(v[0].chunk(2, 0), 0); }),
                     s("non-contiguous", {arg_t({6, 2}, 3)})},
                    {e("chunk", "0 chunks", [] { chunk(make({4}, 1), 0); }),
                     e("chunk", "0-dim tensor", [] { chunk(make({}, 1), 2); })}));

  t.push_back(
      entry("index_select", [](const V& v) { return index_select(v[0], 0, v[1]); },
            {s("dim 0, repeated index", {arg({3, 4}, 1), indices({2, 0, 2}, {3})}),
             s("dim 1, negative index", {arg({3, 4}, 2), indices({-1, 1}, {2})},
               [](const V& v) { return index_select(v[0], 1, v[1]); }),
             s("non-contiguous", {arg_t({4, 3}, 3), indices({1, 1, 0, 2}, {4})}),
             s("0-dim index", {arg({3, 4}, 4), indices({1}, {})}),
             s("empty index", {arg({3, 4}, 5), indices({}, {0})}),
             s("0-dim input", {arg({}, 6), indices({0}, {1})})},
            {e("index_select", "float index", [] { index_select(make({3}, 1), 0, make({2}, 2)); }),
             e("index_select", "index out of range",
               [] { index_select(make({3}, 1), 0, indices({3}, {1})); }),
             e("index_select", "2 indices into a 0-dim tensor",
               [] {
                 index_select(make({}, 1), 0, indices({0, 0}, {2}));
               }),
             e("index_select", "2-D index", [] {
               index_select(make({3}, 1), 0, indices({0, 1}, {1, 2}));
             })}));
  t.push_back(
      entry("gather", [](const V& v) { return gather(v[0], 1, v[1]); },
            {s("dim 1, repeated", {arg({2, 3}, 1), indices({0, 0, 2, 1, 2, 2}, {2, 3})}),
             s("dim 0, index smaller than input", {arg({3, 4}, 2), indices({2, 0, 1}, {1, 3})},
               [](const V& v) { return gather(v[0], 0, v[1]); }),
             s("non-contiguous", {arg_t({3, 2}, 3), indices({1, 2, 0, 0}, {2, 2})}),
             s("negative dim", {arg({2, 3}, 4), indices({2, 1}, {2, 1})},
               [](const V& v) { return gather(v[0], -1, v[1]); })},
            {e("gather", "index out of bounds",
               [] {
                 gather(make({2, 3}, 1), 1, indices({3}, {1, 1}));
               }),
             e("gather", "rank differs",
               [] {
                 gather(make({2, 3}, 1), 1, indices({0}, {1}));
               }),
             e("gather", "float index", [] {
               gather(make({2, 3}, 1), 1, make({1, 1}, 2));
             })}));
  t.push_back(entry(
      "scatter_add", [](const V& v) { return scatter_add(v[0], 1, v[1], v[2]); },
      {s("dim 1, repeated index",
         {arg({2, 3}, 1), indices({0, 0, 2, 1, 1, 1}, {2, 3}), arg({2, 3}, 2)}),
       s("dim 0, index smaller than src", {arg({3, 2}, 3), indices({2, 0}, {1, 2}), arg({2, 2}, 4)},
         [](const V& v) { return scatter_add(v[0], 0, v[1], v[2]); }),
       s("non-contiguous self and src",
         {arg_t({3, 2}, 5), indices({1, 1, 0, 2}, {2, 2}), arg_t({2, 2}, 6)}),
       s("only src requires grad", {make({2, 3}, 7), indices({2, 2, 0}, {1, 3}), arg({1, 3}, 8)})},
      {e("scatter_add", "index out of bounds",
         [] {
           scatter_add(make({2, 3}, 1), 1, indices({5}, {1, 1}), make({1, 1}, 2));
         }),
       e("scatter_add", "src smaller than index", [] {
         scatter_add(make({2, 3}, 1), 1, indices({0, 1}, {1, 2}), make({1, 1}, 2));
       })}));
  t.push_back(
      entry("index_add", [](const V& v) { return index_add(v[0], 0, v[1], v[2]); },
            {s("dim 0, repeated index", {arg({3, 2}, 1), indices({2, 0, 2}, {3}), arg({3, 2}, 2)}),
             s("dim 1", {arg({2, 4}, 3), indices({3, 1}, {2}), arg({2, 2}, 4)},
               [](const V& v) { return index_add(v[0], 1, v[1], v[2]); }),
             s("non-contiguous", {arg_t({2, 3}, 5), indices({1, 1}, {2}), arg_t({2, 2}, 6)}),
             s("only source requires grad", {make({3, 2}, 7), indices({0}, {1}), arg({1, 2}, 8)}),
             s("0-dim", {arg({}, 9), indices({0}, {1}), arg({}, 10)})},
            {e("index_add", "source shape wrong",
               [] {
                 index_add(make({3, 2}, 1), 0, indices({0, 1}, {2}), make({3, 2}, 2));
               }),
             e("index_add", "2 indices into a 0-dim tensor",
               [] {
                 index_add(make({}, 1), 0, indices({0, 0}, {2}), make({}, 2));
               }),
             e("index_add", "index out of range", [] {
               index_add(make({3, 2}, 1), 0, indices({3}, {1}), make({1, 2}, 2));
             })}));
  auto tri_samples = [](Tensor (*op)(const Tensor&, std::int64_t)) {
    return std::vector<Sample>{
        s("square", {arg({3, 3}, 1)}),
        s("diagonal 1, wide", {arg({3, 4}, 2)}, [op](const V& v) { return op(v[0], 1); }),
        s("diagonal -1, tall", {arg({4, 3}, 3)}, [op](const V& v) { return op(v[0], -1); }),
        s("batched", {arg({2, 3, 3}, 4)}), s("non-contiguous", {arg_t({3, 3}, 5)})};
  };
  t.push_back(entry("tril", [](const V& v) { return tril(v[0]); },
                    tri_samples([](const Tensor& x, std::int64_t d) { return tril(x, d); }),
                    {e("tril", "1-D tensor", [] { tril(make({3}, 1)); })}));
  t.push_back(entry("triu", [](const V& v) { return triu(v[0]); },
                    tri_samples([](const Tensor& x, std::int64_t d) { return triu(x, d); }),
                    {e("triu", "1-D tensor", [] { triu(make({3}, 1)); })}));
}

// ---------------------------------------------------------------- issue 14's further ops
// scans, rearranging copies, sorting, lerp, addmm, einsum, scatter and friends.

void add_more_ops(std::vector<OpInfo>& t) {
  t.push_back(
      entry("cumsum", [](const V& v) { return cumsum(v[0], 1); },
            {s("dim 1", {arg({2, 3}, 1)}),
             s("dim 0 of 3-D", {arg({3, 2, 2}, 2)}, [](const V& v) { return cumsum(v[0], 0); }),
             s("non-contiguous", {arg_t({3, 2}, 3)}),
             s("negative dim", {arg({2, 4}, 4)}, [](const V& v) { return v[0].cumsum(-1); }),
             s("0-dim", {arg({}, 5)}, [](const V& v) { return cumsum(v[0], 0); }),
             s("empty", {arg({0, 3}, 6)})},
            {e("cumsum", "dim out of range", [] {
              cumsum(make({2, 3}, 1), 2);
            })}));
  t.push_back(entry(
      "flip", [](const V& v) { return flip(v[0], {0}); },
      {s("dim 0", {arg({3, 2}, 1)}),
       s("dims 0 and 1, non-contiguous", {arg_t({3, 2}, 2)},
         [](const V& v) {
           return flip(v[0], {0, 1});
         }),
       s("negative dim of 3-D", {arg({2, 3, 2}, 3)}, [](const V& v) { return v[0].flip({-1}); }),
       s("empty", {arg({0, 3}, 4)})},
      {e("flip", "repeated dim",
         [] {
           flip(make({2, 3}, 1), {0, 0});
         }),
       e("flip", "dim out of range", [] {
         flip(make({2, 3}, 1), {2});
       })}));
  t.push_back(entry("roll", [](const V& v) { return roll(v[0], {1}, {1}); },
                    {s("shift 1 along dim 1", {arg({2, 3}, 1)}),
                     s("two dims, negative shift", {arg({3, 4}, 2)},
                       [](const V& v) {
                         return roll(v[0], {-1, 5}, {0, 1});
                       }),
                     s("flattened", {arg({2, 3}, 3)}, [](const V& v) { return v[0].roll({2}); }),
                     s("non-contiguous", {arg_t({4, 2}, 4)})},
                    {e("roll", "shifts and dims differ in length",
                       [] {
                         roll(make({2, 3}, 1), {1, 2}, {0});
                       }),
                     e("roll", "two shifts without dims", [] {
                       roll(make({2, 3}, 1), {1, 2});
                     })}));
  t.push_back(entry("repeat",
                    [](const V& v) {
                      return v[0].repeat({2, 3});
                    },
                    {s("2-D", {arg({2, 2}, 1)}),
                     s("new leading dims", {arg({3}, 2)},
                       [](const V& v) {
                         return repeat(v[0], {2, 1, 2});
                       }),
                     s("non-contiguous", {arg_t({3, 2}, 3)}),
                     s("a zero repeat", {arg({2, 2}, 4)},
                       [](const V& v) {
                         return repeat(v[0], {0, 2});
                       })},
                    {e("repeat", "fewer repeats than dims",
                       [] {
                         repeat(make({2, 3}, 1), {2});
                       }),
                     e("repeat", "negative repeat", [] {
                       repeat(make({2, 3}, 1), {2, -1});
                     })}));
  t.push_back(
      entry("repeat_interleave", [](const V& v) { return repeat_interleave(v[0], 2, 1); },
            {s("dim 1", {arg({2, 3}, 1)}),
             s("flattened", {arg({2, 2}, 2)}, [](const V& v) { return v[0].repeat_interleave(3); }),
             s("dim 0, non-contiguous", {arg_t({3, 2}, 3)},
               [](const V& v) { return repeat_interleave(v[0], 2, 0); })},
            {e("repeat_interleave", "negative repeats",
               [] {
                 repeat_interleave(make({2, 3}, 1), -1, 0);
               }),
             e("repeat_interleave", "dim out of range", [] {
               repeat_interleave(make({2, 3}, 1), 2, 3);
             })}));
  // sort and topk: the values (their gradient is scattered to the indices); no ties in make().
  t.push_back(entry("sort", [](const V& v) { return std::get<0>(sort(v[0], -1)); },
                    {s("last dim", {arg({3, 4}, 1)}),
                     s("descending, dim 0", {arg({4, 3}, 2)},
                       [](const V& v) { return std::get<0>(v[0].sort(0, true)); }),
                     s("non-contiguous", {arg_t({4, 3}, 3)}), s("0-dim", {arg({}, 4)}),
                     s("empty", {arg({2, 0}, 5)})},
                    {e("sort", "dim out of range", [] {
                      sort(make({2, 3}, 1), 2);
                    })}));
  t.push_back(
      entry("topk", [](const V& v) { return std::get<0>(topk(v[0], 2, 1)); },
            {s("k 2 of 4", {arg({3, 4}, 1)}),
             s("smallest 3, dim 0", {arg({4, 3}, 2)},
               [](const V& v) { return std::get<0>(v[0].topk(3, 0, false)); }),
             s("non-contiguous", {arg_t({4, 3}, 3)}),
             s("k 0", {arg({2, 3}, 4)}, [](const V& v) { return std::get<0>(topk(v[0], 0, 1)); })},
            {e("topk", "k larger than the dim",
               [] {
                 topk(make({2, 3}, 1), 4, 1);
               }),
             e("topk", "negative k",
               [] {
                 topk(make({2, 3}, 1), -1);
               }),
             e("topk", "dim out of range", [] {
               topk(make({2, 3}, 1), 1, 2);
             })}));
  t.push_back(
      entry("lerp", [](const V& v) { return lerp(v[0], v[1], 0.3); },
            {s("same shape", {arg({2, 3}, 1), arg({2, 3}, 2)}),
             s("broadcast end", {arg({2, 3}, 1), arg({3}, 2)}),
             s("non-contiguous", {arg_t({3, 2}, 3), arg({2, 3}, 4)})},
            {e("lerp", "float32 end", [] { lerp(make({2}, 1), make({2}, 2).to(kFloat32), 0.5); }),
             e("lerp", "shapes do not broadcast", [] {
               lerp(make({2, 3}, 1), make({4}, 2), 0.5);
             })}));
  t.push_back(entry("lerp_tensor", [](const V& v) { return lerp(v[0], v[1], v[2]); },
                    {s("same shape", {arg({2, 3}, 1), arg({2, 3}, 2), arg({2, 3}, 3)}),
                     s("broadcast weight", {arg({2, 3}, 1), arg({2, 3}, 2), arg({3}, 3)}),
                     s("non-contiguous weight", {arg({2, 3}, 1), arg({2, 3}, 2), arg_t({3, 2}, 3)}),
                     s("method", {arg({2, 3}, 4), arg({3}, 5), arg({2, 1}, 6)},
                       [](const V& v) { return v[0].lerp(v[1], v[2]); })},
                    {e("lerp", "weight shape does not broadcast", [] {
                      lerp(make({2, 3}, 1), make({2, 3}, 2), make({4}, 3));
                    })}));
  t.push_back(
      entry("addmm", [](const V& v) { return addmm(v[0], v[1], v[2]); },
            {s("(2, 4) + (2, 3) @ (3, 4)", {arg({2, 4}, 1), arg({2, 3}, 2), arg({3, 4}, 3)}),
             s("broadcast input, beta 0.5, alpha 2", {arg({4}, 1), arg({2, 3}, 2), arg({3, 4}, 3)},
               [](const V& v) { return addmm(v[0], v[1], v[2], 0.5, 2); }),
             s("transposed mat2", {arg({2, 4}, 4), arg({2, 3}, 5), arg_t({4, 3}, 6)}),
             s("method, beta 0", {arg({2, 4}, 7), arg({2, 3}, 8), arg({3, 4}, 9)},
               [](const V& v) { return v[0].addmm(v[1], v[2], 0, 1.5); })},
            {e("addmm", "inner sizes differ",
               [] {
                 addmm(make({2, 4}, 1), make({2, 3}, 2), make({2, 4}, 3));
               }),
             e("addmm", "1-D mat1",
               [] {
                 addmm(make({4}, 1), make({3}, 2), make({3, 4}, 3));
               }),
             e("addmm", "input does not broadcast", [] {
               addmm(make({3}, 1), make({2, 3}, 2), make({3, 4}, 3));
             })}));
  t.push_back(entry("view_as", [](const V& v) { return view_as(v[0], v[1]); },
                    {s("(2, 3) as (3, 2)", {arg({2, 3}, 1), make({3, 2}, 2)}),
                     s("method, as 1-D", {arg({2, 2}, 3), make({4}, 4)},
                       [](const V& v) { return v[0].view_as(v[1]); })},
                    {e("view", "other has another numel",
                       [] {
                         view_as(make({2, 3}, 1), make({4}, 2));
                       }),
                     e("view_as", "undefined other", [] { view_as(make({2}, 1), undefined()); })}));
  t.push_back(entry("var_mean",
                    [](const V& v) {
                      auto [var, mean] = var_mean(v[0]);
                      return stack({var, mean});
                    },
                    {s("all", {arg({2, 3}, 1)}),
                     s("dim 1, biased, keepdim", {arg({2, 4}, 2)},
                       [](const V& v) {
                         auto [var, mean] = var_mean(v[0], {1}, 0, true);
                         return stack({var, mean});
                       }),
                     s("non-contiguous, dim 0", {arg_t({3, 2}, 3)},
                       [](const V& v) {
                         auto [var, mean] = var_mean(v[0], {0});
                         return stack({var, mean});
                       })},
                    {e("var_mean", "dim out of range",
                       [] {
                         var_mean(make({2, 3}, 1), {2});
                       }),
                     e("var_mean", "int64 input", [] {
                       var_mean(indices({1, 2}, {2}));
                     })}));
  t.push_back(entry("std_mean",
                    [](const V& v) {
                      auto [sd, mean] = std_mean(v[0]);
                      return stack({sd, mean});
                    },
                    {s("all", {arg({2, 3}, 1)}),
                     s("dim 1", {arg({2, 4}, 2)},
                       [](const V& v) {
                         auto [sd, mean] = std_mean(v[0], {1}, 1, false);
                         return stack({sd, mean});
                       }),
                     s("non-contiguous, biased, keepdim", {arg_t({3, 2}, 3)},
                       [](const V& v) {
                         auto [sd, mean] = std_mean(v[0], {0}, 0, true);
                         return stack({sd, mean});
                       })},
                    {e("std_mean", "dim out of range", [] {
                      std_mean(make({2, 3}, 1), {-3});
                    })}));
  t.push_back(entry("take_along_dim", [](const V& v) { return take_along_dim(v[0], v[1], 1); },
                    {s("dim 1", {arg({2, 3}, 1), indices({0, 2, 1, 1}, {2, 2})}),
                     s("broadcast index rows", {arg({3, 4}, 2), indices({3, 0}, {1, 2})}),
                     s("flattened", {arg({2, 3}, 3), indices({5, 0, 3}, {3})},
                       [](const V& v) { return v[0].take_along_dim(v[1]); }),
                     s("non-contiguous", {arg_t({3, 2}, 4), indices({1, 0, 2, 2}, {2, 2})})},
                    {e("take_along_dim", "rank differs",
                       [] {
                         take_along_dim(make({2, 3}, 1), indices({0}, {1}), 1);
                       }),
                     e("take_along_dim", "index out of range",
                       [] {
                         take_along_dim(make({2, 3}, 1), indices({3}, {1, 1}), 1);
                       }),
                     e("take_along_dim", "float indices", [] {
                       take_along_dim(make({2, 3}, 1), make({2, 1}, 2), 1);
                     })}));
  // scatter: no index repeats within a row (the value written would be unspecified).
  t.push_back(entry(
      "scatter", [](const V& v) { return scatter(v[0], 1, v[1], v[2]); },
      {s("dim 1", {arg({2, 3}, 1), indices({2, 0, 1, 0}, {2, 2}), arg({2, 2}, 2)}),
       s("dim 0, src larger than index", {arg({3, 2}, 3), indices({2, 0}, {1, 2}), arg({2, 2}, 4)},
         [](const V& v) { return v[0].scatter(0, v[1], v[2]); }),
       s("non-contiguous self and src",
         {arg_t({3, 2}, 5), indices({1, 2, 0, 1}, {2, 2}), arg_t({2, 2}, 6)}),
       s("only src requires grad", {make({2, 3}, 7), indices({2, 1, 0}, {1, 3}), arg({1, 3}, 8)})},
      {e("scatter", "float32 src",
         [] {
           scatter(make({2, 3}, 1), 1, indices({0}, {1, 1}), make({1, 1}, 2).to(kFloat32));
         }),
       e("scatter", "index out of bounds", [] {
         scatter(make({2, 3}, 1), 1, indices({3}, {1, 1}), make({1, 1}, 2));
       })}));
  // scatter_reduce: every reduce; make() has no zeros (prod) and no ties (amax, amin).
  t.push_back(entry(
      "scatter_reduce", [](const V& v) { return scatter_reduce(v[0], 1, v[1], v[2], "sum"); },
      {s("sum, repeated index", {arg({2, 3}, 1), indices({0, 0, 2, 1}, {2, 2}), arg({2, 2}, 2)}),
       s("prod, repeated index", {arg({2, 3}, 1), indices({0, 0, 2, 1}, {2, 2}), arg({2, 2}, 2)},
         [](const V& v) { return v[0].scatter_reduce(1, v[1], v[2], "prod"); }),
       s("mean without self, dim 0",
         {arg({3, 2}, 3), indices({2, 0, 2, 2}, {2, 2}), arg({2, 2}, 4)},
         [](const V& v) { return scatter_reduce(v[0], 0, v[1], v[2], "mean", false); }),
       s("amax, repeated index", {arg({2, 3}, 1), indices({0, 0, 2, 1}, {2, 2}), arg({2, 2}, 2)},
         [](const V& v) { return scatter_reduce(v[0], 1, v[1], v[2], "amax"); }),
       s("amin without self", {arg({2, 3}, 1), indices({0, 0, 2, 1}, {2, 2}), arg({2, 2}, 2)},
         [](const V& v) { return scatter_reduce(v[0], 1, v[1], v[2], "amin", false); }),
       s("prod without self, non-contiguous, src larger than index",
         {arg_t({3, 2}, 5), indices({1, 1, 0, 2}, {2, 2}), arg_t({3, 3}, 6)},
         [](const V& v) { return scatter_reduce(v[0], 1, v[1], v[2], "prod", false); }),
       s("mean, only src requires grad",
         {make({2, 3}, 7), indices({2, 2, 0}, {1, 3}), arg({1, 3}, 8)},
         [](const V& v) { return scatter_reduce(v[0], 1, v[1], v[2], "mean"); })},
      {e("scatter_reduce", "bad reduce",
         [] {
           scatter_reduce(make({2, 3}, 1), 1, indices({0}, {1, 1}), make({1, 1}, 2), "max");
         }),
       e("scatter_reduce", "index out of bounds",
         [] {
           scatter_reduce(make({2, 3}, 1), 1, indices({3}, {1, 1}), make({1, 1}, 2), "sum");
         }),
       e("scatter_reduce", "src smaller than index",
         [] {
           scatter_reduce(make({2, 3}, 1), 1, indices({0, 1}, {1, 2}), make({1, 1}, 2), "amax");
         }),
       e("scatter_reduce", "float32 src", [] {
         scatter_reduce(make({2, 3}, 1), 1, indices({0}, {1, 1}), make({1, 1}, 2).to(kFloat32),
                        "mean");
       })}));
  t.push_back(entry("scatter_value", [](const V& v) { return scatter(v[0], 1, v[1], -2.5); },
                    {s("dim 1", {arg({2, 3}, 1), indices({2, 0}, {2, 1})}),
                     s("dim 0, non-contiguous", {arg_t({3, 2}, 2), indices({1, 0, 1}, {1, 3})},
                       [](const V& v) { return v[0].scatter(0, v[1], -2.5); })},
                    {e("scatter", "index rank differs", [] {
                      scatter(make({2, 3}, 1), 1, indices({0}, {1}), 1.0);
                    })}));
  t.push_back(
      entry("masked_scatter", [](const V& v) { return masked_scatter(v[0], v[1], v[2]); },
            {s("2-D mask, larger source",
               {arg({2, 3}, 1), mask({1, 0, 1, 0, 1, 1}, {2, 3}), arg({5}, 2)}),
             s("broadcast mask row", {arg({2, 3}, 3), mask({0, 1, 1}, {3}), arg({2, 3}, 4)}),
             s("non-contiguous self, method",
               {arg_t({3, 2}, 5), mask({1, 1, 0, 0, 1, 0}, {2, 3}), arg({3}, 6)},
               [](const V& v) { return v[0].masked_scatter(v[1], v[2]); })},
            {e("masked_scatter", "source too small",
               [] {
                 masked_scatter(make({2, 3}, 1), mask({1, 1, 1}, {3}), make({5}, 2));
               }),
             e("masked_scatter", "float mask", [] {
               masked_scatter(make({2, 3}, 1), make({2, 3}, 2), make({6}, 3));
             })}));
  auto es = [](const char* eq) { return [eq](const V& v) { return einsum(eq, v); }; };
  t.push_back(entry(
      "einsum", es("ij,jk->ik"),
      {s("matmul", {arg({2, 3}, 1), arg({3, 4}, 2)}),
       s("batched matmul", {arg({2, 2, 3}, 3), arg({2, 3, 2}, 4)}, es("bij,bjk->bik")),
       s("outer", {arg({3}, 5), arg({2}, 6)}, es("i,j->ij")),
       s("transpose", {arg({2, 3}, 7)}, es("ij->ji")), s("row sums", {arg({2, 3}, 8)}, es("ij->i")),
       s("dot", {arg({4}, 9), arg({4}, 10)}, es("i,i->")),
       s("implicit output, non-contiguous", {arg_t({3, 2}, 11), arg({3, 2}, 12)}, es("ij,jk")),
       s("a subscript summed in one operand", {arg({2, 3, 2}, 13), arg({3, 2}, 14)},
         es("ijk,jl->il"))},
      {e("einsum", "a stray character", [] { einsum("i-j", {make({3}, 1)}); }),
       e("einsum", "ellipsis",
         [] {
           einsum("...ij->...ji", {make({2, 3}, 1)});
         }),
       e("einsum", "repeated subscript (a trace)",
         [] {
           einsum("ii->", {make({2, 2}, 1)});
         }),
       e("einsum", "operand count",
         [] {
           einsum("ij,jk->ik", {make({2, 3}, 1)});
         }),
       e("einsum", "sizes of j differ",
         [] {
           einsum("ij,jk->ik", {make({2, 3}, 1), make({4, 2}, 2)});
         }),
       e("einsum", "three operands",
         [] {
           einsum("i,i,i->", {make({2}, 1), make({2}, 2), make({2}, 3)});
         }),
       e("einsum", "output subscript missing", [] {
         einsum("ij->k", {make({2, 3}, 1)});
       })}));
}

// ---------------------------------------------------------------- nn::functional
// F::relu, F::gelu, F::softmax and F::log_softmax are the core ops above under another name.

void add_nn(std::vector<OpInfo>& t) {
  namespace F = nn::functional;
  auto weights = [](const Shape& shape, std::int64_t seed) { return abs(make(shape, seed)); };

  t.push_back(entry("linear",
                    [](const V& v) {
                      return v.size() == 3 ? F::linear(v[0], v[1], v[2]) : F::linear(v[0], v[1]);
                    },
                    {s("bias", {arg({2, 3}, 1), arg({4, 3}, 2), arg({4}, 3)}),
                     s("no bias", {arg({2, 3}, 1), arg({4, 3}, 2)}),
                     s("3-D input", {arg({2, 2, 3}, 4), arg({4, 3}, 5), arg({4}, 6)}),
                     s("1-D input", {arg({3}, 7), arg({2, 3}, 8)}),
                     s("non-contiguous weight and input", {arg_t({3, 2}, 1), arg_t({3, 4}, 9)}),
                     s("only weight requires grad", {make({2, 3}, 1), arg({4, 3}, 2)}),
                     s("empty batch", {arg({0, 3}, 1), arg({4, 3}, 2), arg({4}, 3)})},
                    {e("linear", "1-D weight",
                       [] {
                         F::linear(make({2, 3}, 1), make({3}, 2));
                       }),
                     e("linear", "in_features mismatch",
                       [] {
                         F::linear(make({2, 3}, 1), make({4, 5}, 2));
                       }),
                     e("linear", "bias of the wrong size", [] {
                       F::linear(make({2, 3}, 1), make({4, 3}, 2), make({3}, 3));
                     })}));

  t.push_back(entry(
      "mse_loss", [](const V& v) { return F::mse_loss(v[0], v[1]); },
      {s("mean", {arg({2, 3}, 1), arg({2, 3}, 2)}),
       s("sum", {arg({2, 3}, 1), arg({2, 3}, 2)},
         [](const V& v) { return F::mse_loss(v[0], v[1], "sum"); }),
       s("none", {arg({2, 3}, 1), arg({2, 3}, 2)},
         [](const V& v) { return F::mse_loss(v[0], v[1], "none"); }),
       s("0-dim", {arg({}, 3), arg({}, 4)}),
       s("non-contiguous", {arg_t({3, 2}, 5), arg({2, 3}, 6)}),
       s("target without grad", {arg({4}, 7), make({4}, 8)})},
      {e("mse_loss", "shapes differ",
         [] {
           F::mse_loss(make({2, 3}, 1), make({3}, 2));
         }),
       e("mse_loss", "bad reduction", [] { F::mse_loss(make({2}, 1), make({2}, 2), "avg"); })}));

  t.push_back(entry(
      "scaled_dot_product_attention",
      [](const V& v) { return F::scaled_dot_product_attention(v[0], v[1], v[2]); },
      {s("3-D, S != L", {arg({2, 3, 4}, 1), arg({2, 5, 4}, 2), arg({2, 5, 2}, 3)}),
       s("causal", {arg({1, 4, 3}, 4), arg({1, 4, 3}, 5), arg({1, 4, 2}, 6)},
         [](const V& v) { return F::scaled_dot_product_attention(v[0], v[1], v[2], {}, true); }),
       s("bool mask, broadcast over the batch",
         {arg({2, 3, 4}, 7), arg({2, 3, 4}, 8), arg({2, 3, 2}, 9)},
         [](const V& v) {
           Tensor m = mask({1, 0, 1, 1, 1, 0, 0, 1, 1}, {3, 3});
           return F::scaled_dot_product_attention(v[0], v[1], v[2], m);
         }),
       s("float mask, scale 0.5", {arg({3, 2}, 10), arg({4, 2}, 11), arg({4, 3}, 12)},
         [](const V& v) {
           return F::scaled_dot_product_attention(v[0], v[1], v[2], make({3, 4}, 13), false, 0.5);
         }),
       s("4-D heads, non-contiguous q", {make({1, 3, 2, 4}, 14).transpose(1, 2).requires_grad_(),
                                         arg({1, 2, 3, 4}, 15), arg({1, 2, 3, 4}, 16)})},
      {e("scaled_dot_product_attention", "q and k feature sizes differ",
         [] {
           F::scaled_dot_product_attention(make({2, 3}, 1), make({2, 4}, 2), make({2, 4}, 3));
         }),
       e("scaled_dot_product_attention", "attn_mask and is_causal together",
         [] {
           F::scaled_dot_product_attention(make({2, 3}, 1), make({2, 3}, 2), make({2, 3}, 3),
                                           mask({1, 1, 1, 1}, {2, 2}), true);
         }),
       e("scaled_dot_product_attention", "float64 mask with float32 q, k, v",
         [] {
           F::scaled_dot_product_attention(zeros({2, 3}), zeros({2, 3}), zeros({2, 3}),
                                           make({2, 2}, 1));
         }),
       e("scaled_dot_product_attention", "k and v lengths differ", [] {
         F::scaled_dot_product_attention(make({2, 3}, 1), make({4, 3}, 2), make({3, 3}, 3));
       })}));

  t.push_back(
      entry("cross_entropy", [](const V& v) { return F::cross_entropy(v[0], v[1]); },
            {s("class indices", {arg({3, 4}, 1), indices({0, 3, 1}, {3})}),
             s("weight, sum", {arg({3, 4}, 2), indices({2, 2, 0}, {3})},
               [weights](const V& v) {
                 return F::cross_entropy(v[0], v[1], weights({4}, 3), -100, "sum");
               }),
             s("ignore_index", {arg({3, 4}, 4), indices({1, -100, 3}, {3})}),
             s("label_smoothing 0.2, weight", {arg({3, 4}, 5), indices({3, 0, 1}, {3})},
               [weights](const V& v) {
                 return F::cross_entropy(v[0], v[1], weights({4}, 6), -100, "mean", 0.2);
               }),
             s("probability targets with grad", {arg({3, 4}, 7), arg({3, 4}, 8)}),
             s("[N, C, d] input, none", {arg({2, 3, 2}, 9), indices({0, 2, 1, 1}, {2, 2})},
               [](const V& v) { return F::cross_entropy(v[0], v[1], {}, -100, "none"); }),
             s("[C] input, 0-dim target", {arg({5}, 10), indices({4}, {})}),
             s("non-contiguous input", {arg_t({4, 3}, 11), indices({0, 1, 2}, {3})})},
            {e("cross_entropy", "target out of bounds",
               [] {
                 F::cross_entropy(make({2, 5}, 1), indices({0, 7}, {2}));
               }),
             e("cross_entropy", "target of the wrong shape",
               [] {
                 F::cross_entropy(make({2, 5}, 1), indices({0, 1, 2}, {3}));
               }),
             e("cross_entropy", "label_smoothing 1.5",
               [] {
                 F::cross_entropy(make({2, 5}, 1), indices({0, 1}, {2}), {}, -100, "mean", 1.5);
               }),
             e("cross_entropy", "float target of the wrong shape", [] {
               F::cross_entropy(make({2, 5}, 1), make({2, 4}, 2));
             })}));

  t.push_back(
      entry("nll_loss", [](const V& v) { return F::nll_loss(v[0], v[1]); },
            {s("mean", {arg({3, 4}, 1), indices({0, 3, 1}, {3})}),
             s("weight, ignore_index", {arg({3, 4}, 2), indices({2, 1, 0}, {3})},
               [weights](const V& v) { return F::nll_loss(v[0], v[1], weights({4}, 3), 1); }),
             s("none", {arg({3, 4}, 4), indices({3, 3, 0}, {3})},
               [](const V& v) { return F::nll_loss(v[0], v[1], {}, -100, "none"); }),
             s("[N, C, d] input, sum", {arg({2, 3, 2}, 5), indices({0, 2, 1, 1}, {2, 2})},
               [](const V& v) { return F::nll_loss(v[0], v[1], {}, -100, "sum"); })},
            {e("nll_loss", "target out of bounds",
               [] {
                 F::nll_loss(make({2, 3}, 1), indices({0, -1}, {2}));
               }),
             e("nll_loss", "float target", [] {
               F::nll_loss(make({2, 3}, 1), make({2}, 2));
             })}));

  t.push_back(
      entry("kl_div", [](const V& v) { return F::kl_div(v[0], v[1]); },
            {s("mean", {arg({2, 3}, 1), arg_pos({2, 3}, 2)}),
             s("batchmean", {arg({2, 3}, 3), arg_pos({2, 3}, 4)},
               [](const V& v) { return F::kl_div(v[0], v[1], "batchmean"); }),
             s("log_target, sum", {arg({2, 3}, 5), arg({2, 3}, 6)},
               [](const V& v) { return F::kl_div(v[0], v[1], "sum", true); }),
             s("none, target without grad", {arg({4}, 7), abs(make({4}, 8))},
               [](const V& v) { return F::kl_div(v[0], v[1], "none"); })},
            {e("kl_div", "bad reduction", [] { F::kl_div(make({2}, 1), make({2}, 2), "avg"); })}));

  t.push_back(entry(
      "binary_cross_entropy_with_logits",
      [](const V& v) { return F::binary_cross_entropy_with_logits(v[0], v[1]); },
      {s("mean", {arg({2, 3}, 1), arg_pos({2, 3}, 2)}),
       s("weight and pos_weight, sum",
         {arg({2, 3}, 3), arg_pos({2, 3}, 4), arg_pos({3}, 5), arg_pos({3}, 6)},
         [](const V& v) {
           return F::binary_cross_entropy_with_logits(v[0], v[1], v[2], "sum", v[3]);
         }),
       s("none, non-contiguous", {arg_t({3, 2}, 7), make({2, 3}, 8)},
         [](const V& v) { return F::binary_cross_entropy_with_logits(v[0], v[1], {}, "none"); })},
      {e("binary_cross_entropy_with_logits", "target of another shape", [] {
        F::binary_cross_entropy_with_logits(make({2, 3}, 1), make({3}, 2));
      })}));

  // Probabilities in [0.08, 0.8] (away from 0 and 1, where the logs are steep).
  auto prob = [](const Shape& shape, std::int64_t seed) {
    return (abs(make(shape, seed)) / 2.5).requires_grad_();
  };
  t.push_back(
      entry("binary_cross_entropy", [](const V& v) { return F::binary_cross_entropy(v[0], v[1]); },
            {s("mean", {prob({2, 3}, 1), prob({2, 3}, 2)}),
             s("weight, sum", {prob({2, 3}, 3), prob({2, 3}, 4)},
               [weights](const V& v) {
                 return F::binary_cross_entropy(v[0], v[1], weights({3}, 5), "sum");
               }),
             s("none, non-contiguous, target without grad",
               {(abs(make({3, 2}, 6)) / 2.5).transpose(0, 1).requires_grad_(),
                abs(make({2, 3}, 7)) / 2.5},
               [](const V& v) { return F::binary_cross_entropy(v[0], v[1], {}, "none"); })},
            {e("binary_cross_entropy", "input outside [0, 1]",
               [] {
                 F::binary_cross_entropy(make({2, 3}, 1), abs(make({2, 3}, 2)) / 2.5);
               }),
             e("binary_cross_entropy", "target of another shape",
               [] {
                 F::binary_cross_entropy(abs(make({2, 3}, 1)) / 2.5, abs(make({3}, 2)) / 2.5);
               }),
             e("binary_cross_entropy", "weight that does not broadcast", [] {
               F::binary_cross_entropy(abs(make({2, 3}, 1)) / 2.5, abs(make({2, 3}, 2)) / 2.5,
                                       make({2}, 3));
             })}));

  // Targets make(shape, seed) * 0.5: differences on both sides of beta = delta = 1 and 0.5.
  auto half = [](const Shape& shape, std::int64_t seed) {
    return (make(shape, seed) * 0.5).requires_grad_();
  };
  t.push_back(entry("l1_loss", [](const V& v) { return F::l1_loss(v[0], v[1]); },
                    {s("mean", {arg({2, 3}, 1), half({2, 3}, 3)}),
                     s("sum", {arg({2, 3}, 1), half({2, 3}, 3)},
                       [](const V& v) { return F::l1_loss(v[0], v[1], "sum"); }),
                     s("none, non-contiguous", {arg_t({3, 2}, 2), half({2, 3}, 7)},
                       [](const V& v) { return F::l1_loss(v[0], v[1], "none"); }),
                     s("target without grad", {arg({4}, 5), make({4}, 6)})},
                    {e("l1_loss", "shapes differ", [] {
                      F::l1_loss(make({2, 3}, 1), make({3}, 2));
                    })}));
  t.push_back(entry("smooth_l1_loss", [](const V& v) { return F::smooth_l1_loss(v[0], v[1]); },
                    {s("beta 1, mean", {arg({2, 3}, 1), half({2, 3}, 3)}),
                     s("beta 0.5, none", {arg({6}, 2), half({6}, 7)},
                       [](const V& v) { return F::smooth_l1_loss(v[0], v[1], "none", 0.5); }),
                     s("beta 0 is l1, sum, non-contiguous", {arg_t({3, 2}, 2), half({2, 3}, 7)},
                       [](const V& v) { return F::smooth_l1_loss(v[0], v[1], "sum", 0.0); })},
                    {e("smooth_l1_loss", "negative beta",
                       [] { F::smooth_l1_loss(make({2}, 1), make({2}, 2), "mean", -1.0); }),
                     e("smooth_l1_loss", "shapes differ", [] {
                       F::smooth_l1_loss(make({2, 3}, 1), make({3}, 2));
                     })}));
  t.push_back(entry(
      "huber_loss", [](const V& v) { return F::huber_loss(v[0], v[1]); },
      {s("delta 1, mean", {arg({2, 3}, 1), half({2, 3}, 3)}),
       s("delta 0.5, none", {arg({6}, 2), half({6}, 7)},
         [](const V& v) { return F::huber_loss(v[0], v[1], "none", 0.5); }),
       s("delta 2, sum, non-contiguous", {arg_t({3, 2}, 2), half({2, 3}, 7)},
         [](const V& v) { return F::huber_loss(v[0], v[1], "sum", 2.0); })},
      {e("huber_loss", "delta 0", [] { F::huber_loss(make({2}, 1), make({2}, 2), "mean", 0.0); }),
       e("huber_loss", "bad reduction",
         [] { F::huber_loss(make({2}, 1), make({2}, 2), "avg"); })}));

  t.push_back(entry("layer_norm",
                    [](const V& v) {
                      return v.size() == 3 ? F::layer_norm(v[0], {v[0].size(-1)}, v[1], v[2])
                                           : F::layer_norm(v[0], {v[0].size(-1)});
                    },
                    {s("weight and bias", {arg({2, 3}, 1), arg({3}, 2), arg({3}, 3)}),
                     s("no affine", {arg({3, 4}, 4)}),
                     s("two normalized dims", {arg({2, 2, 3}, 5), arg({2, 3}, 6), arg({2, 3}, 7)},
                       [](const V& v) {
                         return F::layer_norm(v[0], {2, 3}, v[1], v[2]);
                       }),
                     s("non-contiguous, eps 0.1", {arg_t({4, 2}, 8), arg({4}, 9), arg({4}, 10)},
                       [](const V& v) { return F::layer_norm(v[0], {4}, v[1], v[2], 0.1); })},
                    {e("layer_norm", "normalized_shape does not match",
                       [] {
                         F::layer_norm(make({2, 3}, 1), {4});
                       }),
                     e("layer_norm", "weight of the wrong shape", [] {
                       F::layer_norm(make({2, 3}, 1), {3}, make({2}, 2));
                     })}));

  t.push_back(entry("rms_norm",
                    [](const V& v) {
                      return v.size() == 2 ? F::rms_norm(v[0], {v[0].size(-1)}, v[1])
                                           : F::rms_norm(v[0], {v[0].size(-1)});
                    },
                    {s("weight", {arg({2, 3}, 1), arg({3}, 2)}), s("no weight", {arg({3, 4}, 4)}),
                     s("two normalized dims", {arg({2, 2, 3}, 5), arg({2, 3}, 6)},
                       [](const V& v) {
                         return F::rms_norm(v[0], {2, 3}, v[1]);
                       }),
                     s("non-contiguous, eps 0.1", {arg_t({4, 2}, 8), arg({4}, 9)},
                       [](const V& v) { return F::rms_norm(v[0], {4}, v[1], 0.1); })},
                    {e("rms_norm", "normalized_shape does not match",
                       [] {
                         F::rms_norm(make({2, 3}, 1), {4});
                       }),
                     e("rms_norm", "weight of the wrong shape", [] {
                       F::rms_norm(make({2, 3}, 1), {3}, make({2}, 2));
                     })}));

  t.push_back(entry("embedding", [](const V& v) { return F::embedding(v[0], v[1]); },
                    {s("repeated indices", {indices({1, 3, 1}, {3}), arg({4, 2}, 1)}),
                     s("2-D indices", {indices({0, 2, 2, 1}, {2, 2}), arg({3, 3}, 2)}),
                     s("0-dim index", {indices({2}, {}), arg({3, 2}, 3)}),
                     // No padding_idx sample: its row's gradient is zero on purpose, which
                     // gradcheck's numeric Jacobian cannot know (tests/nn/test_small_modules.cpp
                     // checks it against PyTorch).
                     s("non-contiguous weight", {indices({0, 1}, {2}), arg_t({2, 3}, 4)})},
                    {e("embedding", "index out of range",
                       [] {
                         F::embedding(indices({0, 4}, {2}), make({4, 2}, 1));
                       }),
                     e("embedding", "padding_idx out of range",
                       [] {
                         F::embedding(indices({0, 1}, {2}), make({4, 2}, 1), -5);
                       }),
                     e("embedding", "float indices", [] {
                       F::embedding(make({2}, 1), make({4, 2}, 2));
                     })}));

  // The mask comes from the default generator: each call reseeds it so that gradcheck's
  // repeated evaluations see the same mask.
  t.push_back(entry(
      "dropout",
      [](const V& v) {
        manual_seed(0);
        return F::dropout(v[0], 0.3);
      },
      {s("p 0.3", {arg({4, 5}, 1)}), s("non-contiguous", {arg_t({5, 4}, 2)}),
       s("p 0 is the identity", {arg({2, 3}, 3)}, [](const V& v) { return F::dropout(v[0], 0.0); }),
       s("p 1 zeroes everything", {arg({2, 3}, 4)},
         [](const V& v) { return F::dropout(v[0], 1.0); }),
       s("eval", {arg({2, 3}, 5)}, [](const V& v) { return F::dropout(v[0], 0.5, false); })},
      {e("dropout", "p = 1.5", [] { F::dropout(make({2}, 1), 1.5); })}));
}

// ---------------------------------------------------------------- in-place ops
// Each writes a clone of its first input (a leaf cannot be written in grad mode) and returns it:
// gradcheck differentiates through the in-place history. The view samples write a narrowed or
// transposed view of the clone and return the whole clone (CopySlices).

using InplaceBinary = void (*)(Tensor&, const Tensor&);
using InplaceUnary = void (*)(Tensor&);

std::vector<Sample> inplace_binary_samples(Maker ma, Maker mb, InplaceBinary op) {
  auto mb_t = [mb](const Shape& base, std::int64_t seed) {
    return mb(base, seed).detach().transpose(0, 1).requires_grad_();
  };
  return {
      s("same shape", {ma({2, 3}, 1), mb({2, 3}, 2)}),
      s("broadcast other", {ma({2, 3}, 1), mb({3}, 2)}),
      s("0-dim other", {ma({2, 3}, 1), mb({}, 2)}),
      s("non-contiguous other", {ma({2, 3}, 1), mb_t({3, 2}, 2)}),
      s("only other requires grad", {ma({2, 3}, 1).detach(), mb({2, 3}, 2)}),
      s("only self requires grad", {ma({2, 3}, 1), mb({2, 3}, 2).detach()}),
      s("empty", {ma({0, 3}, 1), mb({3}, 2)}),
      s("on a row view (CopySlices)", {ma({3, 4}, 1), mb({4}, 2)},
        [op](const V& v) {
          Tensor h = v[0].clone();
          Tensor rows = h.narrow(0, 1, 2);
          op(rows, v[1]);
          return h;
        }),
      s("on a transposed view (CopySlices)", {ma({3, 2}, 1), mb({2, 3}, 2)},
        [op](const V& v) {
          Tensor h = v[0].clone();
          Tensor ht = h.t();
          op(ht, v[1]);
          return h;
        }),
  };
}

std::vector<Sample> inplace_unary_samples(Maker m, InplaceUnary op) {
  std::vector<Sample> r = unary_samples(m);
  r.push_back(s("on a row view (CopySlices)", {m({3, 4}, 6)}, [op](const V& v) {
    Tensor h = v[0].clone();
    Tensor rows = h.narrow(0, 1, 2);
    op(rows);
    return h;
  }));
  r.push_back(s("on a transposed view (CopySlices)", {m({3, 2}, 7)}, [op](const V& v) {
    Tensor h = v[0].clone();
    Tensor ht = h.t();
    op(ht);
    return h;
  }));
  return r;
}

/// The op an entry's errors name: "add_scalar_" and "pow_tensor_" are add_ and pow_.
std::string inplace_op_name(std::string name) {
  for (const char* suffix : {"_scalar_", "_tensor_"}) {
    std::size_t at = name.find(suffix);
    if (at != std::string::npos) name = name.substr(0, at) + "_";
  }
  return name;
}

OpInfo inplace_binary(std::string name, Maker ma, Maker mb, InplaceBinary op) {
  std::string op_name = inplace_op_name(name);
  return entry(std::move(name),
               [op](const V& v) {
                 Tensor y = v[0].clone();
                 op(y, v[1]);
                 return y;
               },
               inplace_binary_samples(ma, mb, op),
               {e(op_name, "a leaf that requires grad",
                  [op] {
                    Tensor leaf = arg({2}, 1);
                    op(leaf, make({2}, 2));
                  }),
                e(op_name, "other does not broadcast to self's shape", [op] {
                  Tensor y = make({3}, 1);
                  op(y, make({2, 3}, 2));
                })});
}

OpInfo inplace_unary(std::string name, Maker m, InplaceUnary op) {
  std::string op_name = inplace_op_name(name);
  return entry(std::move(name),
               [op](const V& v) {
                 Tensor y = v[0].clone();
                 op(y);
                 return y;
               },
               inplace_unary_samples(m, op), {e(op_name, "a leaf that requires grad", [op] {
                 Tensor leaf = arg({2}, 1);
                 op(leaf);
               })});
}

// A custom Function (examples/attention_function.h, the tutorial's hand-written attention).
void add_custom(std::vector<OpInfo>& t) {
  t.push_back(
      entry("custom_attention", [](const V& v) { return Attention::apply(v[0], v[1], v[2]); },
            {s("2-D", {arg({3, 4}, 1), arg({5, 4}, 2), arg({5, 2}, 3)}),
             s("batched", {arg({2, 3, 4}, 4), arg({2, 5, 4}, 5), arg({2, 5, 2}, 6)}),
             s("non-contiguous q", {arg_t({4, 3}, 7), arg({5, 4}, 8), arg({5, 2}, 9)}),
             s("only v requires grad", {make({3, 4}, 10), make({5, 4}, 11), arg({5, 2}, 12)})},
            {e("matmul", "q and k disagree on d", [] {
              Attention::apply(make({3, 4}, 1), make({5, 3}, 2), make({5, 2}, 3));
            })}));
}

/// Indexing with TensorIndex lists (x.index({...}), x.index_put_({...}, v)), slice, index_put.
void add_tensor_indexing(std::vector<OpInfo>& t) {
  using indexing::Ellipsis;
  using indexing::None;
  using indexing::Slice;
  t.push_back(
      entry("slice", [](const V& v) { return v[0].slice(1, 0, std::nullopt, 2); },
            {s("step 2", {arg({3, 5}, 1)}),
             s("negative start, stop past the end", {arg({4, 3}, 2)},
               [](const V& v) { return v[0].slice(0, -3, 100, 2); }),
             s("step 3, non-contiguous", {arg_t({7, 3}, 3)},
               [](const V& v) { return v[0].slice(1, 1, std::nullopt, 3); }),
             s("empty", {arg({3, 4}, 4)}, [](const V& v) { return v[0].slice(1, 3, 1, 2); })},
            {e("slice", "step 0", [] { make({3}, 1).slice(0, 0, 2, 0); }),
             e("slice", "0-dim", [] { make({}, 1).slice(0, 0, 1, 1); })}));
  t.push_back(
      entry("index", [](const V& v) { return v[0].index({v[1]}); },
            {s("int64 index, repeated and negative", {arg({4, 3}, 1), indices({2, 0, 2, -1}, {4})}),
             s("2-D index", {arg({4, 3}, 2), indices({0, 1, 3, 2}, {2, 2})}),
             s("bool mask", {arg({2, 3}, 3), mask({1, 0, 1, 0, 1, 1}, {2, 3})}),
             s("row mask", {arg({3, 2}, 4), mask({1, 0, 1}, {3})}),
             s("two indices broadcast, after a slice",
               {arg({2, 3, 4}, 5), indices({0, 2}, {2, 1}), indices({1, 3, 0}, {3})},
               [](const V& v) {
                 return v[0].index({Slice(), v[1], v[2]});
               }),
             s("index, slice, index (not adjacent)",
               {arg({3, 2, 4}, 6), indices({0, 2}, {2}), indices({3, 1}, {2})},
               [](const V& v) {
                 return v[0].index({v[1], Slice(), v[2]});
               }),
             s("int, stepped slice, None, Ellipsis", {arg({3, 4, 5}, 7)},
               [](const V& v) {
                 return v[0].index({1, Slice(None, None, 2), None, "..."});
               }),
             s("negative slice ends", {arg({3, 4}, 8)},
               [](const V& v) {
                 return v[0].index({Slice(-2, None), Slice(None, -1)});
               }),
             s("Ellipsis then an index", {arg({2, 3, 4}, 9), indices({3, 0}, {2})},
               [](const V& v) {
                 return v[0].index({Ellipsis, v[1]});
               }),
             s("bool scalar", {arg({2, 3}, 10)}, [](const V& v) { return v[0].index({true}); }),
             s("non-contiguous", {arg_t({3, 4}, 11), indices({1, 0}, {2})},
               [](const V& v) {
                 return v[0].index({Slice(), v[1]});
               }),
             s("mask and index broadcast",
               {arg({2, 3, 4}, 12), mask({1, 0, 1, 1, 0, 0}, {2, 3}), indices({3, 0, 1}, {3})},
               [](const V& v) {
                 return v[0].index({v[1], v[2]});
               }),
             s("empty index", {arg({3, 2}, 13), indices({}, {0})})},
            {e("index", "index out of range",
               [] {
                 make({2, 3}, 1).index({indices({2}, {1})});
               }),
             e("index", "integer out of range",
               [] {
                 make({2, 3}, 1).index({Slice(), 3});
               }),
             e("index", "too many indices",
               [] {
                 make({2, 3}, 1).index({0, 0, 0});
               }),
             e("index", "mask shape mismatch",
               [] {
                 make({2, 3}, 1).index({mask({1, 0}, {2, 1})});
               }),
             e("index", "float index",
               [] {
                 make({2, 3}, 1).index({make({1}, 2)});
               }),
             e("index", "slice step 0",
               [] {
                 make({2, 3}, 1).index({Slice(0, 2, 0)});
               }),
             e("index", "negative slice step",
               [] {
                 make({2, 3}, 1).index({Slice(None, None, -1)});
               }),
             e("index", "an integer into a 0-dim tensor", [] { make({}, 1).index({0}); }),
             e("index", "two ellipses",
               [] {
                 make({2, 3}, 1).index({Ellipsis, "..."});
               }),
             e("index", "index tensors that do not broadcast", [] {
               make({2, 3}, 1).index({indices({0, 1}, {2}), indices({0, 1, 2}, {3})});
             })}));
  t.push_back(entry(
      "index_put", [](const V& v) { return index_put(v[0], {v[1]}, v[2]); },
      {s("distinct indices", {arg({4, 3}, 1), indices({2, 0}, {2}), arg({2, 3}, 2)}),
       s("values broadcast", {arg({4, 3}, 3), indices({3, 1}, {2}), arg({3}, 4)}),
       s("accumulate, repeated index", {arg({4, 3}, 5), indices({1, 1, 3}, {3}), arg({3, 3}, 6)},
         [](const V& v) { return index_put(v[0], {v[1]}, v[2], /*accumulate=*/true); }),
       s("bool mask", {arg({4, 3}, 7), mask({1, 0, 1, 1}, {4}), arg({3, 3}, 8)}),
       s("second dim", {arg({2, 4}, 9), indices({3, 0}, {2}), arg({2, 2}, 10)},
         [](const V& v) {
           return index_put(v[0], {std::nullopt, v[1]}, v[2]);
         }),
       s("only values require grad", {make({3, 2}, 11), indices({2}, {1}), arg({1, 2}, 12)}),
       s("non-contiguous self", {arg_t({3, 4}, 13), indices({0, 3}, {2}), arg({2, 3}, 14)})},
      {e("index_put", "values of the wrong shape",
         [] {
           index_put(make({4, 3}, 1), {indices({0, 1}, {2})}, make({3, 3}, 2));
         }),
       e("index_put", "values of another dtype", [] {
         index_put(make({4, 3}, 1), {indices({0}, {1})}, make({3}, 2).to(kFloat32));
       })}));
  t.push_back(entry(
      "index_put_",
      [](const V& v) {
        Tensor y = v[0].clone();
        y.index_put_({Slice(), v[1]}, v[2]);
        return y;
      },
      {s("a slice and an index tensor", {arg({3, 4}, 1), indices({3, 0}, {2}), arg({3, 2}, 2)}),
       s("basic indices only (copy_)", {arg({3, 4}, 3), arg({3}, 4)},
         [](const V& v) {
           Tensor y = v[0].clone();
           y.index_put_({Slice(None, None, 2), 1}, v[1].narrow(0, 0, 2));
           return y;
         }),
       s("a scalar value", {arg({4, 2}, 5), mask({0, 1, 1, 0}, {4})},
         [](const V& v) {
           Tensor y = v[0].clone();
           y.index_put_({v[1]}, 2.5);
           return y;
         }),
       s("value with leading size-1 dims", {arg({3, 4}, 6), indices({1}, {1}), arg({1, 1, 3}, 7)},
         [](const V& v) {
           Tensor y = v[0].clone();
           y.index_put_({Slice(), v[1]}, v[2].reshape({1, 3, 1}));
           return y;
         }),
       s("on a row view (CopySlices)", {arg({4, 3}, 8), indices({2, 0}, {2}), arg({2, 2}, 9)},
         [](const V& v) {
           Tensor h = v[0].clone();
           h.narrow(0, 1, 2).index_put_({Slice(), v[1]}, v[2]);
           return h;
         }),
       s("accumulate (ATen form)", {arg({4, 3}, 10), indices({1, 1}, {2}), arg({2, 3}, 11)},
         [](const V& v) {
           Tensor y = v[0].clone();
           y.index_put_(std::vector<std::optional<Tensor>>{v[1]}, v[2], /*accumulate=*/true);
           return y;
         })},
      {e("index_put_", "a leaf that requires grad",
         [] { arg({3}, 1).index_put_({indices({0}, {1})}, make({1}, 2)); }),
       e("index_put_", "values of another dtype",
         [] { make({3}, 1).index_put_({indices({0}, {1})}, make({1}, 2).to(kFloat32)); }),
       e("index_put_", "values of the wrong shape", [] {
         make({3, 2}, 1).index_put_({indices({0, 1}, {2})}, make({3, 2}, 2));
       })}));
  t.push_back(entry("masked_select", [](const V& v) { return masked_select(v[0], v[1]); },
                    {s("same shape", {arg({2, 3}, 1), mask({1, 0, 1, 1, 0, 0}, {2, 3})}),
                     s("broadcast mask", {arg({2, 3}, 2), mask({0, 1, 1}, {3})}),
                     s("broadcast input", {arg({3}, 3), mask({1, 0, 0, 1, 1, 1}, {2, 3})})},
                    {e("masked_select", "int64 mask",
                       [] {
                         masked_select(make({2}, 1), indices({1, 0}, {2}));
                       }),
                     e("masked_select", "shapes that do not broadcast", [] {
                       masked_select(make({2}, 1), mask({1, 0, 1}, {3}));
                     })}));
}

void add_inplace(std::vector<OpInfo>& t) {
  t.push_back(inplace_binary("add_", arg, arg, [](Tensor& y, const Tensor& o) { y.add_(o); }));
  t.push_back(inplace_binary("sub_", arg, arg, [](Tensor& y, const Tensor& o) { y.sub_(o); }));
  t.push_back(inplace_binary("mul_", arg, arg, [](Tensor& y, const Tensor& o) { y.mul_(o); }));
  t.push_back(inplace_binary("div_", arg, arg, [](Tensor& y, const Tensor& o) { y.div_(o); }));
  t.push_back(
      inplace_binary("pow_tensor_", arg_pos, arg, [](Tensor& y, const Tensor& o) { y.pow_(o); }));
  t.push_back(inplace_binary("copy_", arg, arg, [](Tensor& y, const Tensor& o) { y.copy_(o); }));
  t.push_back(inplace_unary("add_scalar_", arg, [](Tensor& y) { y.add_(2.5, -2); }));
  t.push_back(inplace_unary("sub_scalar_", arg, [](Tensor& y) { y.sub_(2.5); }));
  t.push_back(inplace_unary("mul_scalar_", arg, [](Tensor& y) { y.mul_(-3); }));
  t.push_back(inplace_unary("div_scalar_", arg, [](Tensor& y) { y.div_(2.5); }));
  t.push_back(inplace_unary("pow_", arg, [](Tensor& y) { y.pow_(3); }));
  t.push_back(inplace_unary("neg_", arg, [](Tensor& y) { y.neg_(); }));
  t.push_back(inplace_unary("exp_", arg, [](Tensor& y) { y.exp_(); }));
  t.push_back(inplace_unary("log_", arg_pos, [](Tensor& y) { y.log_(); }));
  t.push_back(inplace_unary("sqrt_", arg_pos, [](Tensor& y) { y.sqrt_(); }));
  t.push_back(inplace_unary("abs_", arg, [](Tensor& y) { y.abs_(); }));
  t.push_back(inplace_unary("relu_", arg, [](Tensor& y) { y.relu_(); }));
  t.push_back(inplace_unary("sigmoid_", arg, [](Tensor& y) { y.sigmoid_(); }));
  t.push_back(inplace_unary("tanh_", arg, [](Tensor& y) { y.tanh_(); }));
  t.push_back(inplace_unary("clamp_", arg, [](Tensor& y) { y.clamp_(-0.5, 0.8); }));
  t.push_back(inplace_unary("fill_", arg, [](Tensor& y) { y.fill_(2.5); }));
  t.push_back(inplace_unary("zero_", arg, [](Tensor& y) { y.zero_(); }));
  t.push_back(entry("masked_fill_",
                    [](const V& v) {
                      Tensor y = v[0].clone();
                      y.masked_fill_(v[1], -2.5);
                      return y;
                    },
                    {s("same shape", {arg({2, 3}, 1), mask({1, 0, 0, 1, 1, 0}, {2, 3})}),
                     s("broadcast mask", {arg({2, 3}, 2), mask({0, 1, 1}, {3})}),
                     s("on a row view (CopySlices)", {arg({3, 3}, 3), mask({1, 0, 1}, {3})},
                       [](const V& v) {
                         Tensor h = v[0].clone();
                         h.narrow(0, 1, 2).masked_fill_(v[1], -2.5);
                         return h;
                       })},
                    {e("masked_fill_", "a leaf that requires grad", [] {
                      arg({2}, 1).masked_fill_(mask({1, 0}, {2}), 0.0);
                    })}));
}

std::vector<OpInfo> build() {
  std::vector<OpInfo> t;
  add_elementwise(t);
  add_reductions(t);
  add_linalg(t);
  add_shape(t);
  add_indexing(t);
  add_more_ops(t);
  add_tensor_indexing(t);
  add_nn(t);
  add_inplace(t);
  add_custom(t);
  return t;
}

}  // namespace

const std::vector<OpInfo>& op_table() {
  static const std::vector<OpInfo> table = build();
  return table;
}

}  // namespace minigrad::testing
