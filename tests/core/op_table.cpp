// The op table: every differentiable op with its samples, error inputs, PyTorch call and reference
// values (see op_table.h).
#include "core/op_table.h"
#include "core/op_table_builders.h"

#include "attention_function.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
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

OpInfo&& OpInfo::py(std::string call,
                    const std::vector<std::pair<std::string, std::string>>& by_desc,
                    std::string note) && {
  torch = std::move(call);
  torch_note = std::move(note);
  for (const auto& [desc, sample_call] : by_desc) {
    bool found = false;
    for (Sample& smp : samples) {
      if (smp.desc != desc) continue;
      if (!smp.fn)
        throw std::logic_error("op table: " + name + " '" + desc + "' has no fn of its own");
      smp.torch = sample_call;
      found = true;
    }
    if (!found) throw std::logic_error("op table: " + name + " has no sample '" + desc + "'");
  }
  return std::move(*this);
}

OpInfo&& OpInfo::ref(std::string torch_expr, std::function<Tensor()> f, Shape out_shape,
                     std::vector<double> values) && {
  references.push_back(
      Reference{std::move(torch_expr), std::move(f), std::move(out_shape), std::move(values)});
  return std::move(*this);
}

// The builders of op_table_builders.h, shared with the family files (op_table_math.cpp).

Sample s(std::string desc, V inputs, GradcheckFn fn) {
  return Sample{std::move(desc), std::move(inputs), std::move(fn)};
}

ErrorInput e(std::string op, std::string desc, std::string message, std::function<void()> call) {
  return ErrorInput{std::move(desc), std::move(op), std::move(message), std::move(call)};
}

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
             std::vector<ErrorInput> errors, bool gradgrad) {
  OpInfo op;
  op.name = std::move(name);
  op.fn = std::move(fn);
  op.samples = std::move(samples);
  op.error_inputs = std::move(errors);
  op.gradgrad = gradgrad;
  return op;
}

Tensor undefined() { return Tensor(); }

namespace {

namespace F = nn::functional;

Tensor cond() { return mask({1, 0, 0, 1, 1, 0}, {2, 3}); }

// ---------------------------------------------------------------- elementwise

void add_elementwise(std::vector<OpInfo>& t) {
  auto bad_broadcast = [](Tensor (*op)(const Tensor&, const Tensor&)) {
    return [op] { op(make({2, 3}, 1), make({4}, 2)); };
  };
  t.push_back(
      entry("add", [](const V& v) { return add(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return add(a, b); }),
            {e("add", "shapes (2, 3) and (4,) do not broadcast",
               "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
               "neither is 1",
               bad_broadcast([](const Tensor& a, const Tensor& b) { return add(a, b); })),
             e("add", "undefined operand",
               "got an undefined tensor (a default-constructed Tensor, or one moved from)",
               [] { add(undefined(), make({2}, 1)); })})
          .py("torch.add(x[0], x[1])",
              {{"expanded inside fn", "torch.add(x[0].expand(4, 3), x[1])"}})
          .ref("torch.add(make((2, 3), 1), make((3,), 2))",
               [] {
                 return add(make({2, 3}, 1), make({3}, 2));
               },
               {2, 3},
               {-2.276648807371329, -1.0268040883720857, -0.1769593693728433, 1.198118271127535,
                -1.5520370098732217, -0.7021922908739784}));
  t.push_back(
      entry("sub", [](const V& v) { return sub(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return sub(a, b); }),
            {e("sub", "shapes (2, 3) and (4,) do not broadcast",
               "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
               "neither is 1",
               bad_broadcast([](const Tensor& a, const Tensor& b) { return sub(a, b); })),
             e("sub", "bool - bool",
               "subtraction of two bool tensors is not supported; use logical_xor or ~",
               [] {
                 sub(mask({1, 0}, {2}), mask({0, 1}, {2}));
               })})
          .py("torch.sub(x[0], x[1])",
              {{"expanded inside fn", "torch.sub(x[0].expand(4, 3), x[1])"}})
          .ref("torch.sub(make((2, 1), 1), make((1, 3), 2))",
               [] {
                 return sub(make({2, 1}, 1), make({1, 3}, 2));
               },
               {2, 3},
               {-1.4911688245431427, -0.1160911840427643, -2.741013543542386, 1.1337535349564791,
                2.5088311754568577, -0.11609118404276408}));
  t.push_back(
      entry("mul", [](const V& v) { return mul(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return mul(a, b); }),
            {e("mul", "shapes (2, 3) and (4,) do not broadcast",
               "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
               "neither is 1",
               bad_broadcast([](const Tensor& a, const Tensor& b) { return mul(a, b); }))})
          .py("torch.mul(x[0], x[1])",
              {{"expanded inside fn", "torch.mul(x[0].expand(4, 3), x[1])"}})
          .ref("torch.mul(make((3, 2), 1).t(), make((2, 3), 2))",
               [] {
                 return mul(make({3, 2}, 1).t(), make({2, 3}, 2));
               },
               {2, 3},
               {0.7398863322039794, 1.8280367431320563, 0.18494659127281973, -0.6802303610752394,
                2.715514630839642, -0.517486717737448}));
  t.push_back(
      entry("div", [](const V& v) { return div(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return div(a, b); }),
            {e("div", "shapes (2, 3) and (4,) do not broadcast",
               "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
               "neither is 1",
               bad_broadcast([](const Tensor& a, const Tensor& b) { return div(a, b); }))})
          .py("torch.div(x[0], x[1])",
              {{"expanded inside fn", "torch.div(x[0].expand(4, 3), x[1])"}})
          .ref("torch.div(make((2, 3), 1), make((2, 1), 2))",
               [] {
                 return div(make({2, 3}, 1), make({2, 1}, 2));
               },
               {2, 3},
               {4.796834692525364, -1.886778937062927, 2.6329483107507308, -0.8998995336520069,
                -0.12206045360435094, 0.8820463097036065}));
  t.push_back(
      entry(
          "maximum", [](const V& v) { return maximum(v[0], v[1]); },
          binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return maximum(a, b); }),
          {e("maximum", "shapes (2, 3) and (4,) do not broadcast",
             "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
             "neither is 1",
             bad_broadcast([](const Tensor& a, const Tensor& b) { return maximum(a, b); }))})
          .py("torch.maximum(x[0], x[1])",
              {{"expanded inside fn", "torch.maximum(x[0].expand(4, 3), x[1])"}})
          .ref("torch.maximum(make((2, 3), 1), make((3,), 2))",
               [] {
                 return maximum(make({2, 3}, 1), make({3}, 2));
               },
               {2, 3},
               {-0.3927399914140932, 0.7410135435423859, 0.85710472758515, 1.5908582625416283,
                0.21578062204124993, 0.85710472758515}));
  t.push_back(
      entry(
          "minimum", [](const V& v) { return minimum(v[0], v[1]); },
          binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return minimum(a, b); }),
          {e("minimum", "shapes (2, 3) and (4,) do not broadcast",
             "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
             "neither is 1",
             bad_broadcast([](const Tensor& a, const Tensor& b) { return minimum(a, b); }))})
          .py("torch.minimum(x[0], x[1])",
              {{"expanded inside fn", "torch.minimum(x[0].expand(4, 3), x[1])"}})
          .ref("torch.minimum(make((2, 3), 1), make((3,), 2))",
               [] {
                 return minimum(make({2, 3}, 1), make({3}, 2));
               },
               {2, 3},
               {-1.883908815957236, -1.7678176319144716, -1.0340640969579933, -0.3927399914140932,
                -1.7678176319144716, -1.5592970184591284}));
  t.push_back(
      entry(
          "pow_tensor", [](const V& v) { return pow(v[0], v[1]); },
          binary_samples(arg_pos, arg, [](const Tensor& a, const Tensor& b) { return pow(a, b); }),
          {e("pow", "int64 base and int64 exponent tensors",
             "a tensor exponent needs a floating-point base or exponent, got int64 and int64",
             [] {
               pow(indices({1, 2}, {2}), indices({2, 3}, {2}));
             }),
           e("pow", "shapes (2, 3) and (4,) do not broadcast",
             "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
             "neither is 1",
             bad_broadcast([](const Tensor& a, const Tensor& b) { return pow(a, b); }))})
          .py("torch.pow(x[0], x[1])",
              {{"expanded inside fn", "torch.pow(x[0].expand(4, 3), x[1])"}})
          .ref("torch.pow(make((2, 3), 1).abs(), make((3,), 2))",
               [] {
                 return pow(abs(make({2, 3}, 1)), make({3}, 2));
               },
               {2, 3},
               {0.7797816044699326, 1.6987271770444077, 1.0291263457940711, 0.833318936953857,
                15.043349652318508, 1.463390489047525}));

  // Scalar forms (a float and an int Scalar: both keep float64).
  auto scalar_samples = [](Maker m) {
    std::vector<Sample> r = unary_samples(m);
    r.push_back(s("1-D", {m({3}, 6)}));
    return r;
  };
  t.push_back(entry("add_scalar", [](const V& v) { return add(add(v[0], 2.5), 3); },
                    scalar_samples(arg),
                    {e("add", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { add(undefined(), 2.0); })})
                  .py("x[0] + 2.5 + 3")
                  .ref("make((2, 3), 1) + 2.5",
                       [] {
                         return add(make({2, 3}, 1), 2.5);
                       },
                       {2, 3},
                       {0.6160911840427641, 3.241013543542386, 1.4659359030420067,
                        4.090858262541628, 2.71578062204125, 0.9407029815408716}));
  t.push_back(entry("sub_scalar", [](const V& v) { return sub(sub(v[0], 2.5), 3); },
                    scalar_samples(arg),
                    {e("sub", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { sub(undefined(), 2.0); })})
                  .py("x[0] - 2.5 - 3")
                  .ref("make((2, 3), 1) - 3",
                       [] {
                         return sub(make({2, 3}, 1), 3);
                       },
                       {2, 3},
                       {-4.883908815957236, -2.258986456457614, -4.0340640969579935,
                        -1.4091417374583717, -2.78421937795875, -4.559297018459128}));
  t.push_back(entry("mul_scalar", [](const V& v) { return mul(mul(v[0], 2.5), -3); },
                    scalar_samples(arg),
                    {e("mul", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { mul(undefined(), 2.0); })})
                  .py("x[0] * 2.5 * -3")
                  .ref("make((2, 3), 1) * -3",
                       [] {
                         return mul(make({2, 3}, 1), -3);
                       },
                       {2, 3},
                       {5.651726447871708, -2.2230406306271577, 3.1021922908739796,
                        -4.772574787624885, -0.6473418661237498, 4.677891055377385}));
  t.push_back(entry("div_scalar", [](const V& v) { return div(div(v[0], 2.5), -3); },
                    scalar_samples(arg),
                    {e("div", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { div(undefined(), 2.0); })})
                  .py("x[0] / 2.5 / -3")
                  .ref("make((2, 3), 1) / 2.5",
                       [] {
                         return div(make({2, 3}, 1), 2.5);
                       },
                       {2, 3},
                       {-0.7535635263828944, 0.29640541741695436, -0.4136256387831973,
                        0.6363433050166514, 0.08631224881649997, -0.6237188073836514}));
  t.push_back(entry("rsub_scalar", [](const V& v) { return 2.5 - v[0]; }, scalar_samples(arg),
                    {e("sub", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { 2.5 - undefined(); })})
                  .py("2.5 - x[0]")
                  .ref("2.5 - make((2, 3), 1)",
                       [] {
                         return 2.5 - make({2, 3}, 1);
                       },
                       {2, 3},
                       {4.383908815957236, 1.758986456457614, 3.5340640969579935,
                        0.9091417374583717, 2.28421937795875, 4.059297018459128}));
  t.push_back(entry("rdiv_scalar", [](const V& v) { return 2.5 / v[0]; }, scalar_samples(arg),
                    {e("div", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { 2.5 / undefined(); })})
                  .py("2.5 / x[0]")
                  .ref("2.5 / make((2, 3), 1)",
                       [] {
                         return 2.5 / make({2, 3}, 1);
                       },
                       {2, 3},
                       {-1.3270281336465435, 3.373757499827667, -2.417645102807933,
                        1.5714787790119562, 11.58584110264584, -1.6032865903062257}));

  // Unary math.
  t.push_back(
      entry("neg", [](const V& v) { return neg(v[0]); }, unary_samples(arg),
            {e("neg", "bool tensor", "negation of a bool tensor is not supported; use ~ instead",
               [] {
                 neg(mask({1, 0}, {2}));
               })})
          .py("torch.neg(x[0])")
          .ref("torch.neg(make((2, 3), 1))",
               [] {
                 return neg(make({2, 3}, 1));
               },
               {2, 3},
               {1.883908815957236, -0.7410135435423859, 1.0340640969579933, -1.5908582625416283,
                -0.21578062204124993, 1.5592970184591284}));
  t.push_back(entry("exp", [](const V& v) { return exp(v[0]); }, unary_samples(arg),
                    {e("exp", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { exp(undefined()); })})
                  .py("torch.exp(x[0])")
                  .ref("torch.exp(make((2, 3), 1))",
                       [] {
                         return exp(make({2, 3}, 1));
                       },
                       {2, 3},
                       {0.15199482329930503, 2.0980609133105137, 0.35555899399797525,
                        4.9079594389486685, 1.2408301383570568, 0.21028384491490118}));
  t.push_back(entry("log", [](const V& v) { return log(v[0]); }, unary_samples(arg_pos),
                    {e("log", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { log(undefined()); })})
                  .py("torch.log(x[0])")
                  .ref("torch.log(make((2, 3), 1).abs())",
                       [] {
                         return log(abs(make({2, 3}, 1)));
                       },
                       {2, 3},
                       {0.6333487758094518, -0.2997363764679433, 0.0334967634860555,
                        0.46427365836116147, -1.5334930261063555, 0.44423509050473164}));
  t.push_back(entry("sqrt", [](const V& v) { return sqrt(v[0]); }, unary_samples(arg_pos),
                    {e("sqrt", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { sqrt(undefined()); })})
                  .py("torch.sqrt(x[0])")
                  .ref("torch.sqrt(make((2, 3), 1).abs())",
                       [] {
                         return sqrt(abs(make({2, 3}, 1)));
                       },
                       {2, 3},
                       {1.3725555784583865, 0.8608214353409108, 1.016889422188073,
                        1.2612922986134611, 0.46452192848266044, 1.2487181501280136}));
  t.push_back(entry("rsqrt", [](const V& v) { return rsqrt(v[0]); }, unary_samples(arg_pos),
                    {e("rsqrt", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { rsqrt(undefined()); })})
                  .py("torch.rsqrt(x[0])")
                  .ref("torch.rsqrt(make((2, 3), 1).abs())",
                       [] {
                         return rsqrt(abs(make({2, 3}, 1)));
                       },
                       {2, 3},
                       {0.7285679470431137, 1.1616811093975261, 0.9833910926600735,
                        0.7928376325609061, 2.1527509008378876, 0.8008212260688964}));
  t.push_back(entry("abs", [](const V& v) { return abs(v[0]); }, unary_samples(arg),
                    {e("abs", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { abs(undefined()); })})
                  .py("torch.abs(x[0])")
                  .ref("torch.abs(make((2, 3), 1))",
                       [] {
                         return abs(make({2, 3}, 1));
                       },
                       {2, 3},
                       {1.883908815957236, 0.7410135435423859, 1.0340640969579933,
                        1.5908582625416283, 0.21578062204124993, 1.5592970184591284}));
  t.push_back(entry("sign", [](const V& v) { return sign(v[0]); }, unary_samples(arg),
                    {e("sign", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { sign(undefined()); })})
                  .py("torch.sign(x[0])")
                  .ref("torch.sign(make((2, 3), 1))",
                       [] {
                         return sign(make({2, 3}, 1));
                       },
                       {2, 3}, {-1.0, 1.0, -1.0, 1.0, 1.0, -1.0}));
  t.push_back(entry("tanh", [](const V& v) { return tanh(v[0]); }, unary_samples(arg),
                    {e("tanh", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { tanh(undefined()); })})
                  .py("torch.tanh(x[0])")
                  .ref("torch.tanh(make((2, 3), 1))",
                       [] {
                         return tanh(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.9548384878860765, 0.629757130026985, -0.7755331909945846,
                        0.9202808215025472, 0.21249283482706205, -0.915306496201275}));
  t.push_back(entry("sigmoid", [](const V& v) { return sigmoid(v[0]); }, unary_samples(arg),
                    {e("sigmoid", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { sigmoid(undefined()); })})
                  .py("torch.sigmoid(x[0])")
                  .ref("torch.sigmoid(make((2, 3), 1))",
                       [] {
                         return sigmoid(make({2, 3}, 1));
                       },
                       {2, 3},
                       {0.1319405436770913, 0.6772174505337845, 0.2622969531922167,
                        0.8307368203296346, 0.5537368125844715, 0.17374754343654558}));
  t.push_back(
      entry("relu", [](const V& v) { return relu(v[0]); }, unary_samples(arg),
            {e("relu", "bool tensor", "not supported for bool tensors",
               [] {
                 relu(mask({1, 0}, {2}));
               })})
          .py("torch.relu(x[0])")
          .ref("torch.relu(make((2, 3), 1))",
               [] {
                 return relu(make({2, 3}, 1));
               },
               {2, 3},
               {0.0, 0.7410135435423859, 0.0, 1.5908582625416283, 0.21578062204124993, 0.0}));
  t.push_back(entry("erf", [](const V& v) { return erf(v[0]); }, unary_samples(arg),
                    {e("erf", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { erf(undefined()); })})
                  .py("torch.erf(x[0])")
                  .ref("torch.erf(make((2, 3), 1))",
                       [] {
                         return erf(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.9922839666417647, 0.7053390025409855, -0.8563649389980791,
                        0.9755392025639702, 0.23975561463135647, -0.9725584631903764}));
  t.push_back(entry("gelu", [](const V& v) { return gelu(v[0]); }, unary_samples(arg),
                    {e("gelu", "unknown approximate",
                       "approximate must be \"none\" or \"tanh\", got \"fast\"",
                       [] { gelu(make({2}, 1), "fast"); }),
                     e("gelu", "int64 tensor", "expected a floating-point tensor but got int64",
                       [] {
                         gelu(indices({1, 2}, {2}));
                       })})
                  .py("F.gelu(x[0])")
                  .ref("F.gelu(make((2, 3), 1))",
                       [] {
                         return gelu(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.05611911027825145, 0.5710675602684112, -0.15568155503418157,
                        1.5020553791546478, 0.126322426201005, -0.09272055430811586}));
  t.push_back(entry(
                  "gelu_tanh", [](const V& v) { return gelu(v[0], "tanh"); }, unary_samples(arg))
                  .py("F.gelu(x[0], approximate='tanh')")
                  .ref("F.gelu(make((2, 3), 1), approximate='tanh')",
                       [] {
                         return gelu(make({2, 3}, 1), "tanh");
                       },
                       {2, 3},
                       {-0.05611965015940681, 0.5710011895056336, -0.15584614925882304,
                        1.5018673849721556, 0.12632173548777562, -0.09292057393785781}));
  t.push_back(entry("silu", [](const V& v) { return silu(v[0]); }, unary_samples(arg),
                    {e("silu", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { silu(undefined()); })})
                  .py("F.silu(x[0])")
                  .ref("F.silu(make((2, 3), 1))",
                       [] {
                         return silu(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.24856395341546303, 0.5018273027687801, -0.27123186203754257,
                        1.3215845346189594, 0.1194856738666163, -0.2709240264452034}));
  t.push_back(entry("mish", [](const V& v) { return mish(v[0]); }, unary_samples(arg),
                    {e("mish", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { mish(undefined()); })})
                  .py("F.mish(x[0])")
                  .ref("F.mish(make((2, 3), 1))",
                       [] {
                         return mish(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.2647989939700648, 0.6011730373185459, -0.30521866810111303,
                        1.5022408973993069, 0.14410841977641256, -0.2940379694761335}));
  {
    std::vector<Sample> r = unary_samples(arg);
    r.push_back(s("min only", {arg({3, 4}, 7)},
                  [](const V& v) { return clamp(v[0], -0.5, std::nullopt); }));
    r.push_back(
        s("max only", {arg({3, 4}, 8)}, [](const V& v) { return clamp(v[0], std::nullopt, 0.7); }));
    r.push_back(s("non-contiguous, min only", {arg_t({4, 3}, 9)},
                  [](const V& v) { return clamp(v[0], 0.1); }));
    t.push_back(entry("clamp", [](const V& v) { return clamp(v[0], -0.5, 0.7); }, std::move(r),
                      {e("clamp", "neither bound", "at least one of min and max must be given",
                         [] { clamp(make({2}, 1), std::nullopt); }),
                       e("clamp", "bool tensor", "not supported for bool tensors",
                         [] {
                           clamp(mask({1, 0}, {2}), 0.0, 1.0);
                         })})
                    .py("torch.clamp(x[0], -0.5, 0.7)",
                        {{"min only", "torch.clamp(x[0], min=-0.5)"},
                         {"max only", "torch.clamp(x[0], max=0.7)"},
                         {"non-contiguous, min only", "torch.clamp(x[0], min=0.1)"}})
                    .ref("torch.clamp(make((2, 3), 1), -0.5, 0.7)",
                         [] {
                           return clamp(make({2, 3}, 1), -0.5, 0.7);
                         },
                         {2, 3}, {-0.5, 0.7, -0.5, 0.7, 0.21578062204124993, -0.5}));
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
              {e("pow", "int64 to a negative int power",
                 "integers to negative integer powers are not allowed (-1)",
                 [] { pow(indices({2}, {1}), -1); }),
               e("pow", "undefined tensor",
                 "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                 [] { pow(undefined(), 2.0); })})
            .py("torch.pow(x[0], 2)", {{"exponent 3 (int)", "torch.pow(x[0], 3)"},
                                       {"exponent 0.5", "torch.pow(x[0], 0.5)"},
                                       {"exponent -1.5", "torch.pow(x[0], -1.5)"},
                                       {"exponent 0", "torch.pow(x[0], 0)"},
                                       {"exponent 1", "torch.pow(x[0], 1.0)"}})
            .ref("torch.pow(make((2, 3), 1), 3)",
                 [] {
                   return pow(make({2, 3}, 1), 3);
                 },
                 {2, 3},
                 {-6.686204189749884, 0.40689133091315227, -1.105712905686243, 4.026191834878277,
                  0.010047021281406068, -3.791285984795662})
            .ref("torch.pow(make((2, 3), 1).abs(), -1.5)",
                 [] {
                   return pow(abs(make({2, 3}, 1)), -1.5);
                 },
                 {2, 3},
                 {0.3867320651997267, 1.5676921420952112, 0.9509962637258275, 0.4983710059086171,
                  9.97657194827418, 0.5135783731955408}));
  }
  {
    std::vector<Sample> r = unary_samples(arg);  // base 2.5
    r.push_back(s("base 0.5", {arg({2, 3}, 6)}, [](const V& v) { return pow(0.5, v[0]); }));
    t.push_back(
        entry("pow_scalar_base", [](const V& v) { return pow(2.5, v[0]); }, std::move(r),
              {e("pow", "undefined exponent",
                 "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                 [] { pow(2.0, undefined()); })})
            .py("torch.pow(2.5, x[0])", {{"base 0.5", "torch.pow(0.5, x[0])"}})
            .ref("torch.pow(2.5, make((2, 3), 1))",
                 [] {
                   return pow(2.5, make({2, 3}, 1));
                 },
                 {2, 3},
                 {0.17795791526182642, 1.971872979605434, 0.3877077874587247, 4.29601857803096,
                  1.2186184317838855, 0.239603595581441}));
  }

  // where and masked_fill.
  Tensor c23 = mask({1, 0, 0, 1, 1, 0}, {2, 3});
  Tensor c3 = mask({0, 1, 1}, {3});
  t.push_back(
      entry(
          "where", [](const V& v) { return where(v[0], v[1], v[2]); },
          {s("same shape", {c23, arg({2, 3}, 1), arg({2, 3}, 2)}),
           s("broadcast cond, a and b", {c3, arg({2, 3}, 1), arg({2, 1}, 2)}),
           s("non-contiguous", {c23, arg_t({3, 2}, 1), arg({3}, 2)}),
           s("0-dim operand", {c23, arg({}, 1), arg({2, 3}, 2)}),
           s("scalar b", {c23, arg({2, 3}, 3)}, [](const V& v) { return where(v[0], v[1], 0.5); }),
           s("scalar a", {c3, arg({2, 3}, 4)}, [](const V& v) { return where(v[0], -1.5, v[1]); }),
           s("cond broadcasts a and b", {c23, arg({3}, 5), arg({}, 6)}),
           s("empty", {mask({}, {0, 3}), arg({0, 3}, 1), arg({3}, 2)})},
          {e("where", "int64 condition", "condition must be a bool tensor, got int64",
             [] {
               where(indices({1, 0}, {2}), make({2}, 1), make({2}, 2));
             }),
           e("where", "shapes do not broadcast",
             "shapes (2,) and (3,) cannot be broadcast: size 2 and size 3 differ at dim 0 and "
             "neither is 1",
             [] {
               where(mask({1, 0}, {2}), make({3}, 1), make({3}, 2));
             })})
          .py("torch.where(x[0], x[1], x[2])", {{"scalar b", "torch.where(x[0], x[1], 0.5)"},
                                                {"scalar a", "torch.where(x[0], -1.5, x[1])"}})
          .ref("torch.where(cond, make((2, 3), 1), make((2, 1), 2))",
               [] {
                 return where(cond(), make({2, 3}, 1), make({2, 1}, 2));
               },
               {2, 3},
               {-1.883908815957236, -0.3927399914140932, -0.3927399914140932, 1.5908582625416283,
                0.21578062204124993, -1.7678176319144716}));
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
            {e("masked_fill", "int64 mask", "mask must be a bool tensor, got int64",
               [] {
                 masked_fill(make({2}, 1), indices({1, 0}, {2}), 0.0);
               }),
             e("masked_fill", "mask larger than the tensor",
               "mask of shape (2, 3) does not broadcast to the tensor's shape (3,)",
               [] {
                 masked_fill(make({3}, 1), mask({1, 0, 1, 0, 1, 0}, {2, 3}), 0.0);
               })})
          .py("x[0].masked_fill(x[1], -2.5)", {{"-inf fill, then softmax (attention mask)",
                                                "torch.softmax(x[0].masked_fill(torch.ones(3, "
                                                "3).triu(1).bool(), float('-inf')), -1)"}})
          .ref("make((2, 3), 1).masked_fill(cond, -2.5)",
               [] {
                 return masked_fill(make({2, 3}, 1), cond(), -2.5);
               },
               {2, 3},
               {-2.5, 0.7410135435423859, -1.0340640969579933, -2.5, -2.5, -1.5592970184591284}));
}

// ---------------------------------------------------------------- reductions

void add_reductions(std::vector<OpInfo>& t) {
  auto dim_errors = [](const char* op, std::function<void(const Tensor&, const Shape&)> call) {
    return std::vector<ErrorInput>{
        e(op, "dim out of range", "is out of range for a tensor with",
          [call] {
            call(make({2, 3}, 1), {2});
          }),
        e(op, "repeated dim", "appears multiple times in the list of dims", [call] {
          call(make({2, 3}, 1), {1, -1});
        })};
  };
  t.push_back(
      entry(
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
          dim_errors("sum", [](const Tensor& x, const Shape& d) { sum(x, d); }))
          .py("torch.sum(x[0])", {{"dim 1", "torch.sum(x[0], (1,))"},
                                  {"dim 0 keepdim", "torch.sum(x[0], (0,), True)"},
                                  {"dims 0, 2 of 3-D", "torch.sum(x[0], (0, 2))"},
                                  {"negative dim", "torch.sum(x[0], (-2,))"},
                                  {"non-contiguous", "torch.sum(x[0], (1,))"},
                                  {"non-contiguous 3-D, dims 0, 2", "torch.sum(x[0], (0, 2))"},
                                  {"0-dim, dim 0", "torch.sum(x[0], (0,))"},
                                  {"all dims keepdim", "torch.sum(x[0], all_dims(x[0]), True)"},
                                  {"size-1 dim", "torch.sum(x[0], (0,))"},
                                  {"empty reduced dim", "torch.sum(x[0], (0,))"},
                                  {"empty kept dim", "torch.sum(x[0], (0,))"}})
          .ref("torch.sum(make((2, 3, 4), 1), (0, 2))",
               [] {
                 return sum(make({2, 3, 4}, 1), {0, 2});
               },
               {3}, {-2.7759289576805797, 0.821586546307312, -0.3808979497047953}));
  t.push_back(
      entry(
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
            r.push_back(e(
                "mean", "int64 tensor",
                "could not infer output dtype: input dtype must be floating point, got int64", [] {
                  mean(indices({1, 2}, {2}));
                }));
            return r;
          }())
          .py("torch.mean(x[0])", {{"dim 1", "torch.mean(x[0], (1,))"},
                                   {"dim 0 keepdim", "torch.mean(x[0], (0,), True)"},
                                   {"dims 0, 2 of 3-D", "torch.mean(x[0], (0, 2))"},
                                   {"non-contiguous", "torch.mean(x[0], (-1,))"},
                                   {"empty kept dim", "torch.mean(x[0], (0,))"}})
          .ref("torch.mean(make((2, 3), 1), 0, keepdim=True)",
               [] {
                 return mean(make({2, 3}, 1), {0}, true);
               },
               {1, 3}, {-0.1465252767078038, 0.4783970827918179, -1.296680557708561}));

  auto values = [](std::tuple<Tensor, Tensor> r) { return std::get<0>(r); };
  t.push_back(entry("max", [](const V& v) { return max(v[0]); },
                    {s("2-D", {arg({2, 3}, 1)}), s("non-contiguous", {arg_t({4, 3}, 2)}),
                     s("0-dim", {arg({}, 3)}), s("1 element", {arg({1, 1}, 4)})},
                    {e("max", "empty tensor",
                       "cannot reduce over a zero-size dimension (input shape (0, 3)): the "
                       "operation has no identity",
                       [] {
                         max(make({0, 3}, 1));
                       })})
                  .py("torch.max(x[0])")
                  .ref("torch.max(make((4, 3), 1))",
                       [] {
                         return max(make({4, 3}, 1));
                       },
                       {}, {1.9154700600397367}));
  t.push_back(entry("min", [](const V& v) { return min(v[0]); },
                    {s("2-D", {arg({2, 3}, 1)}), s("non-contiguous", {arg_t({4, 3}, 2)}),
                     s("0-dim", {arg({}, 3)})},
                    {e("min", "empty tensor",
                       "cannot reduce over a zero-size dimension (input shape (0, 3)): the "
                       "operation has no identity",
                       [] {
                         min(make({0, 3}, 1));
                       })})
                  .py("torch.min(x[0])")
                  .ref("torch.min(make((4, 3), 1))",
                       [] {
                         return min(make({4, 3}, 1));
                       },
                       {}, {-1.883908815957236}));
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
               "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 max(make({2, 3}, 1), 2);
               }),
             e("max", "reduce a zero-size dim",
               "cannot reduce over a zero-size dimension (input shape (0, 3)): the operation has "
               "no identity",
               [] {
                 max(make({0, 3}, 1), 0);
               })})
          .py("torch.max(x[0], 1)[0]", {{"dim 0 keepdim", "torch.max(x[0], 0, True)[0]"},
                                        {"negative dim of 3-D", "torch.max(x[0], -1)[0]"},
                                        {"0-dim", "torch.max(x[0], 0)[0]"}})
          .ref("torch.max(make((3, 4), 1), 1).values",
               [] {
                 return std::get<0>(max(make({3, 4}, 1), 1));
               },
               {3}, {1.5908582625416283, 1.0656253410404934, 1.9154700600397367}));
  t.push_back(
      entry("min_dim", [values](const V& v) { return values(min(v[0], 1)); },
            {s("dim 1", {arg({2, 3}, 1)}),
             s("dim 0 keepdim", {arg({3, 4}, 2)},
               [values](const V& v) { return values(min(v[0], 0, true)); }),
             s("non-contiguous", {arg_t({4, 3}, 4)})},
            {e("min", "dim out of range",
               "dim -3 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 min(make({2, 3}, 1), -3);
               })})
          .py("torch.min(x[0], 1)[0]", {{"dim 0 keepdim", "torch.min(x[0], 0, True)[0]"}})
          .ref("torch.min(make((3, 4), 1), 0).values",
               [] {
                 return std::get<0>(min(make({3, 4}, 1), 0));
               },
               {4},
               {-1.883908815957236, -1.5592970184591284, -1.23468522096102, -0.7094522994598851}));
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
  t.push_back(
      entry(
          "amax", [](const V& v) { return amax(v[0]); },
          amax_samples([](const Tensor& x, const Shape& d, bool k) { return amax(x, d, k); }),
          [&] {
            auto r = dim_errors("amax", [](const Tensor& x, const Shape& d) { amax(x, d); });
            r.push_back(e("amax", "reduce a zero-size dim",
                          "cannot reduce over a zero-size dimension (input shape (0, 3)): the "
                          "operation has no identity",
                          [] {
                            amax(make({0, 3}, 1), {0});
                          }));
            return r;
          }())
          .py("torch.amax(x[0], all_dims(x[0]))",
              {{"dim 1 keepdim", "torch.amax(x[0], (1,), True)"},
               {"dims 0, 2 of 3-D", "torch.amax(x[0], (0, 2), False)"},
               {"non-contiguous", "torch.amax(x[0], (0,), False)"},
               {"empty kept dim", "torch.amax(x[0], (1,), False)"}})
          .ref("torch.amax(make((2, 3, 4), 1), (0, 2))",
               [] {
                 return amax(make({2, 3, 4}, 1), {0, 2});
               },
               {3}, {1.5908582625416283, 1.714848936036713, 1.9154700600397367}));
  t.push_back(
      entry(
          "amin", [](const V& v) { return amin(v[0]); },
          amax_samples([](const Tensor& x, const Shape& d, bool k) { return amin(x, d, k); }),
          dim_errors("amin", [](const Tensor& x, const Shape& d) { amin(x, d); }))
          .py("torch.amin(x[0], all_dims(x[0]))",
              {{"dim 1 keepdim", "torch.amin(x[0], (1,), True)"},
               {"dims 0, 2 of 3-D", "torch.amin(x[0], (0, 2), False)"},
               {"non-contiguous", "torch.amin(x[0], (0,), False)"},
               {"empty kept dim", "torch.amin(x[0], (1,), False)"}})
          .ref("torch.amin(make((2, 3, 4), 1), -1)",
               [] {
                 return amin(make({2, 3, 4}, 1), {-1});
               },
               {2, 3},
               {-1.883908815957236, -1.5592970184591284, -1.23468522096102, -1.759918142462152,
                -1.4353063449640437, -1.9605392664651788}));

  t.push_back(
      entry(
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
            r.push_back(e("var", "int64 tensor", "expected a floating-point tensor, got int64", [] {
              var(indices({1, 2}, {2}));
            }));
            return r;
          }())
          .py("torch.var(x[0])",
              {{"dim 1", "torch.var(x[0], (1,))"},
               {"correction 0, keepdim", "torch.var(x[0], (0,), correction=0, keepdim=True)"},
               {"dims 0, 2 of 3-D", "torch.var(x[0], (0, 2))"},
               {"non-contiguous", "torch.var(x[0], (1,))"}})
          .ref("torch.var(make((3, 4), 1), 1)",
               [] {
                 return var(make({3, 4}, 1), {1});
               },
               {3}, {2.5374844799373206, 1.291045558738431, 1.904461708605501})
          .ref("torch.var(make((3, 4), 1), 0, correction=0)",
               [] {
                 return var(make({3, 4}, 1), {0}, 0);
               },
               {4},
               {2.4147688627842254, 1.0822636947882625, 1.082263694788262, 1.0822636947882618}));
  t.push_back(
      entry(
          "std", [](const V& v) { return std(v[0]); },
          {s("all", {arg({2, 3}, 1)}),
           s("dim 1", {arg({2, 3}, 2)}, [](const V& v) { return std(v[0], {1}); }),
           s("correction 0, keepdim", {arg({3, 4}, 3)},
             [](const V& v) { return std(v[0], {0}, 0, true); }),
           s("non-contiguous", {arg_t({4, 3}, 5)}, [](const V& v) { return std(v[0], {1}); })},
          [&] {
            auto r = dim_errors("std", [](const Tensor& x, const Shape& d) { std(x, d); });
            r.push_back(e("std", "int64 tensor", "expected a floating-point tensor, got int64", [] {
              std(indices({1, 2}, {2}));
            }));
            return r;
          }())
          .py("torch.std(x[0])",
              {{"dim 1", "torch.std(x[0], (1,))"},
               {"correction 0, keepdim", "torch.std(x[0], (0,), correction=0, keepdim=True)"},
               {"non-contiguous", "torch.std(x[0], (1,))"}})
          .ref("torch.std(make((3, 4), 1))",
               [] {
                 return std(make({3, 4}, 1));
               },
               {}, {1.3192165403371665}));
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
                   s("large values", {arg({2, 3}, 5)},
                     [](const V& v) { return logsumexp(v[0] * 300, {1}); }),
                   s("empty kept dim", {arg({0, 3}, 6)})},
                  dim_errors("logsumexp", [](const Tensor& x, const Shape& d) { logsumexp(x, d); }))
                  .py("torch.logsumexp(x[0], (1,))",
                      {{"dims 0, 1 keepdim", "torch.logsumexp(x[0], (0, 1), True)"},
                       {"3-D, negative dim", "torch.logsumexp(x[0], (-1,))"},
                       {"large values", "torch.logsumexp(x[0] * 300, (1,))"}})
                  .ref("torch.logsumexp(make((2, 3), 1) * 300, 1)",
                       [] {
                         return logsumexp(make({2, 3}, 1) * 300, {1});
                       },
                       {2}, {222.30406306271578, 477.2574787624885}));
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
                      auto r2 = dim_errors("norm",
                                           [](const Tensor& x, const Shape& d) { norm(x, 2, d); });
                      r2.push_back(e("norm", "p = 0", "p must be positive (got 0)",
                                     [] { norm(make({2}, 1), 0); }));
                      r2.push_back(e("norm", "int64 tensor",
                                     "expected a floating-point tensor, got int64", [] {
                                       norm(indices({1, 2}, {2}));
                                     }));
                      return r2;
                    }())
                    .py("torch.linalg.vector_norm(x[0])",
                        {{"p=1, all", "torch.linalg.vector_norm(x[0], 1.0)"},
                         {"p=1, dim 1", "torch.linalg.vector_norm(x[0], 1.0, (1,))"},
                         {"p=1, non-contiguous dim 0 keepdim",
                          "torch.linalg.vector_norm(x[0], 1.0, (0,), True)"},
                         {"p=2, all", "torch.linalg.vector_norm(x[0], 2.0)"},
                         {"p=2, dim 1", "torch.linalg.vector_norm(x[0], 2.0, (1,))"},
                         {"p=2, non-contiguous dim 0 keepdim",
                          "torch.linalg.vector_norm(x[0], 2.0, (0,), True)"},
                         {"p=3, all", "torch.linalg.vector_norm(x[0], 3.0)"},
                         {"p=3, dim 1", "torch.linalg.vector_norm(x[0], 3.0, (1,))"},
                         {"p=3, non-contiguous dim 0 keepdim",
                          "torch.linalg.vector_norm(x[0], 3.0, (0,), True)"},
                         {"p=inf, all", "torch.linalg.vector_norm(x[0], math.inf)"},
                         {"p=inf, dim 1", "torch.linalg.vector_norm(x[0], math.inf, (1,))"},
                         {"p=inf, non-contiguous dim 0 keepdim",
                          "torch.linalg.vector_norm(x[0], math.inf, (0,), True)"},
                         {"p=0.5, all", "torch.linalg.vector_norm(x[0], 0.5)"}})
                    .ref("torch.norm(make((2, 3), 1), p=1)",
                         [] {
                           return norm(make({2, 3}, 1), 1);
                         },
                         {}, {7.024922359499622})
                    .ref("torch.norm(make((2, 3), 1), p=2, dim=1)",
                         [] {
                           return norm(make({2, 3}, 1), 2, {1});
                         },
                         {2}, {2.273214036374971, 2.238034512718918})
                    .ref("torch.norm(make((2, 3), 1), p=3, dim=0)",
                         [] {
                           return norm(make({2, 3}, 1), 3, {0});
                         },
                         {3}, {2.204426077332023, 0.7470630935303605, 1.6981524207252487})
                    .ref("torch.norm(make((2, 3), 1), p=float('inf'), dim=1)",
                         [] {
                           return norm(make({2, 3}, 1), INFINITY, {1});
                         },
                         {2}, {1.883908815957236, 1.5908582625416283}));
  }
}

// ---------------------------------------------------------------- linear algebra, softmax

void add_linalg(std::vector<OpInfo>& t) {
  t.push_back(
      entry("matmul", [](const V& v) { return matmul(v[0], v[1]); },
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
               "a has shape (2, 3) and b has shape (4, 5): a.shape[-1] (3) must equal b.shape[-2] "
               "(4)",
               [] {
                 matmul(make({2, 3}, 1), make({4, 5}, 2));
               }),
             e("matmul", "0-dim operand",
               "both arguments need to be at least 1-D, but they have shapes () and (3,)",
               [] { matmul(make({}, 1), make({3}, 2)); }),
             e("matmul", "dtypes differ",
               "expected both operands to have the same dtype, but a is float64 and b is float32",
               [] {
                 matmul(make({2, 3}, 1), ones({3, 2}));
               }),
             e("matmul", "batch dims do not broadcast",
               "a has shape (2, 2, 3) and b has shape (3, 3, 2): the batch dims (2,) and (3,) "
               "cannot be broadcast",
               [] {
                 matmul(make({2, 2, 3}, 1), make({3, 3, 2}, 2));
               }),
             e("matmul", "bool operands", "bool tensors are not supported",
               [] {
                 matmul(mask({1, 0}, {1, 2}), mask({1, 0}, {2, 1}));
               })})
          .py("torch.matmul(x[0], x[1])",
              {{"q . k^T (batched transposed view)", "torch.matmul(x[0], x[1].transpose(-2, -1))"},
               {"permuted batch", "torch.matmul(x[0].permute(1, 0, 2), x[1])"},
               {"expanded operand", "torch.matmul(x[0].unsqueeze(0).expand(2, 3, 2), x[1])"}})
          .ref("torch.matmul(make((3,), 1), make((3,), 2))",
               [] { return matmul(make({3}, 1), make({3}, 2)); }, {}, {-1.4563917016864374})
          .ref("torch.matmul(make((2, 3), 1), make((3,), 2))",
               [] {
                 return matmul(make({2, 3}, 1), make({3}, 2));
               },
               {2}, {-1.4563917016864374, -2.3427352948723805})
          .ref("torch.matmul(make((3,), 1), make((3, 2), 2))",
               [] {
                 return matmul(make({3}, 1), make({3, 2}, 2));
               },
               {2}, {-0.39008259445645427, 2.3070001412289938})
          .ref("torch.matmul(make((2, 1, 2, 3), 1), make((3, 3, 2), 2))",
               [] {
                 return matmul(make({2, 1, 2, 3}, 1), make({3, 3, 2}, 2));
               },
               {2, 3, 2, 2},
               {-0.3900825944564543, 2.3070001412289938,  -3.1014882518183224, -3.5279147703012264,
                1.6003334472565292,  -2.5281880246868162, -3.447624682542262,  3.1994129053414957,
                -3.2348547186592835, -0.6600052528364173, 3.279702993100463,   -3.0708201672541087,
                2.2430219517796965,  -0.5968827646714177, 1.102576260074202,   0.6394728514562464,
                0.14051938581973977, 0.5131470897307535,  0.865384593686407,   1.5138819194260373,
                1.2505492402219116,  2.524684509890055,   1.7397936616561969,  1.188866867148418})
          .ref("torch.matmul(make((3, 2), 1).t(), make((4, 3), 2).t())",
               [] {
                 return matmul(make({3, 2}, 1).t(), make({4, 3}, 2).t());
               },
               {2, 4},
               {2.7528696666088552, 0.035893630170466984, 1.368861732747557, 2.7881420841411417,
                -4.439853785357223, 1.5177975520269547, 1.7357346466282644, 1.3299529338459268})
          .ref("torch.matmul(make((2, 3, 4), 1), make((2, 3, 4), 2).transpose(-2, -1))",
               [] {
                 return matmul(make({2, 3, 4}, 1), make({2, 3, 4}, 2).transpose(-2, -1));
               },
               {2, 3, 3},
               {-2.916756494987035, 0.4024952280154086, -2.799172232155138, 4.236417594525847,
                -2.5254483198821305, 4.434499528150221, -4.042051518020976, 6.873722682154568,
                -4.5659564096162395, -2.4215054489188996, -1.3218425865136334, -1.9821797241083674,
                6.018334281731316, -2.9631204932738395, 5.655424731721006, -2.536831989931149,
                -1.3566714567334073, -1.936510923535665}));
  t.push_back(
      entry("mm", [](const V& v) { return mm(v[0], v[1]); },
            {s("2-D . 2-D", {arg({2, 3}, 1), arg({3, 4}, 2)}),
             s("transposed operands", {arg_t({3, 2}, 1), arg_t({4, 3}, 2)}),
             s("size-1 dims", {arg({1, 3}, 1), arg({3, 1}, 2)}),
             s("empty", {arg({0, 3}, 1), arg({3, 2}, 2)})},
            {e("mm", "3-D operand", "expected 2-D tensors, got shapes (1, 2, 3) and (3, 2)",
               [] {
                 mm(make({1, 2, 3}, 1), make({3, 2}, 2));
               }),
             e("mm", "inner sizes differ",
               "a has shape (2, 3) and b has shape (2, 3): a.shape[-1] (3) must equal b.shape[-2] "
               "(2)",
               [] {
                 mm(make({2, 3}, 1), make({2, 3}, 2));
               })})
          .py("torch.mm(x[0], x[1])")
          .ref("torch.mm(make((2, 3), 1), make((3, 4), 2))",
               [] {
                 return mm(make({2, 3}, 1), make({3, 4}, 2));
               },
               {2, 4},
               {2.618332416248989, 5.611820569351388, -3.3629883466240815, 3.7617431458139547,
                0.66875917114481, 0.32864490147840325, 0.028463359325496092, 0.5388470801910896}));
  t.push_back(
      entry("bmm", [](const V& v) { return bmm(v[0], v[1]); },
            {s("3-D . 3-D", {arg({2, 2, 3}, 1), arg({2, 3, 4}, 2)}),
             s("transposed b", {arg({2, 2, 3}, 1), arg({2, 4, 3}, 2)},
               [](const V& v) { return bmm(v[0], v[1].transpose(1, 2)); }),
             s("non-contiguous batch", {arg({2, 3, 3}, 1), arg({2, 3, 2}, 2)},
               [](const V& v) { return bmm(v[0].transpose(0, 1).narrow(0, 0, 2), v[1]); }),
             s("batch 1", {arg({1, 2, 3}, 1), arg({1, 3, 2}, 2)})},
            {e("bmm", "2-D operand", "expected 3-D tensors, got shapes (2, 3) and (3, 2)",
               [] {
                 bmm(make({2, 3}, 1), make({3, 2}, 2));
               }),
             e("bmm", "batch sizes differ",
               "batch sizes differ: a has shape (2, 2, 3) and b has shape (3, 3, 2)",
               [] {
                 bmm(make({2, 2, 3}, 1), make({3, 3, 2}, 2));
               }),
             e("bmm", "inner sizes differ",
               "a has shape (2, 2, 3) and b has shape (2, 2, 3): a.shape[-1] (3) must equal "
               "b.shape[-2] (2)",
               [] {
                 bmm(make({2, 2, 3}, 1), make({2, 2, 3}, 2));
               })})
          .py("torch.bmm(x[0], x[1])",
              {{"transposed b", "torch.bmm(x[0], x[1].transpose(1, 2))"},
               {"non-contiguous batch", "torch.bmm(x[0].transpose(0, 1).narrow(0, 0, 2), x[1])"}})
          .ref("torch.bmm(make((2, 2, 3), 1), make((2, 3, 2), 2))",
               [] {
                 return bmm(make({2, 2, 3}, 1), make({2, 3, 2}, 2));
               },
               {2, 2, 2},
               {-0.3900825944564543, 2.3070001412289938, -3.1014882518183224, -3.5279147703012264,
                0.14051938581973977, 0.5131470897307535, 0.865384593686407, 1.5138819194260373}));

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
                       "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
                       [] {
                         softmax(make({2, 3}, 1), 2);
                       }),
                     e("softmax", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { softmax(undefined(), 0); })})
                  .py("torch.softmax(x[0], 1)", {{"dim 0", "torch.softmax(x[0], 0)"},
                                                 {"3-D, dim -1", "torch.softmax(x[0], -1)"},
                                                 {"3-D, middle dim", "torch.softmax(x[0], 1)"},
                                                 {"large logits", "torch.softmax(x[0] * 1000, 1)"},
                                                 {"0-dim", "torch.softmax(x[0], 0)"}})
                  .ref("torch.softmax(make((2, 3), 1), 1)",
                       [] {
                         return softmax(make({2, 3}, 1), 1);
                       },
                       {2, 3},
                       {0.058333575380060204, 0.8052076497207679, 0.13645877489917185,
                        0.7718041785456818, 0.1951275061585547, 0.03306831529576345})
                  .ref("torch.softmax(make((2, 3), 1) * 1000, 1)",
                       [] {
                         return softmax(make({2, 3}, 1) * 1000, 1);
                       },
                       {2, 3}, {0.0, 1.0, 0.0, 1.0, 0.0, 0.0}));
  t.push_back(
      entry("log_softmax", [](const V& v) { return log_softmax(v[0], 1); },
            softmax_samples([](const Tensor& x, std::int64_t d) { return log_softmax(x, d); }),
            {e("log_softmax", "dim out of range",
               "dim -3 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 log_softmax(make({2, 3}, 1), -3);
               })})
          .py("torch.log_softmax(x[0], 1)", {{"dim 0", "torch.log_softmax(x[0], 0)"},
                                             {"3-D, dim -1", "torch.log_softmax(x[0], -1)"},
                                             {"3-D, middle dim", "torch.log_softmax(x[0], 1)"},
                                             {"large logits", "torch.log_softmax(x[0] * 1000, 1)"},
                                             {"0-dim", "torch.log_softmax(x[0], 0)"}})
          .ref("torch.log_softmax(make((2, 3, 2), 1), 1)",
               [] {
                 return log_softmax(make({2, 3, 2}, 1), 1);
               },
               {2, 3, 2},
               {-2.4426007233346088, -1.2353293942570729, -1.592756004335366, -0.3854846752578304,
                -0.34291128533612275, -3.535639956258587, -1.2353293942570733, -2.537928737189889,
                -0.38548467525783014, -1.2880840181906457, -3.5356399562585867,
                -0.4382392991914024}));
}

// ---------------------------------------------------------------- shape

void add_shape(std::vector<OpInfo>& t) {
  t.push_back(
      entry("transpose", [](const V& v) { return transpose(v[0], 0, 1); },
            {s("2-D", {arg({2, 3}, 1)}),
             s("3-D dims 0, 2", {arg({2, 3, 4}, 2)},
               [](const V& v) { return transpose(v[0], 0, 2); }),
             s("negative dims", {arg({2, 3, 4}, 3)},
               [](const V& v) { return v[0].transpose(-1, -2); }),
             s("non-contiguous", {arg_t({3, 2}, 4)}),
             s("same dim", {arg({2, 3}, 5)}, [](const V& v) { return transpose(v[0], 1, 1); }),
             s("0-dim", {arg({}, 7)}, [](const V& v) { return transpose(v[0], 0, -1); }),
             s("empty", {arg({0, 3}, 6)})},
            {e("transpose", "dim out of range",
               "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 transpose(make({2, 3}, 1), 0, 2);
               })})
          .py("torch.transpose(x[0], 0, 1)", {{"3-D dims 0, 2", "torch.transpose(x[0], 0, 2)"},
                                              {"negative dims", "x[0].transpose(-1, -2)"},
                                              {"same dim", "torch.transpose(x[0], 1, 1)"},
                                              {"0-dim", "torch.transpose(x[0], 0, -1)"}})
          .ref("make((2, 3, 2), 1).transpose(0, 2)",
               [] {
                 return transpose(make({2, 3, 2}, 1), 0, 2);
               },
               {2, 3, 2},
               {-1.883908815957236, 1.0656253410404934, -1.0340640969579933, 1.9154700600397367,
                0.21578062204124993, -1.23468522096102, 0.7410135435423859, -0.7094522994598851,
                1.5908582625416283, 0.5403924195393581, -1.5592970184591284, 1.3902371385386014}));
  t.push_back(entry("t", [](const V& v) { return v[0].t(); },
                    {s("2-D", {arg({2, 3}, 1)}), s("1-D", {arg({3}, 2)}),
                     s("non-contiguous", {arg_t({3, 2}, 3)})},
                    {e("t", "3-D tensor",
                       "expects a tensor with <= 2 dims, but got 3 dims (shape (1, 2, 3)); use "
                       "transpose(-2, -1) for batches",
                       [] {
                         make({1, 2, 3}, 1).t();
                       })})
                  .py("x[0].t()")
                  .ref("make((2, 3), 1).t()",
                       [] {
                         return make({2, 3}, 1).t();
                       },
                       {3, 2},
                       {-1.883908815957236, 1.5908582625416283, 0.7410135435423859,
                        0.21578062204124993, -1.0340640969579933, -1.5592970184591284}));
  t.push_back(
      entry("permute",
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
               "number of dims 1 in (0,) does not match the tensor's 2 dims",
               [] {
                 permute(make({2, 3}, 1), {0});
               }),
             e("permute", "repeated dim", "dim 1 repeats in (1, 1)",
               [] {
                 permute(make({2, 3}, 1), {1, 1});
               })})
          .py("x[0].permute(2, 0, 1)", {{"negative dims", "x[0].permute(-1, 1, 0)"},
                                        {"non-contiguous 2-D", "x[0].permute(1, 0)"}})
          .ref("make((2, 3, 2), 1).permute(2, 0, 1)",
               [] {
                 return permute(make({2, 3, 2}, 1), {2, 0, 1});
               },
               {2, 2, 3},
               {-1.883908815957236, -1.0340640969579933, 0.21578062204124993, 1.0656253410404934,
                1.9154700600397367, -1.23468522096102, 0.7410135435423859, 1.5908582625416283,
                -1.5592970184591284, -0.7094522994598851, 0.5403924195393581, 1.3902371385386014}));
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
                       "the expanded size of the tensor (4) must match the existing size (3) at "
                       "non-singleton dim 1: target sizes (2, 4), tensor sizes (2, 3)",
                       [] {
                         make({2, 3}, 1).expand({2, 4});
                       }),
                     e("expand", "fewer sizes than dims",
                       "the number of sizes provided (1) must be greater or equal to the number of "
                       "dims in the tensor (2)",
                       [] {
                         make({2, 3}, 1).expand({3});
                       })})
                  .py("x[0].expand(3, 4)", {{"new leading dims", "x[0].expand(2, 2, 3)"},
                                            {"-1 keeps a size", "x[0].expand(4, -1)"},
                                            {"expand_as", "x[0].expand_as(x[1])"},
                                            {"non-contiguous", "x[0].expand(3, 2)"},
                                            {"0-dim", "x[0].expand(2, 3)"}})
                  .ref("make((3, 1), 1).expand(3, 2)",
                       [] {
                         return make({3, 1}, 1).expand({3, 2});
                       },
                       {3, 2},
                       {-1.883908815957236, -1.883908815957236, 0.7410135435423859,
                        0.7410135435423859, -1.0340640969579933, -1.0340640969579933}));
  t.push_back(entry("unsqueeze", [](const V& v) { return unsqueeze(v[0], 1); },
                    {s("middle", {arg({2, 3}, 1)}),
                     s("end (-1)", {arg({2, 3}, 2)}, [](const V& v) { return v[0].unsqueeze(-1); }),
                     s("0-dim", {arg({}, 3)}, [](const V& v) { return unsqueeze(v[0], 0); }),
                     s("non-contiguous", {arg_t({3, 2}, 4)})},
                    {e("unsqueeze", "dim out of range",
                       "dim 3 is out of range for a tensor with 3 dims (expected a dim in [-3, 2])",
                       [] {
                         unsqueeze(make({2, 3}, 1), 3);
                       })})
                  .py("torch.unsqueeze(x[0], 1)",
                      {{"end (-1)", "x[0].unsqueeze(-1)"}, {"0-dim", "x[0].unsqueeze(0)"}})
                  .ref("make((2, 3), 1).unsqueeze(1)",
                       [] {
                         return unsqueeze(make({2, 3}, 1), 1);
                       },
                       {2, 1, 3},
                       {-1.883908815957236, 0.7410135435423859, -1.0340640969579933,
                        1.5908582625416283, 0.21578062204124993, -1.5592970184591284}));
  t.push_back(entry("squeeze", [](const V& v) { return squeeze(v[0]); },
                    {s("all size-1 dims", {arg({1, 3, 1}, 1)}),
                     s("dim 0", {arg({1, 3}, 2)}, [](const V& v) { return squeeze(v[0], 0); }),
                     s("non-size-1 dim (no-op)", {arg({2, 3}, 3)},
                       [](const V& v) { return v[0].squeeze(1); }),
                     s("non-contiguous", {arg_t({3, 1}, 4)}),
                     s("0-dim", {arg({}, 5)}, [](const V& v) { return squeeze(v[0], 0); })},
                    {e("squeeze", "dim out of range",
                       "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
                       [] {
                         squeeze(make({2, 3}, 1), 2);
                       })})
                  .py("torch.squeeze(x[0])", {{"dim 0", "torch.squeeze(x[0], 0)"},
                                              {"non-size-1 dim (no-op)", "x[0].squeeze(1)"},
                                              {"0-dim", "torch.squeeze(x[0], 0)"}})
                  .ref("make((1, 3, 1), 1).squeeze()",
                       [] {
                         return squeeze(make({1, 3, 1}, 1));
                       },
                       {3}, {-1.883908815957236, 0.7410135435423859, -1.0340640969579933}));
  t.push_back(
      entry("select", [](const V& v) { return v[0].select(0, 1); },
            {s("dim 0", {arg({3, 4}, 1)}),
             s("dim 1, negative index", {arg({3, 4}, 2)},
               [](const V& v) { return v[0].select(1, -1); }),
             s("1-D to 0-dim", {arg({4}, 3)}, [](const V& v) { return v[0].select(0, 2); }),
             s("non-contiguous", {arg_t({4, 3}, 4)})},
            {e("select", "index out of range", "index 3 is out of range for dim 1 of size 3",
               [] {
                 make({2, 3}, 1).select(1, 3);
               }),
             e("select", "0-dim tensor", "cannot select from a 0-dim tensor",
               [] { make({}, 1).select(0, 0); })})
          .py("x[0].select(0, 1)", {{"dim 1, negative index", "x[0].select(1, -1)"},
                                    {"1-D to 0-dim", "x[0].select(0, 2)"}})
          .ref("make((3, 4), 1).select(1, -1)",
               [] {
                 return make({3, 4}, 1).select(1, -1);
               },
               {3}, {1.5908582625416283, -0.7094522994598851, 1.3902371385386014}));
  t.push_back(
      entry(
          "narrow", [](const V& v) { return v[0].narrow(1, 1, 2); },
          {s("dim 1", {arg({3, 4}, 1)}),
           s("dim 0, length 0", {arg({3, 4}, 2)}, [](const V& v) { return v[0].narrow(0, 1, 0); }),
           s("negative start", {arg({3, 4}, 3)}, [](const V& v) { return v[0].narrow(0, -2, 2); }),
           s("non-contiguous", {arg_t({4, 3}, 4)})},
          {e("narrow", "start + length too large",
             "start (2) + length (2) exceeds the size of dim 1 (3)",
             [] {
               make({2, 3}, 1).narrow(1, 2, 2);
             }),
           e("narrow", "start out of range", "start 4 is out of range for dim 1 of size 3",
             [] {
               make({2, 3}, 1).narrow(1, 4, 0);
             })})
          .py("x[0].narrow(1, 1, 2)", {{"dim 0, length 0", "x[0].narrow(0, 1, 0)"},
                                       {"negative start", "x[0].narrow(0, -2, 2)"}})
          .ref("make((3, 4), 1).t().narrow(0, 1, 2)",
               [] {
                 return make({3, 4}, 1).t().narrow(0, 1, 2);
               },
               {2, 3},
               {0.7410135435423859, -1.5592970184591284, 0.5403924195393581, -1.0340640969579933,
                1.0656253410404934, -1.23468522096102}));
  t.push_back(
      entry(
          "reshape",
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
          {e("reshape", "numel differs", "shape (4,) is invalid for input of size 6 (shape (2, 3))",
             [] {
               reshape(make({2, 3}, 1), {4});
             }),
           e("reshape", "two -1", "only one dimension can be inferred (-1), got shape (-1, -1)",
             [] {
               reshape(make({2, 3}, 1), {-1, -1});
             })})
          .py("x[0].reshape(3, 2)", {{"-1", "x[0].reshape(-1, 4)"},
                                     {"non-contiguous (copies)", "x[0].reshape(6)"},
                                     {"to 0-dim", "x[0].reshape(())"},
                                     {"expanded (copies)", "x[0].expand(3, 2).reshape(6)"},
                                     {"empty", "x[0].reshape(3, 0)"}})
          .ref("make((3, 2), 1).t().reshape(6)",
               [] {
                 return reshape(make({3, 2}, 1).t(), {6});
               },
               {6},
               {-1.883908815957236, -1.0340640969579933, 0.21578062204124993, 0.7410135435423859,
                1.5908582625416283, -1.5592970184591284}));
  t.push_back(
      entry("view",
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
               "view size is not compatible with the input's size and stride (shape (2, 3), "
               "strides (1, 2)): at least one dimension spans two contiguous subspaces; use "
               "reshape() instead",
               [] {
                 make({3, 2}, 1).t().view({6});
               }),
             e("view", "numel differs", "shape (7,) is invalid for input of size 6 (shape (2, 3))",
               [] {
                 make({2, 3}, 1).view({7});
               })})
          .py("x[0].view(3, 2)", {{"split a dim", "x[0].view(2, 2, 3)"},
                                  {"non-contiguous, compatible", "x[0].view(2, 3, 1)"}})
          .ref("make((4, 3), 1).view(2, 2, 3)",
               [] {
                 return make({4, 3}, 1).view({2, 2, 3});
               },
               {2, 2, 3},
               {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
                0.21578062204124993, -1.5592970184591284, 1.0656253410404934, -0.7094522994598851,
                1.9154700600397367, 0.5403924195393581, -1.23468522096102, 1.3902371385386014}));
  t.push_back(
      entry("flatten", [](const V& v) { return flatten(v[0]); },
            {s("all", {arg({2, 3, 2}, 1)}),
             s("dims 1..2", {arg({2, 3, 2}, 2)}, [](const V& v) { return v[0].flatten(1); }),
             s("non-contiguous", {arg_t({3, 2}, 3)}), s("0-dim", {arg({}, 4)})},
            {e("flatten", "start after end", "start_dim (2) cannot come after end_dim (1)",
               [] {
                 flatten(make({2, 3, 4}, 1), 2, 1);
               })})
          .py("torch.flatten(x[0])", {{"dims 1..2", "x[0].flatten(1)"}})
          .ref("make((2, 3, 2), 1).flatten(1)",
               [] {
                 return flatten(make({2, 3, 2}, 1), 1);
               },
               {2, 6},
               {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
                0.21578062204124993, -1.5592970184591284, 1.0656253410404934, -0.7094522994598851,
                1.9154700600397367, 0.5403924195393581, -1.23468522096102, 1.3902371385386014}));
  t.push_back(entry("contiguous", [](const V& v) { return v[0].contiguous(); },
                    {s("non-contiguous", {arg_t({3, 2}, 1)}), s("contiguous", {arg({2, 3}, 2)})},
                    {e("contiguous", "undefined tensor", "called on an undefined tensor",
                       [] { undefined().contiguous(); })})
                  .py("x[0].contiguous()")
                  .ref("make((3, 2), 1).t().contiguous()",
                       [] {
                         return make({3, 2}, 1).t().contiguous();
                       },
                       {2, 3},
                       {-1.883908815957236, -1.0340640969579933, 0.21578062204124993,
                        0.7410135435423859, 1.5908582625416283, -1.5592970184591284}));
  t.push_back(entry("clone", [](const V& v) { return v[0].clone(); },
                    {s("2-D", {arg({2, 3}, 1)}), s("non-contiguous", {arg_t({3, 2}, 2)}),
                     s("0-dim", {arg({}, 3)})},
                    {e("clone", "undefined tensor", "called on an undefined tensor",
                       [] { undefined().clone(); })})
                  .py("x[0].clone()")
                  .ref("make((3, 2), 1).t().clone()",
                       [] {
                         return make({3, 2}, 1).t().clone();
                       },
                       {2, 3},
                       {-1.883908815957236, -1.0340640969579933, 0.21578062204124993,
                        0.7410135435423859, 1.5908582625416283, -1.5592970184591284}));
  {
    OpInfo to_op = entry("to", [](const V& v) { return v[0].to(kFloat32).to(kFloat64); },
                         {s("float64 -> float32 -> float64", {arg({2, 3}, 1)}),
                          s("non-contiguous", {arg_t({3, 2}, 2)}),
                          s("float64 -> float64 (no-op)", {arg({2, 3}, 3)},
                            [](const V& v) { return v[0].to(kFloat64) * 2; })},
                         {e("to", "undefined tensor", "called on an undefined tensor",
                            [] { undefined().to(kFloat32); })})
                       .py("x[0].to(torch.float32).to(torch.float64)",
                           {{"float64 -> float64 (no-op)", "x[0].to(torch.float64) * 2"}})
                       .ref("make((2, 3), 1).to(torch.float32).to(torch.float64)",
                            [] {
                              return make({2, 3}, 1).to(kFloat32).to(kFloat64);
                            },
                            {2, 3},
                            {-1.8839088678359985, 0.7410135269165039, -1.0340640544891357,
                             1.5908582210540771, 0.2157806158065796, -1.55929696559906});
    // float32 rounds each value to ~6e-8 relative: finite differences need a large step.
    to_op.tolerances.eps = 1e-2;
    to_op.tolerances.atol = 1e-4;
    t.push_back(std::move(to_op));
  }
}

// ---------------------------------------------------------------- joining and indexing

void add_indexing(std::vector<OpInfo>& t) {
  t.push_back(
      entry("cat", [](const V& v) { return cat(v, 0); },
            {s("dim 0", {arg({2, 3}, 1), arg({1, 3}, 2)}),
             s("dim 1, three tensors", {arg({2, 3}, 1), arg({2, 1}, 2), arg({2, 2}, 3)},
               [](const V& v) { return cat(v, 1); }),
             s("with an empty tensor", {arg({2, 3}, 1), arg({0, 3}, 2), arg({1, 3}, 3)}),
             s("non-contiguous", {arg_t({3, 2}, 1), arg({2, 3}, 2)}),
             s("int64 tensor without grad (promotes)",
               {arg({2, 2}, 1), indices({1, 2, 3, 4}, {2, 2})}),
             s("negative dim", {arg({2, 3}, 1), arg({2, 3}, 2)},
               [](const V& v) { return cat(v, -1); })},
            {e("cat", "empty list", "expected a non-empty list of tensors", [] { cat({}); }),
             e("cat", "sizes differ off dim",
               "sizes of tensors must match except in dim 0: tensor 0 has shape (2, 3) and tensor "
               "1 has shape (2, 4)",
               [] {
                 cat({make({2, 3}, 1), make({2, 4}, 2)}, 0);
               }),
             e("cat", "0-dim tensor",
               "zero-dimensional tensor (at position 0) cannot be concatenated",
               [] {
                 cat({make({}, 1), make({}, 2)});
               }),
             e("cat", "dim out of range",
               "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 cat({make({2, 3}, 1)}, 2);
               })})
          .py("torch.cat(x, 0)",
              {{"dim 1, three tensors", "torch.cat(x, 1)"}, {"negative dim", "torch.cat(x, -1)"}})
          .ref(
              "torch.cat([make((2, 3), 1), make((2, 1), 2)], 1)",
              [] {
                return cat({make({2, 3}, 1), make({2, 1}, 2)}, 1);
              },
              {2, 4},
              {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, -0.3927399914140932,
               1.5908582625416283, 0.21578062204124993, -1.5592970184591284, -1.7678176319144716}));
  t.push_back(
      entry("stack", [](const V& v) { return stack(v, 0); },
            {s("dim 0", {arg({2, 3}, 1), arg({2, 3}, 2)}),
             s("dim 1", {arg({2, 3}, 1), arg({2, 3}, 2), arg({2, 3}, 3)},
               [](const V& v) { return stack(v, 1); }),
             s("dim -1, non-contiguous", {arg_t({3, 2}, 1), arg({2, 3}, 2)},
               [](const V& v) { return stack(v, -1); }),
             s("0-dim tensors", {arg({}, 1), arg({}, 2)})},
            {e("stack", "shapes differ",
               "stack expects each tensor to be equal size, but got (2, 3) at entry 0 and (3, 2) "
               "at entry 1",
               [] {
                 stack({make({2, 3}, 1), make({3, 2}, 2)});
               }),
             e("stack", "empty list", "expected a non-empty list of tensors", [] { stack({}); })})
          .py("torch.stack(x, 0)",
              {{"dim 1", "torch.stack(x, 1)"}, {"dim -1, non-contiguous", "torch.stack(x, -1)"}})
          .ref(
              "torch.stack([make((2, 3), 1), make((2, 3), 2)], 1)",
              [] {
                return stack({make({2, 3}, 1), make({2, 3}, 2)}, 1);
              },
              {2, 2, 3},
              {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, -0.3927399914140932,
               -1.7678176319144716, 0.85710472758515, 1.5908582625416283, 0.21578062204124993,
               -1.5592970184591284, -0.9179729129152283, 1.7069494465843933, 0.33187180608401334}));
  // split and chunk: every piece is weighted differently so a mixed-up gradient shows.
  auto weighted = [](const std::vector<Tensor>& pieces, std::int64_t dim) {
    std::vector<Tensor> w;
    for (std::size_t i = 0; i < pieces.size(); ++i)
      w.push_back(pieces[i] * static_cast<double>(i + 1));
    return cat(w, dim);
  };
  t.push_back(
      entry(
          "split", [weighted](const V& v) { return weighted(split(v[0], 2, 1), 1); },
          {s("size 2 along dim 1 (last piece smaller)", {arg({2, 5}, 1)}),
           s("sizes {1, 3} along dim 0", {arg({4, 2}, 2)},
             [weighted](const V& v) {
               return weighted(split(v[0], Shape{1, 3}, 0), 0);
             }),
           s("non-contiguous", {arg_t({5, 2}, 3)}),
           s("one piece only", {arg({2, 5}, 4)}, [](const V& v) { return v[0].split(2, 1)[1]; })},
          {e("split", "sizes do not add up", "split sizes (1, 2) add up to 3 but dim 0 has size 4",
             [] {
               split(make({4}, 1), Shape{1, 2});
             }),
           e("split", "split_size 0", "split_size must be positive, got 0",
             [] { split(make({4}, 1), 0); }),
           e("split", "sizes past int64",
             "split sizes (9223372036854775807, 6) add up to more than int64 holds but dim 0 has "
             "size 4",
             [] {
               split(make({4}, 1), Shape{std::numeric_limits<std::int64_t>::max(), 6});
             })})
          .py("weighted(torch.split(x[0], 2, 1), 1)",
              {{"sizes {1, 3} along dim 0", "weighted(torch.split(x[0], [1, 3], 0), 0)"},
               {"one piece only", "x[0].split(2, 1)[1]"}})
          .ref("torch.split(make((2, 5), 1), 2, 1)[2]",
               [] {
                 return split(make({2, 5}, 1), 2, 1)[2];
               },
               {2, 1}, {0.21578062204124993, 0.5403924195393581}));
  t.push_back(
      entry("chunk", [weighted](const V& v) { return weighted(chunk(v[0], 3, 1), 1); },
            {s("3 chunks of 5", {arg({2, 5}, 1)}),
             s("2 chunks along dim 0", {arg({4, 2}, 2)},
               [weighted](const V& v) { return weighted(v[0].chunk(2, 0), 0); }),
             s("non-contiguous", {arg_t({6, 2}, 3)})},
            {e("chunk", "0 chunks", "number of chunks must be positive, got 0",
               [] { chunk(make({4}, 1), 0); }),
             e("chunk", "0-dim tensor", "cannot chunk a 0-dim tensor",
               [] { chunk(make({}, 1), 2); })})
          .py("weighted(torch.chunk(x[0], 3, 1), 1)",
              {{"2 chunks along dim 0", "weighted(x[0].chunk(2, 0), 0)"}})
          .ref("torch.chunk(make((2, 5), 1), 3, 1)[1]",
               [] {
                 return chunk(make({2, 5}, 1), 3, 1)[1];
               },
               {2, 2},
               {-1.0340640969579933, 1.5908582625416283, -0.7094522994598851, 1.9154700600397367}));

  t.push_back(entry("index_select", [](const V& v) { return index_select(v[0], 0, v[1]); },
                    {s("dim 0, repeated index", {arg({3, 4}, 1), indices({2, 0, 2}, {3})}),
                     s("dim 1, negative index", {arg({3, 4}, 2), indices({-1, 1}, {2})},
                       [](const V& v) { return index_select(v[0], 1, v[1]); }),
                     s("non-contiguous", {arg_t({4, 3}, 3), indices({1, 1, 0, 2}, {4})}),
                     s("0-dim index", {arg({3, 4}, 4), indices({1}, {})}),
                     s("empty index", {arg({3, 4}, 5), indices({}, {0})}),
                     s("0-dim input", {arg({}, 6), indices({0}, {1})})},
                    {e("index_select", "float index", "index must be an int64 tensor, got float64",
                       [] { index_select(make({3}, 1), 0, make({2}, 2)); }),
                     e("index_select", "index out of range",
                       "index 3 (at position 0) is out of range for a dim of size 3",
                       [] { index_select(make({3}, 1), 0, indices({3}, {1})); }),
                     e("index_select", "2 indices into a 0-dim tensor",
                       "an index into a 0-dim tensor must have exactly 1 value, got 2",
                       [] {
                         index_select(make({}, 1), 0, indices({0, 0}, {2}));
                       }),
                     e("index_select", "2-D index", "index must be 0-D or 1-D, got shape (1, 2)",
                       [] {
                         index_select(make({3}, 1), 0, indices({0, 1}, {1, 2}));
                       })})
                  .py("index_select_minigrad(x[0], 0, x[1])",
                      {{"dim 1, negative index", "index_select_minigrad(x[0], 1, x[1])"}},
                      "torch.index_select rejects negative indices; minigrad counts them from the "
                      "end; compared with the wrapped indices")
                  .ref("torch.index_select(make((3, 4), 1), 1, torch.tensor([3, 0, 3]))",
                       [] {
                         return index_select(make({3, 4}, 1), 1, indices({3, 0, 3}, {3}));
                       },
                       {3, 3},
                       {1.5908582625416283, -1.883908815957236, 1.5908582625416283,
                        -0.7094522994598851, 0.21578062204124993, -0.7094522994598851,
                        1.3902371385386014, 1.9154700600397367, 1.3902371385386014}));
  t.push_back(
      entry("gather", [](const V& v) { return gather(v[0], 1, v[1]); },
            {s("dim 1, repeated", {arg({2, 3}, 1), indices({0, 0, 2, 1, 2, 2}, {2, 3})}),
             s("dim 0, index smaller than input", {arg({3, 4}, 2), indices({2, 0, 1}, {1, 3})},
               [](const V& v) { return gather(v[0], 0, v[1]); }),
             s("non-contiguous", {arg_t({3, 2}, 3), indices({1, 2, 0, 0}, {2, 2})}),
             s("negative dim", {arg({2, 3}, 4), indices({2, 1}, {2, 1})},
               [](const V& v) { return gather(v[0], -1, v[1]); })},
            {e("gather", "index out of bounds", "index 3 is out of bounds for dim 1 with size 3",
               [] {
                 gather(make({2, 3}, 1), 1, indices({3}, {1, 1}));
               }),
             e("gather", "rank differs",
               "index (shape (1,)) must have the same number of dims as the input (shape (2, 3))",
               [] {
                 gather(make({2, 3}, 1), 1, indices({0}, {1}));
               }),
             e("gather", "float index", "index must be an int64 tensor, got float64",
               [] {
                 gather(make({2, 3}, 1), 1, make({1, 1}, 2));
               })})
          .py("torch.gather(x[0], 1, x[1])",
              {{"dim 0, index smaller than input", "torch.gather(x[0], 0, x[1])"},
               {"negative dim", "torch.gather(x[0], -1, x[1])"}})
          .ref("torch.gather(make((2, 3), 1), 1, torch.tensor([[0, 0, 2], [1, 2, 2]]))",
               [] {
                 return gather(make({2, 3}, 1), 1, indices({0, 0, 2, 1, 2, 2}, {2, 3}));
               },
               {2, 3},
               {-1.883908815957236, -1.883908815957236, -1.0340640969579933, 0.21578062204124993,
                -1.5592970184591284, -1.5592970184591284}));
  t.push_back(entry("scatter_add", [](const V& v) { return scatter_add(v[0], 1, v[1], v[2]); },
                    {s("dim 1, repeated index",
                       {arg({2, 3}, 1), indices({0, 0, 2, 1, 1, 1}, {2, 3}), arg({2, 3}, 2)}),
                     s("dim 0, index smaller than src",
                       {arg({3, 2}, 3), indices({2, 0}, {1, 2}), arg({2, 2}, 4)},
                       [](const V& v) { return scatter_add(v[0], 0, v[1], v[2]); }),
                     s("non-contiguous self and src",
                       {arg_t({3, 2}, 5), indices({1, 1, 0, 2}, {2, 2}), arg_t({2, 2}, 6)}),
                     s("only src requires grad",
                       {make({2, 3}, 7), indices({2, 2, 0}, {1, 3}), arg({1, 3}, 8)})},
                    {e("scatter_add", "index out of bounds",
                       "index 5 is out of bounds for dim 1 with size 3",
                       [] {
                         scatter_add(make({2, 3}, 1), 1, indices({5}, {1, 1}), make({1, 1}, 2));
                       }),
                     e("scatter_add", "src smaller than index",
                       "index has shape (1, 2) which exceeds src's shape (1, 1) at dim 1",
                       [] {
                         scatter_add(make({2, 3}, 1), 1, indices({0, 1}, {1, 2}), make({1, 1}, 2));
                       })})
                  .py("scatter_add(x[0], 1, x[1], x[2])",
                      {{"dim 0, index smaller than src", "scatter_add(x[0], 0, x[1], x[2])"}},
                      "PyTorch 1.13's scatter_add backward fails when src is larger than index; "
                      "src is cut to index's shape first (same values)")
                  .ref("torch.scatter_add(make((2, 3), 1), 1, torch.tensor([[0, 0], [2, 1]]), "
                       "make((2, 2), 2))",
                       [] {
                         return scatter_add(make({2, 3}, 1), 1, indices({0, 0, 2, 1}, {2, 2}),
                                            make({2, 2}, 2));
                       },
                       {2, 3},
                       {-4.0444664392858005, 0.7410135435423859, -1.0340640969579933,
                        1.5908582625416283, -0.7021922908739784, -0.7021922908739784}));
  t.push_back(
      entry("index_add", [](const V& v) { return index_add(v[0], 0, v[1], v[2]); },
            {s("dim 0, repeated index", {arg({3, 2}, 1), indices({2, 0, 2}, {3}), arg({3, 2}, 2)}),
             s("dim 1", {arg({2, 4}, 3), indices({3, 1}, {2}), arg({2, 2}, 4)},
               [](const V& v) { return index_add(v[0], 1, v[1], v[2]); }),
             s("non-contiguous", {arg_t({2, 3}, 5), indices({1, 1}, {2}), arg_t({2, 2}, 6)}),
             s("only source requires grad", {make({3, 2}, 7), indices({0}, {1}), arg({1, 2}, 8)}),
             s("0-dim", {arg({}, 9), indices({0}, {1}), arg({}, 10)})},
            {e("index_add", "source shape wrong",
               "source has shape (3, 2) but self ((3, 2)) with 2 indices along dim 0 needs shape "
               "(2, 2)",
               [] {
                 index_add(make({3, 2}, 1), 0, indices({0, 1}, {2}), make({3, 2}, 2));
               }),
             e("index_add", "2 indices into a 0-dim tensor",
               "an index into a 0-dim tensor must have exactly 1 value, got 2",
               [] {
                 index_add(make({}, 1), 0, indices({0, 0}, {2}), make({}, 2));
               }),
             e("index_add", "index out of range",
               "index 3 (at position 0) is out of range for a dim of size 3",
               [] {
                 index_add(make({3, 2}, 1), 0, indices({3}, {1}), make({1, 2}, 2));
               })})
          .py("torch.index_add(x[0], 0, x[1], x[2])",
              {{"dim 1", "torch.index_add(x[0], 1, x[1], x[2])"}})
          .ref("torch.index_add(make((3, 2), 1), 0, torch.tensor([2, 0, 2]), make((3, 2), 2))",
               [] {
                 return index_add(make({3, 2}, 1), 0, indices({2, 0, 2}, {3}), make({3, 2}, 2));
               },
               {3, 2},
               {-1.026804088372086, -0.1769593693728424, -1.0340640969579933, 1.5908582625416283,
                1.52999007721155, -2.995242844289587}));
  auto tri_samples = [](Tensor (*op)(const Tensor&, std::int64_t)) {
    return std::vector<Sample>{
        s("square", {arg({3, 3}, 1)}),
        s("diagonal 1, wide", {arg({3, 4}, 2)}, [op](const V& v) { return op(v[0], 1); }),
        s("diagonal -1, tall", {arg({4, 3}, 3)}, [op](const V& v) { return op(v[0], -1); }),
        s("batched", {arg({2, 3, 3}, 4)}), s("non-contiguous", {arg_t({3, 3}, 5)})};
  };
  t.push_back(entry("tril", [](const V& v) { return tril(v[0]); },
                    tri_samples([](const Tensor& x, std::int64_t d) { return tril(x, d); }),
                    {e("tril", "1-D tensor", "input must have at least 2 dims, got shape (3,)",
                       [] { tril(make({3}, 1)); })})
                  .py("torch.tril(x[0])", {{"diagonal 1, wide", "torch.tril(x[0], 1)"},
                                           {"diagonal -1, tall", "torch.tril(x[0], -1)"}})
                  .ref("torch.tril(make((3, 4), 1), 1)",
                       [] {
                         return tril(make({3, 4}, 1), 1);
                       },
                       {3, 4},
                       {-1.883908815957236, 0.7410135435423859, 0.0, 0.0, 0.21578062204124993,
                        -1.5592970184591284, 1.0656253410404934, 0.0, 1.9154700600397367,
                        0.5403924195393581, -1.23468522096102, 1.3902371385386014}));
  t.push_back(
      entry("triu", [](const V& v) { return triu(v[0]); },
            tri_samples([](const Tensor& x, std::int64_t d) { return triu(x, d); }),
            {e("triu", "1-D tensor", "input must have at least 2 dims, got shape (3,)",
               [] { triu(make({3}, 1)); })})
          .py("torch.triu(x[0])", {{"diagonal 1, wide", "torch.triu(x[0], 1)"},
                                   {"diagonal -1, tall", "torch.triu(x[0], -1)"}})
          .ref("torch.triu(make((2, 3, 3), 1), -1)",
               [] {
                 return triu(make({2, 3, 3}, 1), -1);
               },
               {2, 3, 3},
               {-1.883908815957236, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
                0.21578062204124993, -1.5592970184591284, 0.0, -0.7094522994598851,
                1.9154700600397367, 0.5403924195393581, -1.23468522096102, 1.3902371385386014,
                -0.38484050196177355, -1.759918142462152, 0.8650042170374697, 0.0,
                1.714848936036713, 0.33977129553633456}));
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
            {e("cumsum", "dim out of range",
               "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 cumsum(make({2, 3}, 1), 2);
               })})
          .py("torch.cumsum(x[0], 1)", {{"dim 0 of 3-D", "torch.cumsum(x[0], 0)"},
                                        {"negative dim", "x[0].cumsum(-1)"},
                                        {"0-dim", "torch.cumsum(x[0], 0)"}})
          .ref("torch.cumsum(make((2, 3), 1), 1)",
               [] {
                 return cumsum(make({2, 3}, 1), 1);
               },
               {2, 3},
               {-1.883908815957236, -1.14289527241485, -2.1769593693728435, 1.5908582625416283,
                1.8066388845828782, 0.24734186612374987}));
  t.push_back(
      entry("flip", [](const V& v) { return flip(v[0], {0}); },
            {s("dim 0", {arg({3, 2}, 1)}),
             s("dims 0 and 1, non-contiguous", {arg_t({3, 2}, 2)},
               [](const V& v) {
                 return flip(v[0], {0, 1});
               }),
             s("negative dim of 3-D", {arg({2, 3, 2}, 3)},
               [](const V& v) { return v[0].flip({-1}); }),
             s("empty", {arg({0, 3}, 4)})},
            {e("flip", "repeated dim", "dim 0 appears multiple times in the list of dims (0, 0)",
               [] {
                 flip(make({2, 3}, 1), {0, 0});
               }),
             e("flip", "dim out of range",
               "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 flip(make({2, 3}, 1), {2});
               })})
          .py("torch.flip(x[0], (0,))",
              {{"dims 0 and 1, non-contiguous", "torch.flip(x[0], (0, 1))"},
               {"negative dim of 3-D", "x[0].flip(-1)"}})
          .ref("torch.flip(make((3, 2), 1), (0,))",
               [] {
                 return flip(make({3, 2}, 1), {0});
               },
               {3, 2},
               {0.21578062204124993, -1.5592970184591284, -1.0340640969579933, 1.5908582625416283,
                -1.883908815957236, 0.7410135435423859}));
  t.push_back(
      entry("roll", [](const V& v) { return roll(v[0], {1}, {1}); },
            {s("shift 1 along dim 1", {arg({2, 3}, 1)}),
             s("two dims, negative shift", {arg({3, 4}, 2)},
               [](const V& v) {
                 return roll(v[0], {-1, 5}, {0, 1});
               }),
             s("flattened", {arg({2, 3}, 3)}, [](const V& v) { return v[0].roll({2}); }),
             s("non-contiguous", {arg_t({4, 2}, 4)})},
            {e("roll", "shifts and dims differ in length",
               "shifts (1, 2) and dims (0,) must have the same length",
               [] {
                 roll(make({2, 3}, 1), {1, 2}, {0});
               }),
             e("roll", "two shifts without dims",
               "without dims, shifts must have one entry (the shift of the flattened tensor), got "
               "(1, 2)",
               [] {
                 roll(make({2, 3}, 1), {1, 2});
               })})
          .py("torch.roll(x[0], 1, 1)",
              {{"two dims, negative shift", "torch.roll(x[0], (-1, 5), (0, 1))"},
               {"flattened", "x[0].roll(2)"}})
          .ref("torch.roll(make((3, 4), 2), (-1, 5), (0, 1))",
               [] {
                 return roll(make({3, 4}, 2), {-1, 5}, {0, 1});
               },
               {3, 4},
               {1.1817165250832566, 1.7069494465843933, 0.33187180608401334, -1.443205834416365,
                -1.1185940369182568, -0.5933611154171217, -1.9684387559175, 0.6564836035821218,
                -0.9179729129152283, -0.3927399914140932, -1.7678176319144716, 0.85710472758515}));
  t.push_back(
      entry("repeat",
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
               "repeats (2,) must have at least as many entries as the tensor has dims (shape (2, "
               "3))",
               [] {
                 repeat(make({2, 3}, 1), {2});
               }),
             e("repeat", "negative repeat", "repeats must be non-negative, got (2, -1)",
               [] {
                 repeat(make({2, 3}, 1), {2, -1});
               })})
          .py("x[0].repeat(2, 3)", {{"new leading dims", "x[0].repeat(2, 1, 2)"},
                                    {"a zero repeat", "x[0].repeat(0, 2)"}})
          .ref("make((3,), 2).repeat(2, 1, 2)",
               [] {
                 return make({3}, 2).repeat({2, 1, 2});
               },
               {2, 1, 6},
               {-0.3927399914140932, -1.7678176319144716, 0.85710472758515, -0.3927399914140932,
                -1.7678176319144716, 0.85710472758515, -0.3927399914140932, -1.7678176319144716,
                0.85710472758515, -0.3927399914140932, -1.7678176319144716, 0.85710472758515}));
  t.push_back(
      entry("repeat_interleave", [](const V& v) { return repeat_interleave(v[0], 2, 1); },
            {s("dim 1", {arg({2, 3}, 1)}),
             s("flattened", {arg({2, 2}, 2)}, [](const V& v) { return v[0].repeat_interleave(3); }),
             s("dim 0, non-contiguous", {arg_t({3, 2}, 3)},
               [](const V& v) { return repeat_interleave(v[0], 2, 0); })},
            {e("repeat_interleave", "negative repeats", "repeats must be non-negative, got -1",
               [] {
                 repeat_interleave(make({2, 3}, 1), -1, 0);
               }),
             e("repeat_interleave", "dim out of range",
               "dim 3 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 repeat_interleave(make({2, 3}, 1), 2, 3);
               })})
          .py("torch.repeat_interleave(x[0], 2, 1)",
              {{"flattened", "x[0].repeat_interleave(3)"},
               {"dim 0, non-contiguous", "torch.repeat_interleave(x[0], 2, 0)"}})
          .ref("torch.repeat_interleave(make((2, 3), 1), 2, 1)",
               [] {
                 return repeat_interleave(make({2, 3}, 1), 2, 1);
               },
               {2, 6},
               {-1.883908815957236, -1.883908815957236, 0.7410135435423859, 0.7410135435423859,
                -1.0340640969579933, -1.0340640969579933, 1.5908582625416283, 1.5908582625416283,
                0.21578062204124993, 0.21578062204124993, -1.5592970184591284,
                -1.5592970184591284}));
  // sort and topk: the values (their gradient is scattered to the indices); no ties in make().
  t.push_back(
      entry("sort", [](const V& v) { return std::get<0>(sort(v[0], -1)); },
            {s("last dim", {arg({3, 4}, 1)}),
             s("descending, dim 0", {arg({4, 3}, 2)},
               [](const V& v) { return std::get<0>(v[0].sort(0, true)); }),
             s("non-contiguous", {arg_t({4, 3}, 3)}), s("0-dim", {arg({}, 4)}),
             s("empty", {arg({2, 0}, 5)})},
            {e("sort", "dim out of range",
               "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 sort(make({2, 3}, 1), 2);
               })})
          .py("torch.sort(x[0], stable=True, dim=-1)[0]",
              {{"descending, dim 0", "x[0].sort(stable=True, dim=0, descending=True)[0]"}})
          .ref("torch.sort(make((3, 4), 1), 1, descending=True)[0]",
               [] {
                 return std::get<0>(sort(make({3, 4}, 1), 1, /*descending=*/true));
               },
               {3, 4},
               {1.5908582625416283, 0.7410135435423859, -1.0340640969579933, -1.883908815957236,
                1.0656253410404934, 0.21578062204124993, -0.7094522994598851, -1.5592970184591284,
                1.9154700600397367, 1.3902371385386014, 0.5403924195393581, -1.23468522096102}));
  t.push_back(
      entry("topk", [](const V& v) { return std::get<0>(topk(v[0], 2, 1)); },
            {s("k 2 of 4", {arg({3, 4}, 1)}),
             s("smallest 3, dim 0", {arg({4, 3}, 2)},
               [](const V& v) { return std::get<0>(v[0].topk(3, 0, false)); }),
             s("non-contiguous", {arg_t({4, 3}, 3)}),
             s("k 0", {arg({2, 3}, 4)}, [](const V& v) { return std::get<0>(topk(v[0], 0, 1)); })},
            {e("topk", "k larger than the dim",
               "k (4) is out of range for dim 1 of size 3 (shape (2, 3))",
               [] {
                 topk(make({2, 3}, 1), 4, 1);
               }),
             e("topk", "negative k", "k (-1) is out of range for dim -1 of size 3 (shape (2, 3))",
               [] {
                 topk(make({2, 3}, 1), -1);
               }),
             e("topk", "dim out of range",
               "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 topk(make({2, 3}, 1), 1, 2);
               })})
          .py("torch.topk(x[0], 2, 1)[0]",
              {{"smallest 3, dim 0", "x[0].topk(3, 0, largest=False)[0]"},
               {"k 0", "torch.topk(x[0], 0, 1)[0]"}})
          .ref("torch.topk(make((4, 3), 2), 3, 0, largest=False)[0]",
               [] {
                 return std::get<0>(topk(make({4, 3}, 2), 3, 0, /*largest=*/false));
               },
               {3, 3},
               {-1.9684387559175, -1.7678176319144716, -1.1185940369182568, -1.443205834416365,
                0.6564836035821218, -0.5933611154171217, -0.9179729129152283, 1.1817165250832566,
                0.33187180608401334}));
  t.push_back(entry("lerp", [](const V& v) { return lerp(v[0], v[1], 0.3); },
                    {s("same shape", {arg({2, 3}, 1), arg({2, 3}, 2)}),
                     s("broadcast end", {arg({2, 3}, 1), arg({3}, 2)}),
                     s("non-contiguous", {arg_t({3, 2}, 3), arg({2, 3}, 4)})},
                    {e("lerp", "float32 end",
                       "start (float64) and end (float32) must have the same floating-point dtype",
                       [] { lerp(make({2}, 1), make({2}, 2).to(kFloat32), 0.5); }),
                     e("lerp", "shapes do not broadcast",
                       "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at "
                       "dim 1 and neither is 1",
                       [] {
                         lerp(make({2, 3}, 1), make({4}, 2), 0.5);
                       })})
                  .py("torch.lerp(x[0], x[1], 0.3)")
                  .ref("torch.lerp(make((2, 3), 1), make((3,), 2), 0.3)",
                       [] {
                         return lerp(make({2, 3}, 1), make({3}, 2), 0.3);
                       },
                       {2, 3},
                       {-1.4365581685942932, -0.011635809094671384, -0.46671344959505034,
                        0.9957787863549119, -0.3792988541454665, -0.8343764946458448}));
  t.push_back(entry("lerp_tensor", [](const V& v) { return lerp(v[0], v[1], v[2]); },
                    {s("same shape", {arg({2, 3}, 1), arg({2, 3}, 2), arg({2, 3}, 3)}),
                     s("broadcast weight", {arg({2, 3}, 1), arg({2, 3}, 2), arg({3}, 3)}),
                     s("non-contiguous weight", {arg({2, 3}, 1), arg({2, 3}, 2), arg_t({3, 2}, 3)}),
                     s("method", {arg({2, 3}, 4), arg({3}, 5), arg({2, 1}, 6)},
                       [](const V& v) { return v[0].lerp(v[1], v[2]); })},
                    {e("lerp", "weight shape does not broadcast",
                       "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at "
                       "dim 1 and neither is 1",
                       [] {
                         lerp(make({2, 3}, 1), make({2, 3}, 2), make({4}, 3));
                       })})
                  .py("torch.lerp(x[0], x[1], x[2])", {{"method", "x[0].lerp(x[1], x[2])"}})
                  .ref("torch.lerp(make((2, 3), 1), make((2, 3), 2), make((3,), 3))",
                       [] {
                         return lerp(make({2, 3}, 1), make({2, 3}, 2), make({3}, 3));
                       },
                       {2, 3},
                       {0.3505015458013603, 1.4350786961285371, -4.157757661846353,
                        -2.168446708215969, -0.19674945485791842, -4.682990583347485}));
  t.push_back(
      entry(
          "addmm", [](const V& v) { return addmm(v[0], v[1], v[2]); },
          {s("(2, 4) + (2, 3) @ (3, 4)", {arg({2, 4}, 1), arg({2, 3}, 2), arg({3, 4}, 3)}),
           s("broadcast input, beta 0.5, alpha 2", {arg({4}, 1), arg({2, 3}, 2), arg({3, 4}, 3)},
             [](const V& v) { return addmm(v[0], v[1], v[2], 0.5, 2); }),
           s("transposed mat2", {arg({2, 4}, 4), arg({2, 3}, 5), arg_t({4, 3}, 6)}),
           s("method, beta 0", {arg({2, 4}, 7), arg({2, 3}, 8), arg({3, 4}, 9)},
             [](const V& v) { return v[0].addmm(v[1], v[2], 0, 1.5); }),
           s("input (2, 1), transposed mat1",
             {arg({2, 1}, 10), arg_t({3, 2}, 11), arg({3, 4}, 12)}),
           s("input (1, 4), beta 2, alpha -1", {arg({1, 4}, 13), arg({2, 3}, 14), arg({3, 4}, 15)},
             [](const V& v) { return addmm(v[0], v[1], v[2], 2, -1); }),
           s("empty inner dim", {arg({4}, 16), arg({2, 0}, 17), arg({0, 4}, 18)}),
           s("empty rows", {arg({4}, 19), arg({0, 3}, 20), arg({3, 4}, 21)})},
          {e("addmm", "inner sizes differ",
             "mat1 has shape (2, 3) and mat2 has shape (2, 4): mat1.shape[1] (3) must equal "
             "mat2.shape[0] (2)",
             [] {
               addmm(make({2, 4}, 1), make({2, 3}, 2), make({2, 4}, 3));
             }),
           e("addmm", "1-D mat1", "mat1 and mat2 must be 2-D, got shapes (3,) and (3, 4)",
             [] {
               addmm(make({4}, 1), make({3}, 2), make({3, 4}, 3));
             }),
           e("addmm", "input does not broadcast",
             "shapes (3,) and (2, 4) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
             "neither is 1",
             [] {
               addmm(make({3}, 1), make({2, 3}, 2), make({3, 4}, 3));
             })})
          .py("torch.addmm(x[0], x[1], x[2])",
              {{"broadcast input, beta 0.5, alpha 2",
                "torch.addmm(x[0], x[1], x[2], beta=0.5, alpha=2)"},
               {"method, beta 0", "x[0].addmm(x[1], x[2], beta=0, alpha=1.5)"},
               {"input (1, 4), beta 2, alpha -1",
                "torch.addmm(x[0], x[1], x[2], beta=2, alpha=-1)"}})
          .ref("torch.addmm(make((4,), 1), make((2, 3), 2), make((3, 4), 3), beta=0.5, alpha=2)",
               [] {
                 return addmm(make({4}, 1), make({2, 3}, 2), make({3, 4}, 3), 0.5, 2);
               },
               {2, 4},
               {2.940935301904254, -6.675938497834073, -3.9787794533197816, 6.047551586094543,
                -5.569120139361053, 6.785310517755741, 2.8152647167324183, -5.009149496208138}));
  t.push_back(entry("view_as", [](const V& v) { return view_as(v[0], v[1]); },
                    {s("(2, 3) as (3, 2)", {arg({2, 3}, 1), make({3, 2}, 2)}),
                     s("method, as 1-D", {arg({2, 2}, 3), make({4}, 4)},
                       [](const V& v) { return v[0].view_as(v[1]); })},
                    {e("view", "other has another numel",
                       "shape (4,) is invalid for input of size 6 (shape (2, 3))",
                       [] {
                         view_as(make({2, 3}, 1), make({4}, 2));
                       }),
                     e("view_as", "undefined other",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { view_as(make({2}, 1), undefined()); })})
                  .py("x[0].view_as(x[1])", {{"method, as 1-D", "x[0].view_as(x[1])"}})
                  .ref("make((2, 3), 1).view_as(make((3, 2), 2))",
                       [] {
                         return make({2, 3}, 1).view_as(make({3, 2}, 2));
                       },
                       {3, 2},
                       {-1.883908815957236, 0.7410135435423859, -1.0340640969579933,
                        1.5908582625416283, 0.21578062204124993, -1.5592970184591284}));
  t.push_back(
      entry("var_mean",
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
               "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 var_mean(make({2, 3}, 1), {2});
               }),
             e("var_mean", "int64 input", "expected a floating-point tensor, got int64",
               [] {
                 var_mean(indices({1, 2}, {2}));
               })})
          .py("torch.stack(torch.var_mean(x[0]))",
              {{"dim 1, biased, keepdim",
                "torch.stack(torch.var_mean(x[0], (1,), unbiased=False, keepdim=True))"},
               {"non-contiguous, dim 0", "torch.stack(torch.var_mean(x[0], (0,)))"}})
          .ref("torch.stack(torch.var_mean(make((2, 4), 2), (1,), unbiased=False, keepdim=True))",
               [] {
                 auto [v, m] = var_mean(make({2, 4}, 2), {1}, 0, true);
                 return stack({v, m});
               },
               {2, 2, 1},
               {0.9057608769037098, 1.428346281454127, -0.5553564521646608, 0.44433298583382463}));
  t.push_back(
      entry("std_mean",
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
            {e("std_mean", "dim out of range",
               "dim -3 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])",
               [] {
                 std_mean(make({2, 3}, 1), {-3});
               })})
          .py("torch.stack(torch.std_mean(x[0]))",
              {{"dim 1", "torch.stack(torch.std_mean(x[0], (1,), unbiased=True))"},
               {"non-contiguous, biased, keepdim",
                "torch.stack(torch.std_mean(x[0], (0,), unbiased=False, keepdim=True))"}})
          .ref("torch.stack(torch.std_mean(make((2, 4), 2), (1,), unbiased=True, keepdim=False))",
               [] {
                 auto [s, m] = std_mean(make({2, 4}, 2), {1}, 1, false);
                 return stack({s, m});
               },
               {2, 2},
               {1.098945480542573, 1.3800223580092834, -0.5553564521646608, 0.44433298583382463}));
  t.push_back(
      entry("take_along_dim", [](const V& v) { return take_along_dim(v[0], v[1], 1); },
            {s("dim 1", {arg({2, 3}, 1), indices({0, 2, 1, 1}, {2, 2})}),
             s("broadcast index rows", {arg({3, 4}, 2), indices({3, 0}, {1, 2})}),
             s("flattened", {arg({2, 3}, 3), indices({5, 0, 3}, {3})},
               [](const V& v) { return v[0].take_along_dim(v[1]); }),
             s("non-contiguous", {arg_t({3, 2}, 4), indices({1, 0, 2, 2}, {2, 2})})},
            {e("take_along_dim", "rank differs",
               "input (shape (2, 3)) and indices (shape (1,)) must have the same number of dims",
               [] {
                 take_along_dim(make({2, 3}, 1), indices({0}, {1}), 1);
               }),
             e("take_along_dim", "index out of range",
               "index 3 is out of bounds for dim 1 with size 3",
               [] {
                 take_along_dim(make({2, 3}, 1), indices({3}, {1, 1}), 1);
               }),
             e("take_along_dim", "float indices", "index must be an int64 tensor, got float64",
               [] {
                 take_along_dim(make({2, 3}, 1), make({2, 1}, 2), 1);
               })})
          .py("torch.take_along_dim(x[0], x[1], 1)", {{"flattened", "x[0].take_along_dim(x[1])"}})
          .ref("torch.take_along_dim(make((3, 4), 2), I([3, 0], (1, 2)), 1)",
               [] {
                 return take_along_dim(make({3, 4}, 2), indices({3, 0}, {1, 2}), 1);
               },
               {3, 2},
               {-0.9179729129152283, -0.3927399914140932, 1.1817165250832566, 1.7069494465843933,
                -1.1185940369182568, -0.5933611154171217}));
  // scatter: no index repeats within a row (the value written would be unspecified).
  t.push_back(
      entry("scatter", [](const V& v) { return scatter(v[0], 1, v[1], v[2]); },
            {s("dim 1", {arg({2, 3}, 1), indices({2, 0, 1, 0}, {2, 2}), arg({2, 2}, 2)}),
             s("dim 0, src larger than index",
               {arg({3, 2}, 3), indices({2, 0}, {1, 2}), arg({2, 2}, 4)},
               [](const V& v) { return v[0].scatter(0, v[1], v[2]); }),
             s("non-contiguous self and src",
               {arg_t({3, 2}, 5), indices({1, 2, 0, 1}, {2, 2}), arg_t({2, 2}, 6)}),
             s("only src requires grad",
               {make({2, 3}, 7), indices({2, 1, 0}, {1, 3}), arg({1, 3}, 8)})},
            {e("scatter", "float32 src",
               "self and src must have the same dtype, got float64 and float32",
               [] {
                 scatter(make({2, 3}, 1), 1, indices({0}, {1, 1}), make({1, 1}, 2).to(kFloat32));
               }),
             e("scatter", "index out of bounds", "index 3 is out of bounds for dim 1 with size 3",
               [] {
                 scatter(make({2, 3}, 1), 1, indices({3}, {1, 1}), make({1, 1}, 2));
               })})
          .py("torch.scatter(x[0], 1, x[1], x[2])",
              {{"dim 0, src larger than index", "scatter(x[0], 0, x[1], x[2])"}},
              "PyTorch 1.13's scatter backward fails when src is larger than index; src is cut to "
              "index's shape first (same values)")
          .ref("torch.scatter(make((3, 2), 3), 0, I([2, 0], (1, 2)), make((2, 2), 4))",
               [] {
                 return scatter(make({3, 2}, 3), 0, indices({2, 0}, {1, 2}), make({2, 2}, 4));
               },
               {3, 2},
               {1.4984288331290485, 1.6145200171718135, -1.6517264478717082, 0.9731959116279132,
                -1.0104023423278083, 1.8230406306271583}));
  // scatter_reduce: every reduce; make() has no zeros (prod) and no ties (amax, amin).
  t.push_back(
      entry(
          "scatter_reduce", [](const V& v) { return scatter_reduce(v[0], 1, v[1], v[2], "sum"); },
          {s("sum, repeated index",
             {arg({2, 3}, 1), indices({0, 0, 2, 1}, {2, 2}), arg({2, 2}, 2)}),
           s("prod, repeated index",
             {arg({2, 3}, 1), indices({0, 0, 2, 1}, {2, 2}), arg({2, 2}, 2)},
             [](const V& v) { return v[0].scatter_reduce(1, v[1], v[2], "prod"); }),
           s("mean without self, dim 0",
             {arg({3, 2}, 3), indices({2, 0, 2, 2}, {2, 2}), arg({2, 2}, 4)},
             [](const V& v) { return scatter_reduce(v[0], 0, v[1], v[2], "mean", false); }),
           s("amax, repeated index",
             {arg({2, 3}, 1), indices({0, 0, 2, 1}, {2, 2}), arg({2, 2}, 2)},
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
             "reduce must be \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", got \"max\"",
             [] {
               scatter_reduce(make({2, 3}, 1), 1, indices({0}, {1, 1}), make({1, 1}, 2), "max");
             }),
           e("scatter_reduce", "index out of bounds",
             "index 3 is out of bounds for dim 1 with size 3",
             [] {
               scatter_reduce(make({2, 3}, 1), 1, indices({3}, {1, 1}), make({1, 1}, 2), "sum");
             }),
           e("scatter_reduce", "src smaller than index",
             "index has shape (1, 2) which exceeds src's shape (1, 1) at dim 1",
             [] {
               scatter_reduce(make({2, 3}, 1), 1, indices({0, 1}, {1, 2}), make({1, 1}, 2), "amax");
             }),
           e("scatter_reduce", "float32 src",
             "self and src must have the same dtype, got float64 and float32",
             [] {
               scatter_reduce(make({2, 3}, 1), 1, indices({0}, {1, 1}),
                              make({1, 1}, 2).to(kFloat32), "mean");
             })})
          .py("scatter_reduce(x[0], 1, x[1], x[2], \"sum\")",
              {{"prod, repeated index", "scatter_reduce(x[0], 1, x[1], x[2], \"prod\")"},
               {"mean without self, dim 0",
                "scatter_reduce(x[0], 0, x[1], x[2], \"mean\", include_self=False)"},
               {"amax, repeated index", "scatter_reduce(x[0], 1, x[1], x[2], \"amax\")"},
               {"amin without self",
                "scatter_reduce(x[0], 1, x[1], x[2], \"amin\", include_self=False)"},
               {"prod without self, non-contiguous, src larger than index",
                "scatter_reduce(x[0], 1, x[1], x[2], \"prod\", include_self=False)"},
               {"mean, only src requires grad", "scatter_reduce(x[0], 1, x[1], x[2], \"mean\")"}},
              "PyTorch 1.13's scatter_reduce backward needs src.shape == index.shape; src is cut "
              "to index's shape first (same values)")
          .ref("torch.scatter_reduce(make((2, 3), 1), 1, I([0, 0, 2, 1], (2, 2)), make((2, 2), 2), "
               "\"sum\")",
               [] {
                 return scatter_reduce(make({2, 3}, 1), 1, indices({0, 0, 2, 1}, {2, 2}),
                                       make({2, 2}, 2), "sum");
               },
               {2, 3},
               {-4.0444664392858005, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
                -0.7021922908739784, -0.7021922908739784})
          .ref("torch.scatter_reduce(make((2, 3), 1), 1, I([0, 0, 2, 1], (2, 2)), make((2, 2), 2), "
               "\"prod\")",
               [] {
                 return scatter_reduce(make({2, 3}, 1), 1, indices({0, 0, 2, 1}, {2, 2}),
                                       make({2, 2}, 2), "prod");
               },
               {2, 3},
               {-1.3079841036827229, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
                -0.19808076616586612, -1.3364808462307478})
          .ref("torch.scatter_reduce(make((3, 2), 3), 0, I([2, 0, 2, 2], (2, 2)), make((2, 2), 4), "
               "\"mean\", include_self=False)",
               [] {
                 return scatter_reduce(make({3, 2}, 3), 0, indices({2, 0, 2, 2}, {2, 2}),
                                       make({2, 2}, 4), "mean", false);
               },
               {3, 2},
               {1.4984288331290485, 1.6145200171718135, -1.6517264478717082, 0.9731959116279132,
                -0.38547998282818663, -1.5356352638289432})
          .ref("torch.scatter_reduce(make((2, 3), 1), 1, I([0, 0, 2, 1], (2, 2)), make((2, 2), 2), "
               "\"amax\")",
               [] {
                 return scatter_reduce(make({2, 3}, 1), 1, indices({0, 0, 2, 1}, {2, 2}),
                                       make({2, 2}, 2), "amax");
               },
               {2, 3},
               {-0.3927399914140932, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
                0.21578062204124993, 0.85710472758515})
          .ref("torch.scatter_reduce(make((2, 3), 1), 1, I([0, 0, 2, 1], (2, 2)), make((2, 2), 2), "
               "\"amin\", include_self=False)",
               [] {
                 return scatter_reduce(make({2, 3}, 1), 1, indices({0, 0, 2, 1}, {2, 2}),
                                       make({2, 2}, 2), "amin", false);
               },
               {2, 3},
               {-1.7678176319144716, 0.7410135435423859, -1.0340640969579933, 1.5908582625416283,
                -0.9179729129152283, 0.85710472758515}));
  t.push_back(
      entry("scatter_value", [](const V& v) { return scatter(v[0], 1, v[1], -2.5); },
            {s("dim 1", {arg({2, 3}, 1), indices({2, 0}, {2, 1})}),
             s("dim 0, non-contiguous", {arg_t({3, 2}, 2), indices({1, 0, 1}, {1, 3})},
               [](const V& v) { return v[0].scatter(0, v[1], -2.5); })},
            {e("scatter", "index rank differs",
               "index (shape (1,)) must have the same number of dims as the input (shape (2, 3))",
               [] {
                 scatter(make({2, 3}, 1), 1, indices({0}, {1}), 1.0);
               })})
          .py("torch.scatter(x[0], 1, x[1], -2.5)",
              {{"dim 0, non-contiguous", "x[0].scatter(0, x[1], -2.5)"}})
          .ref("torch.scatter(make((2, 3), 1), 1, I([2, 0], (2, 1)), -2.5)",
               [] {
                 return scatter(make({2, 3}, 1), 1, indices({2, 0}, {2, 1}), -2.5);
               },
               {2, 3},
               {-1.883908815957236, 0.7410135435423859, -2.5, -2.5, 0.21578062204124993,
                -1.5592970184591284}));
  t.push_back(
      entry("masked_scatter", [](const V& v) { return masked_scatter(v[0], v[1], v[2]); },
            {s("2-D mask, larger source",
               {arg({2, 3}, 1), mask({1, 0, 1, 0, 1, 1}, {2, 3}), arg({5}, 2)}),
             s("broadcast mask row", {arg({2, 3}, 3), mask({0, 1, 1}, {3}), arg({2, 3}, 4)}),
             s("non-contiguous self, method",
               {arg_t({3, 2}, 5), mask({1, 1, 0, 0, 1, 0}, {2, 3}), arg({3}, 6)},
               [](const V& v) { return v[0].masked_scatter(v[1], v[2]); })},
            {e("masked_scatter", "source too small",
               "source has 5 elements (shape (5,)) but the mask has 6 true entries",
               [] {
                 masked_scatter(make({2, 3}, 1), mask({1, 1, 1}, {3}), make({5}, 2));
               }),
             e("masked_scatter", "float mask", "mask must be a bool tensor, got float64",
               [] {
                 masked_scatter(make({2, 3}, 1), make({2, 3}, 2), make({6}, 3));
               })})
          .py("torch.masked_scatter(x[0], x[1], x[2])",
              {{"non-contiguous self, method", "x[0].masked_scatter(x[1], x[2])"}})
          .ref("torch.masked_scatter(make((2, 3), 3), M([0, 1, 1], (3,)), make((2, 3), 4))",
               [] {
                 return masked_scatter(make({2, 3}, 3), mask({0, 1, 1}, {3}), make({2, 3}, 4));
               },
               {2, 3},
               {1.4984288331290485, -1.0104023423278083, 1.6145200171718135, 0.9731959116279132,
                0.2394423766714351, -1.5356352638289432}));
  auto es = [](const char* eq) { return [eq](const V& v) { return einsum(eq, v); }; };
  t.push_back(
      entry(
          "einsum", es("ij,jk->ik"),
          {s("matmul", {arg({2, 3}, 1), arg({3, 4}, 2)}),
           s("batched matmul", {arg({2, 2, 3}, 3), arg({2, 3, 2}, 4)}, es("bij,bjk->bik")),
           s("outer", {arg({3}, 5), arg({2}, 6)}, es("i,j->ij")),
           s("transpose", {arg({2, 3}, 7)}, es("ij->ji")),
           s("row sums", {arg({2, 3}, 8)}, es("ij->i")),
           s("dot", {arg({4}, 9), arg({4}, 10)}, es("i,i->")),
           s("implicit output, non-contiguous", {arg_t({3, 2}, 11), arg({3, 2}, 12)}, es("ij,jk")),
           s("a subscript summed in one operand", {arg({2, 3, 2}, 13), arg({3, 2}, 14)},
             es("ijk,jl->il")),
           s("ellipsis, broadcast batch", {arg({2, 1, 2, 3}, 15), arg({3, 3, 2}, 16)},
             es("...ij,...jk->...ik")),
           s("ellipsis, implicit output", {arg({3, 2}, 20), arg({3, 1, 2}, 21)}, es("i...,i...")),
           s("ellipsis summed", {arg({2, 2, 3}, 25)}, es("...ij->ij")),
           s("broadcast size-1 subscript", {arg({2, 1}, 26), arg({3, 4}, 27)}, es("ij,jk->ik")),
           s("diagonal", {arg({3, 3}, 28)}, es("ii->i")), s("trace", {arg({3, 3}, 19)}, es("ii")),
           s("batched diagonal", {arg({2, 3, 3}, 17)}, es("bii->bi")),
           s("diagonal summed", {arg({2, 2, 3}, 18)}, es("iij->j")),
           s("diagonal of a transposed operand", {arg_t({3, 3}, 29), arg({3}, 30)}, es("ii,i->i")),
           s("three operands", {arg({2, 3}, 22), arg({3, 2}, 23), arg({2, 2}, 24)},
             es("ij,jk,kl->il"))},
          {e("einsum", "a stray character", "equation \"i-j\": invalid subscript '-'",
             [] { einsum("i-j", {make({3}, 1)}); }),
           e("einsum", "a diagonal of unequal sizes",
             "equation \"ii->i\": subscript 'i' repeats in operand 0 with sizes 2 and 3 (shape "
             "(2, 3))",
             [] {
               einsum("ii->i", {make({2, 3}, 1)});
             }),
           e("einsum", "a stray '.'",
             "equation \"i.j\": a '.' in operand 0 that is not part of an ellipsis (...)",
             [] {
               einsum("i.j", {make({2, 3}, 1)});
             }),
           e("einsum", "two ellipses",
             "equation \"i......\": more than one ellipsis (...) in operand 0",
             [] {
               einsum("i......", {make({2, 3}, 1)});
             }),
           e("einsum", "more subscripts than dims",
             "equation \"...ij->...ji\": operand 0 has 1 dims (shape (2,)) but subscripts "
             "\"...ij\" name 2",
             [] { einsum("...ij->...ji", {make({2}, 1)}); }),
           e("einsum", "ellipsis dims that do not broadcast",
             "equation \"...i,...i\": ellipsis dim 0 has size 2 and size 4 (operand 1 has shape "
             "(4, 3))",
             [] {
               einsum("...i,...i", {make({2, 3}, 1), make({4, 3}, 2)});
             }),
           e("einsum", "a repeated output subscript",
             "equation \"i,i->ii\": output subscript 'i' repeats",
             [] {
               einsum("i,i->ii", {make({2}, 1), make({2}, 2)});
             }),
           e("einsum", "operand count",
             "equation \"ij,jk->ik\" has 2 operands but 1 tensors were given",
             [] {
               einsum("ij,jk->ik", {make({2, 3}, 1)});
             }),
           e("einsum", "sizes of j differ",
             "equation \"ij,jk->ik\": subscript 'j' has size 3 and size 4 (operand 1 has shape (4, "
             "2))",
             [] {
               einsum("ij,jk->ik", {make({2, 3}, 1), make({4, 2}, 2)});
             }),
           e("einsum", "output subscript missing",
             "equation \"ij->k\": output subscript 'k' does not appear in any operand",
             [] {
               einsum("ij->k", {make({2, 3}, 1)});
             })})
          .py("torch.einsum('ij,jk->ik', *x)",
              {{"batched matmul", "torch.einsum('bij,bjk->bik', *x)"},
               {"outer", "torch.einsum('i,j->ij', *x)"},
               {"transpose", "torch.einsum('ij->ji', *x)"},
               {"row sums", "torch.einsum('ij->i', *x)"},
               {"dot", "torch.einsum('i,i->', *x)"},
               {"implicit output, non-contiguous", "torch.einsum('ij,jk', *x)"},
               {"a subscript summed in one operand", "torch.einsum('ijk,jl->il', *x)"},
               {"ellipsis, broadcast batch", "torch.einsum('...ij,...jk->...ik', *x)"},
               {"ellipsis, implicit output", "torch.einsum('i...,i...', *x)"},
               {"ellipsis summed", "torch.einsum('...ij->ij', *x)"},
               {"broadcast size-1 subscript", "torch.einsum('ij,jk->ik', *x)"},
               {"diagonal", "torch.einsum('ii->i', *x)"},
               {"trace", "torch.einsum('ii', *x)"},
               {"batched diagonal", "torch.einsum('bii->bi', *x)"},
               {"diagonal summed", "torch.einsum('iij->j', *x)"},
               {"diagonal of a transposed operand", "torch.einsum('ii,i->i', *x)"},
               {"three operands", "torch.einsum('ij,jk,kl->il', *x)"}})
          .ref("torch.einsum('ijk,jl->il', make((2, 3, 2), 13), make((3, 2), 14))",
               [] {
                 return einsum("ijk,jl->il", {make({2, 3, 2}, 13), make({3, 2}, 14)});
               },
               {2, 2},
               {-2.195946716145046, 1.7438555791678712, 1.5232566893370403, -2.58063641382182})
          .ref("torch.einsum('...ij,...jk->...ik', make((2, 1, 2, 3), 15), make((3, 3, 2), "
               "16))[0, 0]",
               [] {
                 return einsum("...ij,...jk->...ik", {make({2, 1, 2, 3}, 15), make({3, 3, 2}, 16)})
                     .select(0, 0)
                     .select(0, 0);
               },
               {2, 2},
               {-3.1808923031154404, 4.12038440923744, 0.9622402048258625, 1.439075977005867})
          .ref("torch.einsum('i...,i...', make((3, 2), 20), make((3, 1, 2), 21))",
               [] {
                 return einsum("i...,i...", {make({3, 2}, 20), make({3, 1, 2}, 21)});
               },
               {1, 2}, {-2.811050714640311, -2.1315602692845173})
          .ref("torch.einsum('bii->bi', make((2, 3, 3), 17))",
               [] {
                 return einsum("bii->bi", {make({2, 3, 3}, 17)});
               },
               {2, 3},
               {0.7747923767330405, -1.525518185268473, 0.5741712527300136, -1.2009063877703645,
                0.898783050228122, -1.4015275117733976})
          .ref("torch.einsum('iij->j', make((2, 2, 3), 18))",
               [] {
                 return einsum("iij->j", {make({2, 2, 3}, 18)});
               },
               {3}, {-1.0437763619510405, -0.19393164295179743, 0.6559130760474463})
          .ref("torch.einsum('ii', make((3, 3), 19))",
               [] {
                 return einsum("ii", {make({3, 3}, 19)});
               },
               {}, {1.170458391453451})
          .ref("torch.einsum('ij,jk,kl->il', make((2, 3), 22), make((3, 2), 23), make((2, 2), 24))",
               [] {
                 return einsum("ij,jk,kl->il",
                               {make({2, 3}, 22), make({3, 2}, 23), make({2, 2}, 24)});
               },
               {2, 2},
               {-3.077248535714976, 1.113292220309538, -4.0748576816473365, 0.5861991760074741}));
}

// ---------------------------------------------------------------- nn::functional
// F::relu, F::gelu, F::softmax and F::log_softmax are the core ops above under another name.

void add_nn(std::vector<OpInfo>& t) {
  namespace F = nn::functional;
  auto weights = [](const Shape& shape, std::int64_t seed) { return abs(make(shape, seed)); };

  t.push_back(
      entry("linear",
            [](const V& v) {
              return v.size() == 3 ? F::linear(v[0], v[1], v[2]) : F::linear(v[0], v[1]);
            },
            {s("bias", {arg({2, 3}, 1), arg({4, 3}, 2), arg({4}, 3)}),
             s("no bias", {arg({2, 3}, 1), arg({4, 3}, 2)}),
             s("3-D input", {arg({2, 2, 3}, 4), arg({4, 3}, 5), arg({4}, 6)}),
             s("1-D input", {arg({3}, 7), arg({2, 3}, 8)}),
             s("non-contiguous weight and input", {arg_t({3, 2}, 1), arg_t({3, 4}, 9)}),
             s("only weight requires grad", {make({2, 3}, 1), arg({4, 3}, 2)}),
             s("empty batch", {arg({0, 3}, 1), arg({4, 3}, 2), arg({4}, 3)}),
             s("1-D input, bias", {arg({3}, 10), arg({4, 3}, 11), arg({4}, 12)}),
             s("4-D input", {arg({2, 1, 2, 3}, 13), arg({4, 3}, 14), arg({4}, 15)}),
             s("non-contiguous 3-D input", {arg_t({2, 2, 3}, 16), arg({4, 3}, 17), arg({4}, 18)}),
             s("empty 3-D batch", {arg({0, 2, 3}, 19), arg({4, 3}, 20), arg({4}, 21)})},
            {e("linear", "1-D weight", "weight must be 2-D [out, in], got shape (3,)",
               [] {
                 F::linear(make({2, 3}, 1), make({3}, 2));
               }),
             e("linear", "in_features mismatch",
               "input of shape (2, 3) and weight of shape (4, 5): input.shape[-1] (3) must equal "
               "weight.shape[1] (5)",
               [] {
                 F::linear(make({2, 3}, 1), make({4, 5}, 2));
               }),
             e("linear", "bias of the wrong size",
               "bias of shape (3,) does not match out_features = 4",
               [] { F::linear(make({2, 3}, 1), make({4, 3}, 2), make({3}, 3)); })})
          .py("F.linear(*x)")
          .ref("---- nn::functional (sdpa is PyTorch 2's; with 1.13 the reference is softmax(q @ "
               "k.transpose(-2, -1) * scale + mask) @ v, the bool mask applied with "
               "masked_fill(~mask, -inf) and is_causal as a tril mask) F.linear(make((2, 2, 3), "
               "4), make((4, 3), 5), make((4,), 6))",
               [] {
                 return F::linear(make({2, 2, 3}, 4), make({4, 3}, 5), make({4}, 6));
               },
               {2, 2, 4},
               {-3.5474948174340115, -1.3656379682534925, -3.17962018214185, 5.3645397850573495,
                -5.141599165333481, -1.9220402820666558, -2.488227293268253, 5.362796190613166,
                -2.520393103885788, -0.57415704113765, -3.80357370425748, 0.8832884417011647,
                -3.064528507985412, -0.08059041115096477, -2.062211871584031, 0.17151379105682585})
          .ref("F.linear(make((3,), 7), make((2, 3), 8))",
               [] {
                 return F::linear(make({3}, 7), make({2, 3}, 8));
               },
               {2}, {-1.6653224384371763, -0.9891430989563001}));

  t.push_back(
      entry("mse_loss", [](const V& v) { return F::mse_loss(v[0], v[1]); },
            {s("mean", {arg({2, 3}, 1), arg({2, 3}, 2)}),
             s("sum", {arg({2, 3}, 1), arg({2, 3}, 2)},
               [](const V& v) { return F::mse_loss(v[0], v[1], "sum"); }),
             s("none", {arg({2, 3}, 1), arg({2, 3}, 2)},
               [](const V& v) { return F::mse_loss(v[0], v[1], "none"); }),
             s("0-dim", {arg({}, 3), arg({}, 4)}),
             s("non-contiguous", {arg_t({3, 2}, 5), arg({2, 3}, 6)}),
             s("target without grad", {arg({4}, 7), make({4}, 8)})},
            {e("mse_loss", "shapes differ",
               "input has shape (2, 3) but target has shape (3,); they must match",
               [] {
                 F::mse_loss(make({2, 3}, 1), make({3}, 2));
               }),
             e("mse_loss", "bad reduction",
               "reduction must be \"mean\", \"sum\" or \"none\", got \"avg\"",
               [] { F::mse_loss(make({2}, 1), make({2}, 2), "avg"); })})
          .py("F.mse_loss(x[0], x[1])", {{"sum", "F.mse_loss(x[0], x[1], reduction='sum')"},
                                         {"none", "F.mse_loss(x[0], x[1], reduction='none')"}})
          .ref("F.mse_loss(make((2, 3), 1), make((2, 3), 2), reduction='sum')",
               [] {
                 return F::mse_loss(make({2, 3}, 1), make({2, 3}, 2), "sum");
               },
               {}, {24.188675706315017})
          .ref("F.mse_loss(make((2, 3), 1), make((2, 3), 2))",
               [] {
                 return F::mse_loss(make({2, 3}, 1), make({2, 3}, 2));
               },
               {}, {4.031445951052503}));

  t.push_back(
      entry("scaled_dot_product_attention",
            [](const V& v) { return F::scaled_dot_product_attention(v[0], v[1], v[2]); },
            {s("3-D, S != L", {arg({2, 3, 4}, 1), arg({2, 5, 4}, 2), arg({2, 5, 2}, 3)}),
             s("causal", {arg({1, 4, 3}, 4), arg({1, 4, 3}, 5), arg({1, 4, 2}, 6)},
               [](const V& v) {
                 return F::scaled_dot_product_attention(v[0], v[1], v[2], {}, 0.0, true);
               }),
             s("bool mask, broadcast over the batch",
               {arg({2, 3, 4}, 7), arg({2, 3, 4}, 8), arg({2, 3, 2}, 9)},
               [](const V& v) {
                 Tensor m = mask({1, 0, 1, 1, 1, 0, 0, 1, 1}, {3, 3});
                 return F::scaled_dot_product_attention(v[0], v[1], v[2], m);
               }),
             s("float mask, scale 0.5", {arg({3, 2}, 10), arg({4, 2}, 11), arg({4, 3}, 12)},
               [](const V& v) {
                 return F::scaled_dot_product_attention(v[0], v[1], v[2], make({3, 4}, 13), 0.0,
                                                        false, 0.5);
               }),
             // Note [SDPA dropout]: PyTorch's mask for the seed; each call reseeds, so that
             // gradcheck's repeated evaluations see the same mask (as the dropout entry).
             s("dropout_p 0.3", {arg({2, 3, 4}, 17), arg({2, 5, 4}, 18), arg({2, 5, 2}, 19)},
               [](const V& v) {
                 manual_seed(0);
                 return F::scaled_dot_product_attention(v[0], v[1], v[2], {}, 0.3);
               }),
             s("4-D heads, non-contiguous q",
               {make({1, 3, 2, 4}, 14).transpose(1, 2).requires_grad_(), arg({1, 2, 3, 4}, 15),
                arg({1, 2, 3, 4}, 16)})},
            {e("scaled_dot_product_attention", "q and k feature sizes differ",
               "q has shape (2, 3) and k has shape (2, 4): their last dims (embedding sizes) must "
               "match",
               [] {
                 F::scaled_dot_product_attention(make({2, 3}, 1), make({2, 4}, 2), make({2, 4}, 3));
               }),
             e("scaled_dot_product_attention", "attn_mask and is_causal together",
               "pass either attn_mask or is_causal, not both",
               [] {
                 F::scaled_dot_product_attention(make({2, 3}, 1), make({2, 3}, 2), make({2, 3}, 3),
                                                 mask({1, 1, 1, 1}, {2, 2}), 0.0, true);
               }),
             e("scaled_dot_product_attention", "float64 mask with float32 q, k, v",
               "attn_mask must be bool or have q's dtype (float32), got float64",
               [] {
                 F::scaled_dot_product_attention(zeros({2, 3}), zeros({2, 3}), zeros({2, 3}),
                                                 make({2, 2}, 1));
               }),
             e("scaled_dot_product_attention", "k and v lengths differ",
               "k has shape (4, 3) and v has shape (3, 3): they must have the same number of keys "
               "(dim -2)",
               [] {
                 F::scaled_dot_product_attention(make({2, 3}, 1), make({4, 3}, 2), make({3, 3}, 3));
               })})
          .py("sdpa(x[0], x[1], x[2])",
              {{"causal", "sdpa(x[0], x[1], x[2], is_causal=True)"},
               {"bool mask, broadcast over the batch",
                "sdpa(x[0], x[1], x[2], attn_mask=torch.tensor([1, 0, 1, 1, 1, 0, 0, 1, 1], "
                "dtype=torch.bool).reshape(3, 3))"},
               {"float mask, scale 0.5",
                "sdpa(x[0], x[1], x[2], attn_mask=make((3, 4), 13), scale=0.5)"},
               {"dropout_p 0.3", "sdpa_dropout(x[0], x[1], x[2], 0.3)"}},
              "torch 1.13 has no F.scaled_dot_product_attention; compared with PyTorch 2.x's "
              "documented reference (softmax(q k^T * scale + mask) v) in torch ops, dropout_p "
              "as its math path: torch.dropout(weights, p, True) after manual_seed(0), torch "
              "1.13's own mask")
          .ref("sdpa(make((1, 4, 3), 4), make((1, 4, 3), 5), make((1, 4, 2), 6), causal=True)",
               [] {
                 return F::scaled_dot_product_attention(make({1, 4, 3}, 4), make({1, 4, 3}, 5),
                                                        make({1, 4, 2}, 6), {}, 0.0, true);
               },
               {1, 4, 2},
               {-1.6280646932415248, 0.996857666258097, -1.1309096115874329, 1.494012747912189,
                -1.0247419607979742, 0.9475513072669198, -0.21918557265318167, 0.3458364887610842})
          .ref("sdpa(make((2, 3, 4), 7), make((2, 3, 4), 8), make((2, 3, 2), 9), "
               "mask=torch.tensor([[1, 0, 1], [1, 1, 0], [0, 1, 1]], dtype=torch.bool))",
               [] {
                 return F::scaled_dot_product_attention(make({2, 3, 4}, 7), make({2, 3, 4}, 8),
                                                        make({2, 3, 2}, 9),
                                                        mask({1, 0, 1, 1, 1, 0, 0, 1, 1}, {3, 3}));
               },
               {2, 3, 2},
               {0.49363002724834076, 0.5029140038539793, -0.7509093933552908, 1.8611675019951412,
                0.5145323415928724, -1.2605452989075063, -0.8600454694112536, -0.21537110985261565,
                -1.4432444996236233, 1.1816778598759983, -0.9457550094442192, 1.6459895722709792})
          .ref("sdpa(make((3, 2), 10), make((4, 2), 11), make((4, 3), 12), mask=make((3, 4), 13), "
               "scale=0.5)",
               [] {
                 return F::scaled_dot_product_attention(make({3, 2}, 10), make({4, 2}, 11),
                                                        make({4, 3}, 12), make({3, 4}, 13), 0.0,
                                                        false, 0.5);
               },
               {3, 3},
               {-1.223127669754949, 0.6225774386963038, -0.2766162344735049, -1.0459205810210064,
                1.350229613542186, 0.04794930567168281, 0.4110092564352991, -1.145122257698024,
                1.2675212926852393}));

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
            {e("cross_entropy", "target out of bounds", "target 7 is out of bounds for 5 classes",
               [] {
                 F::cross_entropy(make({2, 5}, 1), indices({0, 7}, {2}));
               }),
             e("cross_entropy", "target of the wrong shape",
               "input has shape (2, 5): target must have shape (2,) (class indices) or (2, 5) "
               "(class probabilities), got (3,)",
               [] {
                 F::cross_entropy(make({2, 5}, 1), indices({0, 1, 2}, {3}));
               }),
             e("cross_entropy", "label_smoothing 1.5",
               "label_smoothing must be between 0.0 and 1.0, got 1.5",
               [] {
                 F::cross_entropy(make({2, 5}, 1), indices({0, 1}, {2}), {}, -100, "mean", 1.5);
               }),
             e("cross_entropy", "float target of the wrong shape",
               "input has shape (2, 5): target must have shape (2,) (class indices) or (2, 5) "
               "(class probabilities), got (2, 4)",
               [] {
                 F::cross_entropy(make({2, 5}, 1), make({2, 4}, 2));
               })})
          .py("F.cross_entropy(x[0], x[1])",
              {{"weight, sum",
                "F.cross_entropy(x[0], x[1], weight=weights((4,), 3), reduction='sum')"},
               {"label_smoothing 0.2, weight",
                "F.cross_entropy(x[0], x[1], weight=weights((4,), 6), label_smoothing=0.2)"},
               {"[N, C, d] input, none", "F.cross_entropy(x[0], x[1], reduction='none')"}})
          .ref("F.cross_entropy(make((3, 4), 5), idx([3, 0, 1], (3,)), weight=make((4,), 6).abs(), "
               "label_smoothing=0.2)",
               [] {
                 return F::cross_entropy(make({3, 4}, 5), indices({3, 0, 1}, {3}),
                                         abs(make({4}, 6)), -100, "mean", 0.2);
               },
               {}, {2.397313418491433})
          .ref("F.cross_entropy(make((3, 4), 7), make((3, 4), 8).abs(), label_smoothing=0.3)",
               [] {
                 return F::cross_entropy(make({3, 4}, 7), abs(make({3, 4}, 8)), {}, -100, "mean",
                                         0.3);
               },
               {}, {5.557918332780422})
          .ref("F.cross_entropy(make((3, 4), 4), idx([1, -100, 3], (3,)), weight=make((4,), "
               "6).abs(), label_smoothing=0.1, reduction='none')",
               [] {
                 return F::cross_entropy(make({3, 4}, 4), indices({1, -100, 3}, {3}),
                                         abs(make({4}, 6)), -100, "none", 0.1);
               },
               {3}, {0.6013642972815678, 0.0, 5.971814729563888})
          .ref("F.cross_entropy(make((3, 4), 4), idx([1, -100, 3], (3,)), weight=make((4,), "
               "6).abs(), label_smoothing=0.1)",
               [] {
                 return F::cross_entropy(make({3, 4}, 4), indices({1, -100, 3}, {3}),
                                         abs(make({4}, 6)), -100, "mean", 0.1);
               },
               {}, {2.3116019734988074})
          .ref("F.cross_entropy(make((3, 4), 7), make((3, 4), 8))",
               [] {
                 return F::cross_entropy(make({3, 4}, 7), make({3, 4}, 8));
               },
               {}, {2.132893385945918})
          .ref("F.cross_entropy(make((3, 4), 4), idx([1, -100, 3], (3,)))",
               [] {
                 return F::cross_entropy(make({3, 4}, 4), indices({1, -100, 3}, {3}));
               },
               {}, {1.8570794643563857})
          .ref("F.cross_entropy(make((2, 3, 2), 9), idx([0, 2, 1, 1], (2, 2)), reduction='none')",
               [] {
                 return F::cross_entropy(make({2, 3, 2}, 9), indices({0, 2, 1, 1}, {2, 2}), {},
                                         -100, "none");
               },
               {2, 2},
               {2.5379287371898895, 2.4340309738392567, 1.592756004335366, 0.38548467525783014})
          .ref("F.cross_entropy(make((3, 4), 2), idx([2, 2, 0], (3,)), weight=make((4,), 3).abs(), "
               "reduction='sum')",
               [] {
                 return F::cross_entropy(make({3, 4}, 2), indices({2, 2, 0}, {3}),
                                         abs(make({4}, 3)), -100, "sum");
               },
               {}, {9.461395036887641}));

  t.push_back(
      entry("nll_loss", [](const V& v) { return F::nll_loss(v[0], v[1]); },
            {s("mean", {arg({3, 4}, 1), indices({0, 3, 1}, {3})}),
             s("weight, ignore_index", {arg({3, 4}, 2), indices({2, 1, 0}, {3})},
               [weights](const V& v) { return F::nll_loss(v[0], v[1], weights({4}, 3), 1); }),
             s("none", {arg({3, 4}, 4), indices({3, 3, 0}, {3})},
               [](const V& v) { return F::nll_loss(v[0], v[1], {}, -100, "none"); }),
             s("[N, C, d] input, sum", {arg({2, 3, 2}, 5), indices({0, 2, 1, 1}, {2, 2})},
               [](const V& v) { return F::nll_loss(v[0], v[1], {}, -100, "sum"); })},
            {e("nll_loss", "target out of bounds", "target -1 is out of bounds for 3 classes",
               [] {
                 F::nll_loss(make({2, 3}, 1), indices({0, -1}, {2}));
               }),
             e("nll_loss", "float target", "class-index target must be int64, got float64",
               [] {
                 F::nll_loss(make({2, 3}, 1), make({2}, 2));
               })})
          .py("F.nll_loss(x[0], x[1])",
              {{"weight, ignore_index",
                "F.nll_loss(x[0], x[1], weight=weights((4,), 3), ignore_index=1)"},
               {"none", "F.nll_loss(x[0], x[1], reduction='none')"},
               {"[N, C, d] input, sum", "F.nll_loss(x[0], x[1], reduction='sum')"}})
          .ref("F.nll_loss(make((3, 4), 2), idx([2, 1, 0], (3,)), weight=make((4,), 3).abs(), "
               "ignore_index=1)",
               [] {
                 return F::nll_loss(make({3, 4}, 2), indices({2, 1, 0}, {3}), abs(make({4}, 3)), 1);
               },
               {}, {-0.16716418600874458})
          .ref("F.nll_loss(make((2, 3, 2), 5), idx([0, 2, 1, 1], (2, 2)), reduction='sum')",
               [] {
                 return F::nll_loss(make({2, 3, 2}, 5), indices({0, 2, 1, 1}, {2, 2}), {}, -100,
                                    "sum");
               },
               {}, {-1.67135783785301}));

  t.push_back(
      entry("kl_div", [](const V& v) { return F::kl_div(v[0], v[1]); },
            {s("mean", {arg({2, 3}, 1), arg_pos({2, 3}, 2)}),
             s("batchmean", {arg({2, 3}, 3), arg_pos({2, 3}, 4)},
               [](const V& v) { return F::kl_div(v[0], v[1], "batchmean"); }),
             s("log_target, sum", {arg({2, 3}, 5), arg({2, 3}, 6)},
               [](const V& v) { return F::kl_div(v[0], v[1], "sum", true); }),
             s("none, target without grad", {arg({4}, 7), abs(make({4}, 8))},
               [](const V& v) { return F::kl_div(v[0], v[1], "none"); })},
            {e("kl_div", "bad reduction",
               "reduction must be \"mean\", \"batchmean\", \"sum\" or \"none\", got \"avg\"",
               [] { F::kl_div(make({2}, 1), make({2}, 2), "avg"); })})
          .py("F.kl_div(x[0], x[1], reduction='mean')",
              {{"batchmean", "F.kl_div(x[0], x[1], reduction='batchmean')"},
               {"log_target, sum", "F.kl_div(x[0], x[1], reduction='sum', log_target=True)"},
               {"none, target without grad", "F.kl_div(x[0], x[1], reduction='none')"}})
          .ref("F.kl_div(make((2, 3), 3), make((2, 3), 4).abs(), reduction='batchmean')",
               [] {
                 return F::kl_div(make({2, 3}, 3), abs(make({2, 3}, 4)), "batchmean");
               },
               {}, {-0.8041451576186667})
          .ref("F.kl_div(make((2, 3), 5), make((2, 3), 6), reduction='sum', log_target=True)",
               [] {
                 return F::kl_div(make({2, 3}, 5), make({2, 3}, 6), "sum", true);
               },
               {}, {15.281725493371308})
          .ref("F.kl_div(make((4,), 7), make((4,), 8).abs(), reduction='none')",
               [] { return F::kl_div(make({4}, 7), abs(make({4}, 8)), "none"); }, {4},
               {0.52444054854432, 0.2056261095954695, -1.0879815943858642, 1.0672519019449118}));

  t.push_back(
      entry("binary_cross_entropy_with_logits",
            [](const V& v) { return F::binary_cross_entropy_with_logits(v[0], v[1]); },
            {s("mean", {arg({2, 3}, 1), arg_pos({2, 3}, 2)}),
             s("weight and pos_weight, sum",
               {arg({2, 3}, 3), arg_pos({2, 3}, 4), arg_pos({3}, 5), arg_pos({3}, 6)},
               [](const V& v) {
                 return F::binary_cross_entropy_with_logits(v[0], v[1], v[2], "sum", v[3]);
               }),
             s("none, non-contiguous", {arg_t({3, 2}, 7), make({2, 3}, 8)},
               [](const V& v) {
                 return F::binary_cross_entropy_with_logits(v[0], v[1], {}, "none");
               })},
            {e("binary_cross_entropy_with_logits", "target of another shape",
               "target has shape (3,) but input has shape (2, 3); they must match",
               [] {
                 F::binary_cross_entropy_with_logits(make({2, 3}, 1), make({3}, 2));
               })})
          .py("F.binary_cross_entropy_with_logits(x[0], x[1])",
              {{"weight and pos_weight, sum", "bce_weight_with_grad(x[0], x[1], x[2], x[3])"},
               {"none, non-contiguous",
                "F.binary_cross_entropy_with_logits(x[0], x[1], reduction='none')"}},
              "PyTorch 1.13 does not differentiate weight and pos_weight; the value and the "
              "gradients of input and target come from F.binary_cross_entropy_with_logits, those "
              "of weight and pos_weight from PyTorch's formula written in torch ops")
          .ref("F.binary_cross_entropy_with_logits(make((2, 3), 3), make((2, 3), 4).abs(), "
               "weight=make((3,), 5).abs(), reduction='sum', pos_weight=make((3,), 6).abs())",
               [] {
                 return F::binary_cross_entropy_with_logits(make({2, 3}, 3), abs(make({2, 3}, 4)),
                                                            abs(make({3}, 5)), "sum",
                                                            abs(make({3}, 6)));
               },
               {}, {4.412552623337318})
          .ref("F.binary_cross_entropy_with_logits(make((2, 3), 7), make((2, 3), 8), "
               "reduction='none')",
               [] {
                 return F::binary_cross_entropy_with_logits(make({2, 3}, 7), make({2, 3}, 8), {},
                                                            "none");
               },
               {2, 3},
               {0.37177091368260873, 0.7725729400046826, 2.9506116342930513, 1.2296946326713272,
                3.165989159349871, 2.1586439760672813}));

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
               "all elements of input should be between 0 and 1, got -1.88391",
               [] {
                 F::binary_cross_entropy(make({2, 3}, 1), abs(make({2, 3}, 2)) / 2.5);
               }),
             e("binary_cross_entropy", "target of another shape",
               "target has shape (3,) but input has shape (2, 3); they must match",
               [] {
                 F::binary_cross_entropy(abs(make({2, 3}, 1)) / 2.5, abs(make({3}, 2)) / 2.5);
               }),
             e("binary_cross_entropy", "weight that does not broadcast",
               "shapes (2, 3) and (2,) cannot be broadcast: size 3 and size 2 differ at dim 1 and "
               "neither is 1",
               [] {
                 F::binary_cross_entropy(abs(make({2, 3}, 1)) / 2.5, abs(make({2, 3}, 2)) / 2.5,
                                         make({2}, 3));
               })})
          .py("F.binary_cross_entropy(x[0], x[1])",
              {{"weight, sum",
                "F.binary_cross_entropy(x[0], x[1], weight=weights((3,), 5), reduction='sum')"},
               {"none, non-contiguous, target without grad",
                "F.binary_cross_entropy(x[0], x[1], reduction='none')"}})
          .ref("F.binary_cross_entropy(make((2, 3), 1).abs() / 2.5, make((2, 3), 2).abs() / 2.5)",
               [] {
                 return F::binary_cross_entropy(abs(make({2, 3}, 1)) / 2.5,
                                                abs(make({2, 3}, 2)) / 2.5);
               },
               {}, {1.0431798232724883})
          .ref("F.binary_cross_entropy(make((2, 3), 3).abs() / 2.5, make((2, 3), 4).abs() / 2.5, "
               "weight=make((3,), 5).abs(), reduction='sum')",
               [] {
                 return F::binary_cross_entropy(abs(make({2, 3}, 3)) / 2.5,
                                                abs(make({2, 3}, 4)) / 2.5, abs(make({3}, 5)),
                                                "sum");
               },
               {}, {6.837694170810979})
          .ref("F.binary_cross_entropy(tensor([0., 1., 0.5, 1.]), tensor([1., 0., 0.5, 1.]), "
               "reduction='none'): logs clamped at -100",
               [] {
                 return F::binary_cross_entropy(tensor({0.0, 1.0, 0.5, 1.0}, {4}, kFloat64),
                                                tensor({1.0, 0.0, 0.5, 1.0}, {4}, kFloat64), {},
                                                "none");
               },
               {4}, {100.0, 100.0, 0.6931471805599453, -0.0}));

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
                    {e("l1_loss", "shapes differ",
                       "target has shape (3,) but input has shape (2, 3); they must match",
                       [] {
                         F::l1_loss(make({2, 3}, 1), make({3}, 2));
                       })})
                  .py("F.l1_loss(x[0], x[1])",
                      {{"sum", "F.l1_loss(x[0], x[1], reduction='sum')"},
                       {"none, non-contiguous", "F.l1_loss(x[0], x[1], reduction='none')"}})
                  .ref("F.l1_loss(make((2, 3), 1), make((2, 3), 3) * 0.5)",
                       [] {
                         return F::l1_loss(make({2, 3}, 1), make({2, 3}, 3) * 0.5);
                       },
                       {}, {1.318743529958302})
                  .ref("F.l1_loss(make((6,), 2), make((6,), 7) * 0.5, reduction='none')",
                       [] { return F::l1_loss(make({6}, 2), make({6}, 7) * 0.5, "none"); }, {6},
                       {0.5242920570649025, 1.011830877315091, 0.3006303024347199,
                        0.5869085178154693, 0.7255526619343415, 0.03801384168415067}));
  t.push_back(
      entry("smooth_l1_loss", [](const V& v) { return F::smooth_l1_loss(v[0], v[1]); },
            {s("beta 1, mean", {arg({2, 3}, 1), half({2, 3}, 3)}),
             s("beta 0.5, none", {arg({6}, 2), half({6}, 7)},
               [](const V& v) { return F::smooth_l1_loss(v[0], v[1], "none", 0.5); }),
             s("beta 0 is l1, sum, non-contiguous", {arg_t({3, 2}, 2), half({2, 3}, 7)},
               [](const V& v) { return F::smooth_l1_loss(v[0], v[1], "sum", 0.0); })},
            {e("smooth_l1_loss", "negative beta", "beta must be non-negative, got -1",
               [] { F::smooth_l1_loss(make({2}, 1), make({2}, 2), "mean", -1.0); }),
             e("smooth_l1_loss", "shapes differ",
               "target has shape (3,) but input has shape (2, 3); they must match",
               [] {
                 F::smooth_l1_loss(make({2, 3}, 1), make({3}, 2));
               })})
          .py("F.smooth_l1_loss(x[0], x[1])",
              {{"beta 0.5, none", "F.smooth_l1_loss(x[0], x[1], reduction='none', beta=0.5)"},
               {"beta 0 is l1, sum, non-contiguous",
                "F.smooth_l1_loss(x[0], x[1], reduction='sum', beta=0.0)"}})
          .ref("F.smooth_l1_loss(make((2, 3), 1), make((2, 3), 3) * 0.5)",
               [] {
                 return F::smooth_l1_loss(make({2, 3}, 1), make({2, 3}, 3) * 0.5);
               },
               {}, {0.8844441639074748})
          .ref("F.smooth_l1_loss(make((6,), 2), make((6,), 7) * 0.5, reduction='none', beta=0.5)",
               [] { return F::smooth_l1_loss(make({6}, 2), make({6}, 7) * 0.5, "none", 0.5); }, {6},
               {0.27429205706490245, 0.761830877315091, 0.09037857874199115, 0.33690851781546927,
                0.47555266193434154, 0.0014450521595876713})
          .ref(
              "F.smooth_l1_loss(make((2, 3), 2), make((2, 3), 7) * 0.5, reduction='sum', beta=0.0)",
              [] {
                return F::smooth_l1_loss(make({2, 3}, 2), make({2, 3}, 7) * 0.5, "sum", 0.0);
              },
              {}, {3.187228258248675}));
  t.push_back(
      entry("huber_loss", [](const V& v) { return F::huber_loss(v[0], v[1]); },
            {s("delta 1, mean", {arg({2, 3}, 1), half({2, 3}, 3)}),
             s("delta 0.5, none", {arg({6}, 2), half({6}, 7)},
               [](const V& v) { return F::huber_loss(v[0], v[1], "none", 0.5); }),
             s("delta 2, sum, non-contiguous", {arg_t({3, 2}, 2), half({2, 3}, 7)},
               [](const V& v) { return F::huber_loss(v[0], v[1], "sum", 2.0); })},
            {e("huber_loss", "delta 0", "delta must be positive, got 0",
               [] { F::huber_loss(make({2}, 1), make({2}, 2), "mean", 0.0); }),
             e("huber_loss", "bad reduction",
               "reduction must be \"mean\", \"sum\" or \"none\", got \"avg\"",
               [] { F::huber_loss(make({2}, 1), make({2}, 2), "avg"); })})
          .py("F.huber_loss(x[0], x[1])",
              {{"delta 0.5, none", "F.huber_loss(x[0], x[1], reduction='none', delta=0.5)"},
               {"delta 2, sum, non-contiguous",
                "F.huber_loss(x[0], x[1], reduction='sum', delta=2.0)"}})
          .ref("F.huber_loss(make((2, 3), 1), make((2, 3), 3) * 0.5)",
               [] {
                 return F::huber_loss(make({2, 3}, 1), make({2, 3}, 3) * 0.5);
               },
               {}, {0.8844441639074748})
          .ref("F.huber_loss(make((6,), 2), make((6,), 7) * 0.5, reduction='none', delta=0.5)",
               [] { return F::huber_loss(make({6}, 2), make({6}, 7) * 0.5, "none", 0.5); }, {6},
               {0.13714602853245123, 0.3809154386575455, 0.045189289370995575, 0.16845425890773463,
                0.23777633096717077, 0.0007225260797938356}));

  t.push_back(
      entry("layer_norm",
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
               "normalized_shape is (4,) but the input has shape (2, 3): its last 1 dims must "
               "equal it",
               [] {
                 F::layer_norm(make({2, 3}, 1), {4});
               }),
             e("layer_norm", "weight of the wrong shape",
               "weight has shape (2,) but normalized_shape is (3,)",
               [] {
                 F::layer_norm(make({2, 3}, 1), {3}, make({2}, 2));
               })})
          .py("F.layer_norm(x[0], (x[0].size(-1),), *x[1:])",
              {{"two normalized dims", "F.layer_norm(x[0], (2, 3), x[1], x[2])"},
               {"non-contiguous, eps 0.1", "F.layer_norm(x[0], (4,), x[1], x[2], eps=0.1)"}})
          .ref("F.layer_norm(make((2, 2, 3), 5), (2, 3), make((2, 3), 6), make((2, 3), 7))",
               [] {
                 return F::layer_norm(make({2, 2, 3}, 5), {2, 3}, make({2, 3}, 6), make({2, 3}, 7));
               },
               {2, 2, 3},
               {-0.5635038009490507, -2.579180559594265, 0.12977954188525112, -0.5869351184668978,
                1.2376339312298337, -0.45028893003188886, 0.6874714796868341, -2.980373080725198,
                0.4582335045320056, -1.998664820361473, 2.7129527698558142, 0.5544200462625458})
          .ref("F.layer_norm(make((4, 2), 8).t(), (4,), make((4,), 9), make((4,), 10), eps=0.1)",
               [] {
                 return F::layer_norm(make({4, 2}, 8).t(), {4}, make({4}, 9), make({4}, 10), 0.1);
               },
               {2, 4},
               {0.14782999610369355, -2.938136799115592, 1.716866558883743, 0.018285009294398087,
                0.7044480507610072, 1.6880433871577667, 1.370377856186759, 1.3443599689214225}));

  t.push_back(
      entry("rms_norm",
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
               "normalized_shape is (4,) but the input has shape (2, 3): its last 1 dims must "
               "equal it",
               [] {
                 F::rms_norm(make({2, 3}, 1), {4});
               }),
             e("rms_norm", "weight of the wrong shape",
               "weight has shape (2,) but normalized_shape is (3,)",
               [] {
                 F::rms_norm(make({2, 3}, 1), {3}, make({2}, 2));
               })})
          .py("rms_norm(x[0], (x[0].size(-1),), *x[1:])",
              {{"two normalized dims", "rms_norm(x[0], (2, 3), x[1])"},
               {"non-contiguous, eps 0.1", "rms_norm(x[0], (4,), x[1], eps=0.1)"}},
              "torch 1.13 has no F.rms_norm; compared with PyTorch 2.4's formula (x * "
              "rsqrt(mean(x^2) + eps) * weight, eps = finfo(dtype).eps by default) in torch ops")
          .ref(
              "PyTorch 2.4's F.rms_norm(make((2, 3), 1), (3,), make((3,), 2)), by its formula: x * "
              "torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + torch.finfo(torch.float64).eps) * w",
              [] {
                return F::rms_norm(make({2, 3}, 1), {3}, make({3}, 2));
              },
              {2, 3},
              {0.5637483750745624, -0.9981226367044138, -0.6753076172772641, -0.48353783548043294,
               -0.2952186226905985, -1.0343239641117337}));

  t.push_back(
      entry("embedding", [](const V& v) { return F::embedding(v[0], v[1]); },
            {s("repeated indices", {indices({1, 3, 1}, {3}), arg({4, 2}, 1)}),
             s("2-D indices", {indices({0, 2, 2, 1}, {2, 2}), arg({3, 3}, 2)}),
             s("0-dim index", {indices({2}, {}), arg({3, 2}, 3)}),
             // No padding_idx sample: its row's gradient is zero on purpose, which
             // gradcheck's numeric Jacobian cannot know (tests/nn/test_small_modules.cpp
             // checks it against PyTorch).
             s("non-contiguous weight", {indices({0, 1}, {2}), arg_t({2, 3}, 4)})},
            {e("embedding", "index out of range", "index 4 is out of range for 4 embeddings",
               [] {
                 F::embedding(indices({0, 4}, {2}), make({4, 2}, 1));
               }),
             e("embedding", "padding_idx out of range",
               "padding_idx -5 is out of range for 4 embeddings (expected a value in [-4, 4))",
               [] {
                 F::embedding(indices({0, 1}, {2}), make({4, 2}, 1), -5);
               }),
             e("embedding", "float indices", "expected int64 indices, got float64",
               [] {
                 F::embedding(make({2}, 1), make({4, 2}, 2));
               })})
          .py("F.embedding(x[0], x[1])")
          .ref(
              "F.embedding(idx([0, 2, 2, 1], (2, 2)), make((3, 3), 2))",
              [] {
                return F::embedding(indices({0, 2, 2, 1}, {2, 2}), make({3, 3}, 2));
              },
              {2, 2, 3},
              {-0.3927399914140932, -1.7678176319144716, 0.85710472758515, -1.443205834416365,
               1.1817165250832566, -0.5933611154171217, -1.443205834416365, 1.1817165250832566,
               -0.5933611154171217, -0.9179729129152283, 1.7069494465843933, 0.33187180608401334}));

  // The mask comes from the default generator: each call reseeds it so that gradcheck's
  // repeated evaluations see the same mask.
  t.push_back(
      entry("dropout",
            [](const V& v) {
              manual_seed(0);
              return F::dropout(v[0], 0.3);
            },
            {s("p 0.3", {arg({4, 5}, 1)}), s("non-contiguous", {arg_t({5, 4}, 2)}),
             s("p 0 is the identity", {arg({2, 3}, 3)},
               [](const V& v) { return F::dropout(v[0], 0.0); }),
             s("p 1 zeroes everything", {arg({2, 3}, 4)},
               [](const V& v) { return F::dropout(v[0], 1.0); }),
             s("eval", {arg({2, 3}, 5)}, [](const V& v) { return F::dropout(v[0], 0.5, false); })},
            {e("dropout", "p = 1.5", "dropout probability has to be between 0 and 1, but got 1.5",
               [] { F::dropout(make({2}, 1), 1.5); })})
          .py("dropout_default(x[0])",
              {{"p 0 is the identity", "F.dropout(x[0], 0.0)"},
               {"p 1 zeroes everything", "F.dropout(x[0], 1.0)"},
               {"eval", "F.dropout(x[0], 0.5, training=False)"}},
              "p in (0, 1): minigrad's mask is rand(shape) >= p (Note [Dropout stream]), PyTorch's "
              "F.dropout draws bernoulli_(1 - p), another stream; compared with x * "
              "((torch.rand(shape) >= p) / (1 - p)) after manual_seed(0), which checks the draws "
              "bit for bit, not against F.dropout's mask (p 0, p 1 and eval: F.dropout itself)")
          .ref("F.dropout(make((2, 3), 5), 0.5, training=False)",
               [] {
                 return F::dropout(make({2, 3}, 5), 0.5, false);
               },
               {2, 3},
               {0.8807664822153334, -0.8943111582850449, 1.7306112012145767, 0.3555335607141983,
                -1.41954407978618, 1.2053782797134418}));
}

}  // namespace

// ---------------------------------------------------------------- in-place ops
// Each writes a clone of its first input (a leaf cannot be written in grad mode) and returns it:
// gradcheck differentiates through the in-place history. The view samples write a narrowed or
// transposed view of the clone and return the whole clone (CopySlices). inplace_binary and
// inplace_unary are op_table_builders.h's.

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
  return entry(
      std::move(name),
      [op](const V& v) {
        Tensor y = v[0].clone();
        op(y, v[1]);
        return y;
      },
      inplace_binary_samples(ma, mb, op),
      {e(op_name, "a leaf that requires grad",
         "a leaf tensor that requires grad cannot be modified in place; use it under NoGradGuard",
         [op] {
           Tensor leaf = arg({2}, 1);
           op(leaf, make({2}, 2));
         }),
       e(op_name, "other does not broadcast to self's shape",
         op_name == "copy_" ? "cannot be broadcast to the destination's shape"
                            : "doesn't match the broadcast shape",
         [op] {
           Tensor y = make({3}, 1);
           op(y, make({2, 3}, 2));
         })});
}

OpInfo inplace_unary(std::string name, Maker m, InplaceUnary op) {
  std::string op_name = inplace_op_name(name);
  return entry(
      std::move(name),
      [op](const V& v) {
        Tensor y = v[0].clone();
        op(y);
        return y;
      },
      inplace_unary_samples(m, op),
      {e(op_name, "a leaf that requires grad",
         "a leaf tensor that requires grad cannot be modified in place; use it under NoGradGuard",
         [op] {
           Tensor leaf = arg({2}, 1);
           op(leaf);
         })});
}

namespace {

// A custom Function (examples/attention_function.h, the tutorial's hand-written attention).
void add_custom(std::vector<OpInfo>& t) {
  t.push_back(
      entry("custom_attention", [](const V& v) { return Attention::apply(v[0], v[1], v[2]); },
            {s("2-D", {arg({3, 4}, 1), arg({5, 4}, 2), arg({5, 2}, 3)}),
             s("batched", {arg({2, 3, 4}, 4), arg({2, 5, 4}, 5), arg({2, 5, 2}, 6)}),
             s("non-contiguous q", {arg_t({4, 3}, 7), arg({5, 4}, 8), arg({5, 2}, 9)}),
             s("only v requires grad", {make({3, 4}, 10), make({5, 4}, 11), arg({5, 2}, 12)})},
            {e("matmul", "q and k disagree on d",
               "a has shape (3, 4) and b has shape (3, 5): a.shape[-1] (4) must equal b.shape[-2] "
               "(3)",
               [] {
                 Attention::apply(make({3, 4}, 1), make({5, 3}, 2), make({5, 2}, 3));
               })})
          .py("torch.softmax(x[0] @ x[1].transpose(-2, -1) / math.sqrt(x[0].shape[-1]), -1) @ x[2]")
          .ref("A custom Function (examples/attention_function.h): torch.softmax(make((3, 4), 1) @ "
               "make((5, 4), 2).T / 2.0, -1) @ make((5, 2), 3)",
               [] {
                 return Attention::apply(make({3, 4}, 1), make({5, 4}, 2), make({5, 2}, 3));
               },
               {3, 2},
               {0.03182970690504196, -0.11537076786135936, 0.28966618925216164, 0.7468721577660111,
                -0.7790967611340204, 0.03388117018663094}));
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
            {e("slice", "step 0", "step must be greater than zero, got 0",
               [] { make({3}, 1).slice(0, 0, 2, 0); }),
             e("slice", "0-dim", "cannot slice a 0-dim tensor",
               [] { make({}, 1).slice(0, 0, 1, 1); })})
          .py("x[0][:, 0::2]", {{"negative start, stop past the end", "x[0][-3:100:2]"},
                                {"step 3, non-contiguous", "x[0][:, 1::3]"},
                                {"empty", "x[0][:, 3:1:2]"}})
          .ref("---- indexing (x[...] in Python is x.index({...}) here) make((3, 5), 1)[:, 0::2]",
               [] {
                 return make({3, 5}, 1).slice(1, 0, std::nullopt, 2);
               },
               {3, 3},
               {-1.883908815957236, -1.0340640969579933, 0.21578062204124993, -1.5592970184591284,
                -0.7094522994598851, 0.5403924195393581, -1.23468522096102, -0.38484050196177355,
                0.8650042170374697}));
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
             s("Ellipsis only (an alias)", {arg({2, 3}, 16)},
               [](const V& v) { return v[0].index({Ellipsis}); }),
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
               "index 2 is out of bounds for dimension 0 with size 2",
               [] { make({2, 3}, 1).index({indices({2}, {1})}); }),
             e("index", "integer out of range",
               "index 3 is out of bounds for dimension 1 with size 3",
               [] { make({2, 3}, 1).index({Slice(), 3}); }),
             e("index", "too many indices", "too many indices for tensor of dimension 2 (got 3)",
               [] {
                 make({2, 3}, 1).index({0, 0, 0});
               }),
             e("index", "mask shape mismatch",
               "the shape of the mask (2, 1) at index 1 does not match the shape of the indexed "
               "tensor (2, 3) at index 1",
               [] {
                 make({2, 3}, 1).index({mask({1, 0}, {2, 1})});
               }),
             e("index", "float index",
               "tensors used as indices must be int64 or bool tensors, but got float64",
               [] { make({2, 3}, 1).index({make({1}, 2)}); }),
             e("index", "slice step 0", "slice step cannot be zero",
               [] {
                 make({2, 3}, 1).index({Slice(0, 2, 0)});
               }),
             e("index", "negative slice step", "step must be greater than zero, got -1",
               [] {
                 make({2, 3}, 1).index({Slice(None, None, -1)});
               }),
             e("index", "an integer into a 0-dim tensor",
               "invalid index of a 0-dim tensor; use item<T>() to convert a 0-dim tensor to a "
               "number",
               [] { make({}, 1).index({0}); }),
             e("index", "two ellipses", "an index can only have a single ellipsis ('...')",
               [] {
                 make({2, 3}, 1).index({Ellipsis, "..."});
               }),
             e("index", "index tensors that do not broadcast",
               "shape mismatch: indexing tensors could not be broadcast together with shapes (2,) "
               "and (3,)",
               [] {
                 make({2, 3}, 1).index({indices({0, 1}, {2}), indices({0, 1, 2}, {3})});
               })})
          .py("x[0][x[1]]", {{"two indices broadcast, after a slice", "x[0][:, x[1], x[2]]"},
                             {"index, slice, index (not adjacent)", "x[0][x[1], :, x[2]]"},
                             {"int, stepped slice, None, Ellipsis", "x[0][1, ::2, None, ...]"},
                             {"negative slice ends", "x[0][-2:, :-1]"},
                             {"Ellipsis only (an alias)", "x[0][...]"},
                             {"Ellipsis then an index", "x[0][..., x[1]]"},
                             {"bool scalar", "x[0][True]"},
                             {"non-contiguous", "x[0][:, x[1]]"},
                             {"mask and index broadcast", "x[0][x[1], x[2]]"}})
          .ref("make((2, 3, 4), 5)[:, tensor([[0], [2]]), tensor([1, 3, 0])]",
               [] {
                 return make({2, 3, 4}, 5)
                     .index({indexing::Slice(), indices({0, 2}, {2, 1}), indices({1, 3, 0}, {3})});
               },
               {2, 2, 3},
               {-0.8943111582850449, 0.3555335607141983, 0.8807664822153334, -1.0949322822880716,
                -0.2450875632888283, 0.6801453582123065, 1.004757155710415, 1.8546018747096582,
                -1.6201652037892067, 0.804136031707388, 1.6539807507066313, -1.8207863277922336})
          .ref("make((3, 2, 4), 6)[tensor([0, 2]), :, tensor([3, 1])]",
               [] {
                 return make({3, 2, 4}, 6)
                     .index({indices({0, 2}, {2}), indexing::Slice(), indices({3, 1}, {2})});
               },
               {2, 2},
               {1.8467023852573403, -0.4536081767441733, 0.5956154182520463, -1.704695143749467}));
  t.push_back(
      entry("index_put", [](const V& v) { return index_put(v[0], {v[1]}, v[2]); },
            {s("distinct indices", {arg({4, 3}, 1), indices({2, 0}, {2}), arg({2, 3}, 2)}),
             s("values broadcast", {arg({4, 3}, 3), indices({3, 1}, {2}), arg({3}, 4)}),
             s("accumulate, repeated index",
               {arg({4, 3}, 5), indices({1, 1, 3}, {3}), arg({3, 3}, 6)},
               [](const V& v) { return index_put(v[0], {v[1]}, v[2], /*accumulate=*/true); }),
             s("bool mask", {arg({4, 3}, 7), mask({1, 0, 1, 1}, {4}), arg({3, 3}, 8)}),
             s("second dim", {arg({2, 4}, 9), indices({3, 0}, {2}), arg({2, 2}, 10)},
               [](const V& v) {
                 return index_put(v[0], {std::nullopt, v[1]}, v[2]);
               }),
             s("only values require grad", {make({3, 2}, 11), indices({2}, {1}), arg({1, 2}, 12)}),
             s("non-contiguous self", {arg_t({3, 4}, 13), indices({0, 3}, {2}), arg({2, 3}, 14)})},
            {e("index_put", "values of the wrong shape",
               "shape mismatch: value tensor of shape (3, 3) cannot be broadcast to indexing "
               "result of shape (2, 3)",
               [] {
                 index_put(make({4, 3}, 1), {indices({0, 1}, {2})}, make({3, 3}, 2));
               }),
             e("index_put", "values of another dtype",
               "index put requires the source and destination dtypes match, got float64 for the "
               "destination and float32 for the source",
               [] {
                 index_put(make({4, 3}, 1), {indices({0}, {1})}, make({3}, 2).to(kFloat32));
               })})
          .py("torch.index_put(x[0], (x[1],), x[2])",
              {{"accumulate, repeated index",
                "torch.index_put(x[0], (x[1],), x[2], accumulate=True)"},
               {"second dim", "index_put_second_dim(x[0], x[1], x[2])"}})
          .ref(
              "torch.index_put(make((4, 3), 5), (tensor([1, 1, 3]),), make((3, 3), 6), "
              "accumulate=True)",
              [] {
                return index_put(make({4, 3}, 5), {indices({1, 1, 3}, {3})}, make({3, 3}, 6), true);
              },
              {4, 3},
              {0.8807664822153334, -0.8943111582850449, 1.7306112012145767, 0.5741712527300138,
               0.048938331228878695, -0.8762945902722561, -0.5696993607869365, -1.944777001287315,
               0.6801453582123065, 0.2265371814681334, 1.0763819004673765, -2.073773380533383}));
  t.push_back(
      entry(
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
           s("value with leading size-1 dims",
             {arg({3, 4}, 6), indices({1}, {1}), arg({1, 1, 3}, 7)},
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
             "a leaf tensor that requires grad cannot be modified in place; use it under "
             "NoGradGuard",
             [] { arg({3}, 1).index_put_({indices({0}, {1})}, make({1}, 2)); }),
           e("index_put_", "values of another dtype",
             "index put requires the source and destination dtypes match, got float64 for the "
             "destination and float32 for the source",
             [] { make({3}, 1).index_put_({indices({0}, {1})}, make({1}, 2).to(kFloat32)); }),
           e("index_put_", "values of the wrong shape",
             "shape mismatch: value tensor of shape (3, 2) cannot be broadcast to indexing result "
             "of shape (2, 2)",
             [] {
               make({3, 2}, 1).index_put_({indices({0, 1}, {2})}, make({3, 2}, 2));
             })})
          .py("on_clone(x, lambda y: y.__setitem__((slice(None), x[1]), x[2]))",
              {{"basic indices only (copy_)",
                "on_clone(x, lambda y: y.__setitem__((slice(None, None, 2), 1), x[1][:2]))"},
               {"a scalar value", "on_clone(x, lambda y: y.__setitem__(x[1], 2.5))"},
               {"value with leading size-1 dims",
                "on_clone(x, lambda y: y.__setitem__((slice(None), x[1]), x[2].reshape(1, 3, 1)))"},
               {"on a row view (CopySlices)",
                "on_clone(x, lambda y: y[1:3].__setitem__((slice(None), x[1]), x[2]))"},
               {"accumulate (ATen form)",
                "on_clone(x, lambda y: y.index_put_((x[1],), x[2], accumulate=True))"}})
          .ref("y = make((3, 4), 1); y[:, tensor([3, 0])] = make((3, 2), 2)",
               [] {
                 Tensor y = make({3, 4}, 1);
                 y.index_put_({indexing::Slice(), indices({3, 0}, {2})}, make({3, 2}, 2));
                 return y;
               },
               {3, 4},
               {-1.7678176319144716, 0.7410135435423859, -1.0340640969579933, -0.3927399914140932,
                -0.9179729129152283, -1.5592970184591284, 1.0656253410404934, 0.85710472758515,
                0.33187180608401334, 0.5403924195393581, -1.23468522096102, 1.7069494465843933}));
  t.push_back(
      entry("masked_select", [](const V& v) { return masked_select(v[0], v[1]); },
            {s("same shape", {arg({2, 3}, 1), mask({1, 0, 1, 1, 0, 0}, {2, 3})}),
             s("broadcast mask", {arg({2, 3}, 2), mask({0, 1, 1}, {3})}),
             s("broadcast input", {arg({3}, 3), mask({1, 0, 0, 1, 1, 1}, {2, 3})})},
            {e("masked_select", "int64 mask", "mask must be a bool tensor, got int64",
               [] {
                 masked_select(make({2}, 1), indices({1, 0}, {2}));
               }),
             e("masked_select", "shapes that do not broadcast",
               "shapes (2,) and (3,) cannot be broadcast: size 2 and size 3 differ at dim 0 and "
               "neither is 1",
               [] {
                 masked_select(make({2}, 1), mask({1, 0, 1}, {3}));
               })})
          .py("torch.masked_select(x[0], x[1])")
          .ref("torch.masked_select(make((3,), 3), tensor([[1, 0, 0], [1, 1, 1]]).bool())",
               [] {
                 return masked_select(make({3}, 3), mask({1, 0, 0, 1, 1, 1}, {2, 3}));
               },
               {4},
               {1.4984288331290485, 1.4984288331290485, -0.2766488073713298, -1.6517264478717082}));
}

void add_inplace(std::vector<OpInfo>& t) {
  t.push_back(inplace_binary("add_", arg, arg, [](Tensor& y, const Tensor& o) { y.add_(o); })
                  .py("on_clone(x, lambda y: y.add_(x[1]))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.add_(x[1]), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.add_(x[1]), view=lambda h: h.t())"}})
                  .ref("In-place ops (op_table.cpp's add_inplace): the first input written in "
                       "place. y = make((2, 3), 1); y.add_(make((3,), 2))",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.add_(make({3}, 2));
                         return y;
                       },
                       {2, 3},
                       {-2.276648807371329, -1.0268040883720857, -0.1769593693728433,
                        1.198118271127535, -1.5520370098732217, -0.7021922908739784}));
  t.push_back(inplace_binary("sub_", arg, arg, [](Tensor& y, const Tensor& o) { y.sub_(o); })
                  .py("on_clone(x, lambda y: y.sub_(x[1]))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.sub_(x[1]), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.sub_(x[1]), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.sub_(make((3,), 2))",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.sub_(make({3}, 2));
                         return y;
                       },
                       {2, 3},
                       {-1.4911688245431427, 2.5088311754568577, -1.8911688245431433,
                        1.9835982539557215, 1.9835982539557215, -2.4164017460442784}));
  t.push_back(inplace_binary("mul_", arg, arg, [](Tensor& y, const Tensor& o) { y.mul_(o); })
                  .py("on_clone(x, lambda y: y.mul_(x[1]))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.mul_(x[1]), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.mul_(x[1]), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.mul_(make((3,), 2))",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.mul_(make({3}, 2));
                         return y;
                       },
                       {2, 3},
                       {0.7398863322039794, -1.3099768077616518, -0.8863012261287649,
                        -0.6247936603716383, -0.3814607882699941, -1.3364808462307478}));
  t.push_back(inplace_binary("div_", arg, arg, [](Tensor& y, const Tensor& o) { y.div_(o); })
                  .py("on_clone(x, lambda y: y.div_(x[1]))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.div_(x[1]), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.div_(x[1]), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.div_(make((3,), 2))",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.div_(make({3}, 2));
                         return y;
                       },
                       {2, 3},
                       {4.796834692525364, -0.4191685444046056, -1.2064617819474845,
                        -4.050665318837559, -0.12206045360435094, -1.8192607837461943}));
  t.push_back(
      inplace_binary("pow_tensor_", arg_pos, arg, [](Tensor& y, const Tensor& o) { y.pow_(o); })
          .py("on_clone(x, lambda y: y.pow_(x[1]))",
              {{"on a row view (CopySlices)",
                "on_clone(x, lambda y: y.pow_(x[1]), view=lambda h: h.narrow(0, 1, 2))"},
               {"on a transposed view (CopySlices)",
                "on_clone(x, lambda y: y.pow_(x[1]), view=lambda h: h.t())"}})
          .ref("y = make((2, 3), 1).abs(); y.pow_(make((2, 3), 2))",
               [] {
                 Tensor y = abs(make({2, 3}, 1));
                 y.pow_(make({2, 3}, 2));
                 return y;
               },
               {2, 3},
               {0.7797816044699326, 1.6987271770444077, 1.0291263457940711, 0.6529918422199731,
                0.07297815915530395, 1.1588511214721475}));
  t.push_back(inplace_binary("copy_", arg, arg, [](Tensor& y, const Tensor& o) { y.copy_(o); })
                  .py("on_clone(x, lambda y: y.copy_(x[1]))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.copy_(x[1]), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.copy_(x[1]), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.copy_(make((3,), 2))",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.copy_(make({3}, 2));
                         return y;
                       },
                       {2, 3},
                       {-0.3927399914140932, -1.7678176319144716, 0.85710472758515,
                        -0.3927399914140932, -1.7678176319144716, 0.85710472758515}));
  t.push_back(
      inplace_unary("add_scalar_", arg, [](Tensor& y) { y.add_(2.5, -2); })
          .py("on_clone(x, lambda y: y.add_(2.5, alpha=-2))",
              {{"on a row view (CopySlices)",
                "on_clone(x, lambda y: y.add_(2.5, alpha=-2), view=lambda h: h.narrow(0, 1, 2))"},
               {"on a transposed view (CopySlices)",
                "on_clone(x, lambda y: y.add_(2.5, alpha=-2), view=lambda h: h.t())"}})
          .ref("y = make((2, 3), 1); y.add_(2.5, alpha=-2)",
               [] {
                 Tensor y = make({2, 3}, 1);
                 y.add_(2.5, -2);
                 return y;
               },
               {2, 3},
               {-6.883908815957236, -4.258986456457614, -6.0340640969579935, -3.4091417374583717,
                -4.78421937795875, -6.559297018459128}));
  t.push_back(inplace_unary("sub_scalar_", arg, [](Tensor& y) { y.sub_(2.5); })
                  .py("on_clone(x, lambda y: y.sub_(2.5))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.sub_(2.5), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.sub_(2.5), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.sub_(2.5)",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.sub_(2.5);
                         return y;
                       },
                       {2, 3},
                       {-4.383908815957236, -1.758986456457614, -3.5340640969579935,
                        -0.9091417374583717, -2.28421937795875, -4.059297018459128}));
  t.push_back(inplace_unary("mul_scalar_", arg, [](Tensor& y) { y.mul_(-3); })
                  .py("on_clone(x, lambda y: y.mul_(-3))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.mul_(-3), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.mul_(-3), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.mul_(-3)",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.mul_(-3);
                         return y;
                       },
                       {2, 3},
                       {5.651726447871708, -2.2230406306271577, 3.1021922908739796,
                        -4.772574787624885, -0.6473418661237498, 4.677891055377385}));
  t.push_back(inplace_unary("div_scalar_", arg, [](Tensor& y) { y.div_(2.5); })
                  .py("on_clone(x, lambda y: y.div_(2.5))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.div_(2.5), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.div_(2.5), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.div_(2.5)",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.div_(2.5);
                         return y;
                       },
                       {2, 3},
                       {-0.7535635263828944, 0.29640541741695436, -0.4136256387831973,
                        0.6363433050166514, 0.08631224881649997, -0.6237188073836514}));
  t.push_back(inplace_unary("pow_", arg, [](Tensor& y) { y.pow_(3); })
                  .py("on_clone(x, lambda y: y.pow_(3))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.pow_(3), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.pow_(3), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.pow_(3)",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.pow_(3);
                         return y;
                       },
                       {2, 3},
                       {-6.686204189749884, 0.40689133091315227, -1.105712905686243,
                        4.026191834878277, 0.010047021281406068, -3.791285984795662}));
  t.push_back(inplace_unary("neg_", arg, [](Tensor& y) { y.neg_(); })
                  .py("on_clone(x, lambda y: y.neg_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.neg_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.neg_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.neg_()",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.neg_();
                         return y;
                       },
                       {2, 3},
                       {1.883908815957236, -0.7410135435423859, 1.0340640969579933,
                        -1.5908582625416283, -0.21578062204124993, 1.5592970184591284}));
  t.push_back(inplace_unary("exp_", arg, [](Tensor& y) { y.exp_(); })
                  .py("on_clone(x, lambda y: y.exp_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.exp_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.exp_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.exp_()",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.exp_();
                         return y;
                       },
                       {2, 3},
                       {0.15199482329930503, 2.0980609133105137, 0.35555899399797525,
                        4.9079594389486685, 1.2408301383570568, 0.21028384491490118}));
  t.push_back(inplace_unary("log_", arg_pos, [](Tensor& y) { y.log_(); })
                  .py("on_clone(x, lambda y: y.log_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.log_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.log_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1).abs(); y.log_()",
                       [] {
                         Tensor y = abs(make({2, 3}, 1));
                         y.log_();
                         return y;
                       },
                       {2, 3},
                       {0.6333487758094518, -0.2997363764679433, 0.0334967634860555,
                        0.46427365836116147, -1.5334930261063555, 0.44423509050473164}));
  t.push_back(inplace_unary("sqrt_", arg_pos, [](Tensor& y) { y.sqrt_(); })
                  .py("on_clone(x, lambda y: y.sqrt_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.sqrt_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.sqrt_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1).abs(); y.sqrt_()",
                       [] {
                         Tensor y = abs(make({2, 3}, 1));
                         y.sqrt_();
                         return y;
                       },
                       {2, 3},
                       {1.3725555784583865, 0.8608214353409108, 1.016889422188073,
                        1.2612922986134611, 0.46452192848266044, 1.2487181501280136}));
  t.push_back(inplace_unary("abs_", arg, [](Tensor& y) { y.abs_(); })
                  .py("on_clone(x, lambda y: y.abs_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.abs_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.abs_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.abs_()",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.abs_();
                         return y;
                       },
                       {2, 3},
                       {1.883908815957236, 0.7410135435423859, 1.0340640969579933,
                        1.5908582625416283, 0.21578062204124993, 1.5592970184591284}));
  t.push_back(
      inplace_unary("relu_", arg, [](Tensor& y) { y.relu_(); })
          .py("on_clone(x, lambda y: y.relu_())",
              {{"on a row view (CopySlices)",
                "on_clone(x, lambda y: y.relu_(), view=lambda h: h.narrow(0, 1, 2))"},
               {"on a transposed view (CopySlices)",
                "on_clone(x, lambda y: y.relu_(), view=lambda h: h.t())"}})
          .ref("y = make((2, 3), 1); y.relu_()",
               [] {
                 Tensor y = make({2, 3}, 1);
                 y.relu_();
                 return y;
               },
               {2, 3},
               {0.0, 0.7410135435423859, 0.0, 1.5908582625416283, 0.21578062204124993, 0.0}));
  t.push_back(inplace_unary("sigmoid_", arg, [](Tensor& y) { y.sigmoid_(); })
                  .py("on_clone(x, lambda y: y.sigmoid_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.sigmoid_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.sigmoid_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.sigmoid_()",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.sigmoid_();
                         return y;
                       },
                       {2, 3},
                       {0.1319405436770913, 0.6772174505337845, 0.2622969531922167,
                        0.8307368203296346, 0.5537368125844715, 0.17374754343654558}));
  t.push_back(inplace_unary("tanh_", arg, [](Tensor& y) { y.tanh_(); })
                  .py("on_clone(x, lambda y: y.tanh_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.tanh_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.tanh_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.tanh_()",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.tanh_();
                         return y;
                       },
                       {2, 3},
                       {-0.9548384878860765, 0.629757130026985, -0.7755331909945846,
                        0.9202808215025472, 0.21249283482706205, -0.915306496201275}));
  t.push_back(
      inplace_unary("clamp_", arg, [](Tensor& y) { y.clamp_(-0.5, 0.8); })
          .py("on_clone(x, lambda y: y.clamp_(-0.5, 0.8))",
              {{"on a row view (CopySlices)",
                "on_clone(x, lambda y: y.clamp_(-0.5, 0.8), view=lambda h: h.narrow(0, 1, 2))"},
               {"on a transposed view (CopySlices)",
                "on_clone(x, lambda y: y.clamp_(-0.5, 0.8), view=lambda h: h.t())"}})
          .ref("y = make((2, 3), 1); y.clamp_(-0.5, 0.8)",
               [] {
                 Tensor y = make({2, 3}, 1);
                 y.clamp_(-0.5, 0.8);
                 return y;
               },
               {2, 3}, {-0.5, 0.7410135435423859, -0.5, 0.8, 0.21578062204124993, -0.5}));
  t.push_back(inplace_unary("fill_", arg, [](Tensor& y) { y.fill_(2.5); })
                  .py("on_clone(x, lambda y: y.fill_(2.5))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.fill_(2.5), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.fill_(2.5), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.fill_(2.5)",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.fill_(2.5);
                         return y;
                       },
                       {2, 3}, {2.5, 2.5, 2.5, 2.5, 2.5, 2.5}));
  t.push_back(inplace_unary("zero_", arg, [](Tensor& y) { y.zero_(); })
                  .py("on_clone(x, lambda y: y.zero_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.zero_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.zero_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.zero_()",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.zero_();
                         return y;
                       },
                       {2, 3}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}));
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
                    {e("masked_fill_", "a leaf that requires grad",
                       "a leaf tensor that requires grad cannot be modified in place; use it under "
                       "NoGradGuard",
                       [] {
                         arg({2}, 1).masked_fill_(mask({1, 0}, {2}), 0.0);
                       })})
                  .py("on_clone(x, lambda y: y.masked_fill_(x[1], -2.5))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.masked_fill_(x[1], -2.5), view=lambda h: "
                        "h.narrow(0, 1, 2))"}})
                  .ref("y = make((2, 3), 1); y.masked_fill_(torch.tensor([0, 1, 1], "
                       "dtype=torch.bool), -2.5)",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.masked_fill_(mask({0, 1, 1}, {3}), -2.5);
                         return y;
                       },
                       {2, 3}, {-1.883908815957236, -2.5, -2.5, 1.5908582625416283, -2.5, -2.5}));
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
  add_math(t);
  add_reduce_more(t);
  add_loss_more(t);
  add_matrix(t);
  add_backward(t);
  return t;
}

}  // namespace

const std::vector<OpInfo>& op_table() {
  static const std::vector<OpInfo> table = build();
  return table;
}

}  // namespace minigrad::testing
