// The op table's math family (op_table.h): unary math, rounding, the binary math ops and the
// activations of minigrad/ops/math.h, with nn::functional's softsign and softmin. Reference
// values printed by PyTorch 1.13 from the expression each carries.
#include <cmath>
#include <vector>

#include "core/op_table.h"
#include "core/op_table_builders.h"

namespace minigrad::testing {

namespace {

namespace F = nn::functional;

/// make(shape, seed) * 0.45 (values in (-0.9, 0.9): asin, acos, atanh, log1p, tan) as a leaf.
Tensor arg_unit(const Shape& shape, std::int64_t seed) {
  return (make(shape, seed) * 0.45).requires_grad_();
}

/// abs(make(shape, seed)) + 1.1 (values in [1.3, 3.1): acosh) as a leaf.
Tensor arg_above1(const Shape& shape, std::int64_t seed) {
  return (abs(make(shape, seed)) + 1.1).requires_grad_();
}

/// make(shape, seed) * 2.5 (values in (-5, 5): both sides of hardsigmoid's and hardswish's
/// kinks at -3 and 3) as a leaf.
Tensor arg_wide(const Shape& shape, std::int64_t seed) {
  return (make(shape, seed) * 2.5).requires_grad_();
}

/// base with more samples appended.
std::vector<Sample> with_samples(std::vector<Sample> base, std::vector<Sample> more) {
  for (Sample& smp : more) base.push_back(std::move(smp));
  return base;
}

}  // namespace

void add_math(std::vector<OpInfo>& t) {
  t.push_back(entry("sin", [](const V& v) { return sin(v[0]); }, unary_samples(arg),
                    {e("sin", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { sin(undefined()); })})
                  .py("torch.sin(x[0])")
                  .ref("torch.sin(make((2, 3), 1))",
                       [] {
                         return sin(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.95137946681467, 0.675036035200939, -0.8593841771864578,
                        0.9997987661165886, 0.21411001252658485, -0.9999338836824736}));
  t.push_back(entry("cos", [](const V& v) { return cos(v[0]); }, unary_samples(arg),
                    {e("cos", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { cos(undefined()); })})
                  .py("torch.cos(x[0])")
                  .ref("torch.cos(make((2, 3), 1))",
                       [] {
                         return cos(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.3080212819326518, 0.737784759384603, 0.5113304567513605,
                        -0.020060590014930935, 0.976809552848387, 0.01149905490401074}));
  t.push_back(entry("tan", [](const V& v) { return tan(v[0]); }, unary_samples(arg_unit),
                    {e("tan", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { tan(undefined()); })})
                  .py("torch.tan(x[0])")
                  .ref("torch.tan(make((2, 3), 1) * 0.45)",
                       [] {
                         return tan(make({2, 3}, 1) * 0.45);
                       },
                       {2, 3},
                       {-1.1332008300737682, 0.34639103465023624, -0.5021033133511928,
                        0.8698157245549828, 0.09740761356803394, -0.845170599749949}));
  t.push_back(entry("asin", [](const V& v) { return asin(v[0]); }, unary_samples(arg_unit),
                    {e("asin", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { asin(undefined()); })})
                  .py("torch.asin(x[0])")
                  .ref("torch.asin(make((2, 3), 1) * 0.45)",
                       [] {
                         return asin(make({2, 3}, 1) * 0.45);
                       },
                       {2, 3},
                       {-1.011745594640719, 0.3399671204316256, -0.48400609179624177,
                        0.7978925410121145, 0.09725452013115209, -0.7777578223998252}));
  t.push_back(entry("acos", [](const V& v) { return acos(v[0]); }, unary_samples(arg_unit),
                    {e("acos", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { acos(undefined()); })})
                  .py("torch.acos(x[0])")
                  .ref("torch.acos(make((2, 3), 1) * 0.45)",
                       [] {
                         return acos(make({2, 3}, 1) * 0.45);
                       },
                       {2, 3},
                       {2.582541921435616, 1.230829206363271, 2.054802418591138, 0.7729037857827822,
                        1.4735418066637445, 2.348554149194722}));
  t.push_back(entry("atan", [](const V& v) { return atan(v[0]); }, unary_samples(arg),
                    {e("atan", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { atan(undefined()); })})
                  .py("torch.atan(x[0])")
                  .ref("torch.atan(make((2, 3), 1))",
                       [] {
                         return atan(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-1.0828046134578286, 0.6377249250602759, -0.8021434139787931,
                        1.0096185192501081, 0.2125221722930866, -1.000551061683619}));
  t.push_back(entry("sinh", [](const V& v) { return sinh(v[0]); }, unary_samples(arg),
                    {e("sinh", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { sinh(undefined()); })})
                  .py("torch.sinh(x[0])")
                  .ref("torch.sinh(make((2, 3), 1))",
                       [] {
                         return sinh(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-3.2135883067758386, 0.8107151642688912, -1.2284569038241266,
                        2.352104386921239, 0.21745902826382768, -2.272596606160108}));
  t.push_back(entry("cosh", [](const V& v) { return cosh(v[0]); }, unary_samples(arg),
                    {e("cosh", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { cosh(undefined()); })})
                  .py("torch.cosh(x[0])")
                  .ref("torch.cosh(make((2, 3), 1))",
                       [] {
                         return cosh(make({2, 3}, 1));
                       },
                       {2, 3},
                       {3.3655831300751444, 1.2873457490416222, 1.584015897822102,
                        2.5558550520274297, 1.0233711100932292, 2.482880451075009}));
  t.push_back(entry("asinh", [](const V& v) { return asinh(v[0]); }, unary_samples(arg),
                    {e("asinh", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { asinh(undefined()); })})
                  .py("torch.asinh(x[0])")
                  .ref("torch.asinh(make((2, 3), 1))",
                       [] {
                         return asinh(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-1.3904790073178483, 0.6859425054528944, -0.9052565946861741,
                        1.244128241345467, 0.21414026106085496, -1.2272115224702884}));
  t.push_back(entry("acosh", [](const V& v) { return acosh(v[0]); }, unary_samples(arg_above1),
                    {e("acosh", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { acosh(undefined()); })})
                  .py("torch.acosh(x[0])")
                  .ref("torch.acosh(make((2, 3), 1).abs() + 1.1)",
                       [] {
                         return acosh(abs(make({2, 3}, 1)) + 1.1);
                       },
                       {2, 3},
                       {1.757040843565464, 1.2198735937117655, 1.3911153569963213,
                        1.6465412336927596, 0.775155158801086, 1.633820543750566}));
  t.push_back(entry("atanh", [](const V& v) { return atanh(v[0]); }, unary_samples(arg_unit),
                    {e("atanh", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { atanh(undefined()); })})
                  .py("torch.atanh(x[0])")
                  .ref("torch.atanh(make((2, 3), 1) * 0.45)",
                       [] {
                         return atanh(make({2, 3}, 1) * 0.45);
                       },
                       {2, 3},
                       {-1.2481319037818868, 0.34671170305727067, -0.5040915329914485,
                        0.8991550865706139, 0.09740819635618864, -0.8706094772032817}));
  t.push_back(entry("log1p", [](const V& v) { return log1p(v[0]); }, unary_samples(arg_unit),
                    {e("log1p", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { log1p(undefined()); })})
                  .py("torch.log1p(x[0])")
                  .ref("torch.log1p(make((2, 3), 1) * 0.45)",
                       [] {
                         return log1p(make({2, 3}, 1) * 0.45);
                       },
                       {2, 3},
                       {-1.8822902718656274, 0.2877741391590668, -0.6261033820603469,
                        0.539929692424355, 0.0926715014786392, -1.2096008062150814}));
  t.push_back(entry("log2", [](const V& v) { return log2(v[0]); }, unary_samples(arg_pos),
                    {e("log2", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { log2(undefined()); })})
                  .py("torch.log2(x[0])")
                  .ref("torch.log2(make((2, 3), 1).abs())",
                       [] {
                         return log2(abs(make({2, 3}, 1)));
                       },
                       {2, 3},
                       {0.9137291380133921, -0.43242818390432924, 0.04832561456716278,
                        0.6698053045330244, -2.212362784001449, 0.6408957620600362}));
  t.push_back(entry("log10", [](const V& v) { return log10(v[0]); }, unary_samples(arg_pos),
                    {e("log10", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { log10(undefined()); })})
                  .py("torch.log10(x[0])")
                  .ref("torch.log10(make((2, 3), 1).abs())",
                       [] {
                         return log10(abs(make({2, 3}, 1)));
                       },
                       {2, 3},
                       {0.2750598784542247, -0.1301738543257035, 0.014547459543612237,
                        0.20163148791928795, -0.6659875592751094, 0.1929288484739966}));
  t.push_back(entry("expm1", [](const V& v) { return expm1(v[0]); }, unary_samples(arg),
                    {e("expm1", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { expm1(undefined()); })})
                  .py("torch.expm1(x[0])")
                  .ref("torch.expm1(make((2, 3), 1))",
                       [] {
                         return expm1(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.848005176700695, 1.0980609133105135, -0.6444410060020248,
                        3.9079594389486685, 0.24083013835705688, -0.7897161550850988}));
  t.push_back(entry("exp2", [](const V& v) { return exp2(v[0]); }, unary_samples(arg),
                    {e("exp2", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { exp2(undefined()); })})
                  .py("torch.exp2(x[0])")
                  .ref("torch.exp2(make((2, 3), 1))",
                       [] {
                         return exp2(make({2, 3}, 1));
                       },
                       {2, 3},
                       {0.27094861619610544, 1.671349607845658, 0.48833256805425523,
                        3.012284977034233, 1.1613321249262338, 0.33931638016784343}));
  t.push_back(entry("floor", [](const V& v) { return floor(v[0]); }, unary_samples(arg),
                    {e("floor", "bool tensor", "not implemented for bool tensors",
                       [] {
                         floor(mask({1, 0}, {2}));
                       })})
                  .py("torch.floor(x[0])")
                  .ref("torch.floor(make((2, 3), 1))",
                       [] {
                         return floor(make({2, 3}, 1));
                       },
                       {2, 3}, {-2.0, 0.0, -2.0, 1.0, 0.0, -2.0}));
  t.push_back(entry("ceil", [](const V& v) { return ceil(v[0]); }, unary_samples(arg),
                    {e("ceil", "bool tensor", "not implemented for bool tensors",
                       [] {
                         ceil(mask({1, 0}, {2}));
                       })})
                  .py("torch.ceil(x[0])")
                  .ref("torch.ceil(make((2, 3), 1))",
                       [] {
                         return ceil(make({2, 3}, 1));
                       },
                       {2, 3}, {-1.0, 1.0, -1.0, 2.0, 1.0, -1.0}));
  t.push_back(entry("round", [](const V& v) { return round(v[0]); }, unary_samples(arg),
                    {e("round", "bool tensor", "not implemented for bool tensors",
                       [] {
                         round(mask({1, 0}, {2}));
                       })})
                  .py("torch.round(x[0])")
                  .ref("torch.round(make((2, 3), 1) * 2)",
                       [] {
                         return round(make({2, 3}, 1) * 2);
                       },
                       {2, 3}, {-4.0, 1.0, -2.0, 3.0, 0.0, -3.0}));
  t.push_back(entry("trunc", [](const V& v) { return trunc(v[0]); }, unary_samples(arg),
                    {e("trunc", "bool tensor", "not implemented for bool tensors",
                       [] {
                         trunc(mask({1, 0}, {2}));
                       })})
                  .py("torch.trunc(x[0])")
                  .ref("torch.trunc(make((2, 3), 1))",
                       [] {
                         return trunc(make({2, 3}, 1));
                       },
                       {2, 3}, {-1.0, 0.0, -1.0, 1.0, 0.0, -1.0}));
  t.push_back(entry("frac", [](const V& v) { return frac(v[0]); }, unary_samples(arg),
                    {e("frac", "int64 tensor", "expected a floating-point tensor but got int64",
                       [] {
                         frac(indices({1, 2}, {2}));
                       }),
                     e("frac", "bool tensor", "expected a floating-point tensor but got bool",
                       [] {
                         frac(mask({1, 0}, {2}));
                       })})
                  .py("torch.frac(x[0])")
                  .ref("torch.frac(make((2, 3), 1))",
                       [] {
                         return frac(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.8839088159572359, 0.7410135435423859, -0.034064096957993284,
                        0.5908582625416283, 0.21578062204124993, -0.5592970184591284}));
  t.push_back(entry("reciprocal", [](const V& v) { return reciprocal(v[0]); }, unary_samples(arg),
                    {e("reciprocal", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { reciprocal(undefined()); })})
                  .py("torch.reciprocal(x[0])")
                  .ref("torch.reciprocal(make((2, 3), 1))",
                       [] {
                         return reciprocal(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.5308112534586173, 1.3495029999310668, -0.9670580411231732,
                        0.6285915116047824, 4.634336441058336, -0.6413146361224903}));
  t.push_back(entry("square", [](const V& v) { return square(v[0]); }, unary_samples(arg),
                    {e("square", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { square(undefined()); })})
                  .py("torch.square(x[0])")
                  .ref("torch.square(make((2, 3), 1))",
                       [] {
                         return square(make({2, 3}, 1));
                       },
                       {2, 3},
                       {3.5491124268413947, 0.5491010717132434, 1.06928855661755,
                        2.5308300114969686, 0.046561276848508755, 2.4314071917755276}));
  t.push_back(entry("round_decimals", [](const V& v) { return round(v[0], 2); }, unary_samples(arg),
                    {e("round", "int64 tensor", "expected a floating-point tensor but got int64",
                       [] {
                         round(indices({1, 2}, {2}), 1);
                       })})
                  .py("torch.round(x[0], decimals=2)")
                  .ref("torch.round(make((2, 3), 1), decimals=2)",
                       [] {
                         return round(make({2, 3}, 1), 2);
                       },
                       {2, 3}, {-1.88, 0.74, -1.03, 1.59, 0.22, -1.56})
                  .ref("torch.round(make((2, 3), 1) * 100, decimals=-1)",
                       [] {
                         return round(make({2, 3}, 1) * 100, -1);
                       },
                       {2, 3}, {-190.0, 70.0, -100.0, 160.0, 20.0, -160.0})
                  .ref("torch.round(torch.tensor([0.125, 1.25, 2.5, -0.5, 0.5, 1.5]), decimals=1)",
                       [] {
                         return round(tensor({0.125, 1.25, 2.5, -0.5, 0.5, 1.5}, kFloat64), 1);
                       },
                       {6}, {0.1, 1.2, 2.5, -0.5, 0.5, 1.5}));
  t.push_back(
      entry("atan2", [](const V& v) { return atan2(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return atan2(a, b); }),
            {e("atan2", "shapes (2, 3) and (4,) do not broadcast",
               "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
               "neither is 1",
               [] {
                 atan2(make({2, 3}, 1), make({4}, 2));
               }),
             e("atan2", "undefined tensor",
               "got an undefined tensor (a default-constructed Tensor, or one moved from)",
               [] { atan2(undefined(), make({2}, 1)); })})
          .py("torch.atan2(x[0], x[1])",
              {{"expanded inside fn", "torch.atan2(x[0].expand(4, 3), x[1])"}})
          .ref("torch.atan2(make((2, 3), 1), make((3,), 2))",
               [] {
                 return atan2(make({2, 3}, 1), make({3}, 2));
               },
               {2, 3},
               {-1.7763234676161763, 2.7446716514807816, -0.8786979264074805, 1.8128297960628936,
                3.020133021074127, -1.0682035868375883}));
  t.push_back(entry("remainder", [](const V& v) { return remainder(v[0], v[1]); },
                    binary_samples(
                        arg, arg, [](const Tensor& a, const Tensor& b) { return remainder(a, b); }),
                    {e("remainder", "shapes (2, 3) and (4,) do not broadcast",
                       "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at "
                       "dim 1 and neither is 1",
                       [] {
                         remainder(make({2, 3}, 1), make({4}, 2));
                       }),
                     e("remainder", "bool tensors", "not implemented for bool tensors",
                       [] {
                         remainder(mask({1, 0}, {2}), mask({1, 1}, {2}));
                       }),
                     e("remainder", "integer division by zero",
                       "integer division by zero (ZeroDivisionError)",
                       [] {
                         remainder(indices({1, 2}, {2}), indices({0, 1}, {2}));
                       })})
                  .py("torch.remainder(x[0], x[1])",
                      {{"expanded inside fn", "torch.remainder(x[0].expand(4, 3), x[1])"}})
                  .ref("torch.remainder(make((2, 3), 1), make((3,), 2))",
                       [] {
                         return remainder(make({2, 3}, 1), make({3}, 2));
                       },
                       {2, 3},
                       {-0.31294885030086306, -1.0268040883720857, 0.6801453582123067,
                        -0.37284169452883775, -1.5520370098732217, 0.1549124367111716}));
  t.push_back(
      entry("fmod", [](const V& v) { return fmod(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return fmod(a, b); }),
            {e("fmod", "shapes (2, 3) and (4,) do not broadcast",
               "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
               "neither is 1",
               [] {
                 fmod(make({2, 3}, 1), make({4}, 2));
               }),
             e("fmod", "bool tensors", "not implemented for bool tensors",
               [] {
                 fmod(mask({1, 0}, {2}), mask({1, 1}, {2}));
               }),
             e("fmod", "integer division by zero", "integer division by zero (ZeroDivisionError)",
               [] {
                 fmod(indices({1, 2}, {2}), indices({0, 1}, {2}));
               })})
          .py("torch.fmod(x[0], x[1])",
              {{"expanded inside fn", "torch.fmod(x[0].expand(4, 3), x[1])"}})
          .ref("torch.fmod(make((2, 3), 1), make((3,), 2))",
               [] {
                 return fmod(make({2, 3}, 1), make({3}, 2));
               },
               {2, 3},
               {-0.31294885030086306, 0.7410135435423859, -0.1769593693728433, 0.019898296885255462,
                0.21578062204124993, -0.7021922908739784}));
  t.push_back(
      entry("hypot", [](const V& v) { return hypot(v[0], v[1]); },
            binary_samples(arg, arg, [](const Tensor& a, const Tensor& b) { return hypot(a, b); }),
            {e("hypot", "shapes (2, 3) and (4,) do not broadcast",
               "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1 and "
               "neither is 1",
               [] {
                 hypot(make({2, 3}, 1), make({4}, 2));
               }),
             e("hypot", "int64 tensors", "expected floating-point tensors but got int64 and int64",
               [] {
                 hypot(indices({1, 2}, {2}), indices({2, 3}, {2}));
               })})
          .py("torch.hypot(x[0], x[1])",
              {{"expanded inside fn", "torch.hypot(x[0].expand(4, 3), x[1])"}})
          .ref("torch.hypot(make((2, 3), 1), make((3,), 2))",
               [] {
                 return hypot(make({2, 3}, 1), make({3}, 2));
               },
               {2, 3},
               {1.9244108521044399, 1.9168412170602274, 1.3430997992205806, 1.638619758318845,
                1.780938083302224, 1.7793357484815342}));
  t.push_back(entry("logaddexp", [](const V& v) { return logaddexp(v[0], v[1]); },
                    binary_samples(
                        arg, arg, [](const Tensor& a, const Tensor& b) { return logaddexp(a, b); }),
                    {e("logaddexp", "shapes (2, 3) and (4,) do not broadcast",
                       "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at "
                       "dim 1 and neither is 1",
                       [] {
                         logaddexp(make({2, 3}, 1), make({4}, 2));
                       }),
                     e("logaddexp", "int64 tensors",
                       "expected floating-point tensors but got int64 and int64",
                       [] {
                         logaddexp(indices({1, 2}, {2}), indices({2, 3}, {2}));
                       })})
                  .py("torch.logaddexp(x[0], x[1])",
                      {{"expanded inside fn", "torch.logaddexp(x[0].expand(4, 3), x[1])"}})
                  .ref("torch.logaddexp(make((2, 3), 1), make((3,), 2))",
                       [] {
                         return logaddexp(make({2, 3}, 1), make({3}, 2));
                       },
                       {2, 3},
                       {-0.18970985480423097, 0.81923608780381, 0.9976449196990307,
                        1.7197555911041165, 0.34467795060373807, 0.9425869126249069}));
  t.push_back(entry("xlogy", [](const V& v) { return xlogy(v[0], v[1]); },
                    binary_samples(arg_pos, arg_pos,
                                   [](const Tensor& a, const Tensor& b) { return xlogy(a, b); }),
                    {e("xlogy", "shapes (2, 3) and (4,) do not broadcast",
                       "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at "
                       "dim 1 and neither is 1",
                       [] {
                         xlogy(make({2, 3}, 1), make({4}, 2));
                       }),
                     e("xlogy", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { xlogy(undefined(), make({2}, 1)); })})
                  .py("torch.xlogy(x[0], x[1])",
                      {{"expanded inside fn", "torch.xlogy(x[0].expand(4, 3), x[1])"}})
                  .ref("torch.xlogy(make((2, 3), 1), make((3,), 2).abs())",
                       [] {
                         return xlogy(make({2, 3}, 1), abs(make({3}, 2)));
                       },
                       {2, 3},
                       {1.7607152814337808, 0.42218936123495077, 0.1594476843619713,
                        -1.4868280405753043, 0.122940105184818, 0.24043606151421576}));
  t.push_back(
      entry("remainder_scalar", [](const V& v) { return remainder(v[0], 1.5); },
            with_samples(unary_samples(arg),
                         {s("operator%", {arg({2, 3}, 7)}, [](const V& v) { return v[0] % -0.75; }),
                          s("scalar self", {arg_pos({2, 3}, 8)},
                            [](const V& v) { return remainder(2.5, v[0]); })}),
            {e("remainder", "integer division by zero",
               "integer division by zero (ZeroDivisionError)",
               [] {
                 remainder(indices({1, 2}, {2}), 0);
               })})
          .py("torch.remainder(x[0], 1.5)",
              {{"operator%", "x[0] % -0.75"},
               {"scalar self", "torch.remainder(torch.tensor(2.5, dtype=x[0].dtype), x[0])"}})
          .ref("torch.remainder(make((2, 3), 1), 1.5)",
               [] {
                 return remainder(make({2, 3}, 1), 1.5);
               },
               {2, 3},
               {1.116091184042764, 0.7410135435423859, 0.4659359030420067, 0.09085826254162832,
                0.21578062204124993, 1.4407029815408716})
          .ref("torch.remainder(torch.tensor([5., -5., 5., -5., 0., 7.5]), torch.tensor([3., 3., "
               "-3., -3., 2., 2.]))",
               [] {
                 return remainder(tensor({5., -5., 5., -5., 0., 7.5}, kFloat64),
                                  tensor({3., 3., -3., -3., 2., 2.}, kFloat64));
               },
               {6}, {2.0, 1.0, -1.0, -2.0, 0.0, 1.5}));
  t.push_back(
      entry("fmod_scalar", [](const V& v) { return fmod(v[0], 1.5); },
            with_samples(unary_samples(arg), {s("negative divisor", {arg({2, 3}, 7)},
                                                [](const V& v) { return fmod(v[0], -0.75); })}),
            {e("fmod", "integer division by zero", "integer division by zero (ZeroDivisionError)",
               [] {
                 fmod(indices({1, 2}, {2}), 0);
               })})
          .py("torch.fmod(x[0], 1.5)", {{"negative divisor", "torch.fmod(x[0], -0.75)"}})
          .ref("torch.fmod(make((2, 3), 1), 1.5)",
               [] {
                 return fmod(make({2, 3}, 1), 1.5);
               },
               {2, 3},
               {-0.3839088159572359, 0.7410135435423859, -1.0340640969579933, 0.09085826254162832,
                0.21578062204124993, -0.05929701845912838})
          .ref("torch.fmod(torch.tensor([5., -5., 5., -5., 0., 7.5]), torch.tensor([3., 3., -3., "
               "-3., 2., 2.]))",
               [] {
                 return fmod(tensor({5., -5., 5., -5., 0., 7.5}, kFloat64),
                             tensor({3., 3., -3., -3., 2., 2.}, kFloat64));
               },
               {6}, {2.0, -2.0, 2.0, -2.0, 0.0, 1.5}));
  t.push_back(
      entry("xlogy_scalar", [](const V& v) { return xlogy(v[0], 2.5); },
            with_samples(unary_samples(arg), {s("scalar self", {arg_pos({2, 3}, 8)},
                                                [](const V& v) { return xlogy(2.5, v[0]); })}),
            {e("xlogy", "undefined tensor",
               "got an undefined tensor (a default-constructed Tensor, or one moved from)",
               [] { xlogy(undefined(), 2.0); })})
          .py("torch.xlogy(x[0], 2.5)", {{"scalar self", "torch.xlogy(2.5, x[0])"}})
          .ref("torch.xlogy(make((2, 3), 1), 2.5)",
               [] {
                 return xlogy(make({2, 3}, 1), 2.5);
               },
               {2, 3},
               {-1.7262081877576287, 0.6789838421411138, -0.9475033482064269, 1.4576886816923154,
                0.19771778409443733, -1.4287694062531027})
          .ref("torch.xlogy(torch.tensor([0., 0., 0., 1., 2., -1.]), torch.tensor([0., -1., 2., "
               "1., 3., 5.]))",
               [] {
                 return xlogy(tensor({0., 0., 0., 1., 2., -1.}, kFloat64),
                              tensor({0., -1., 2., 1., 3., 5.}, kFloat64));
               },
               {6}, {0.0, 0.0, 0.0, 0.0, 2.1972245773362196, -1.6094379124341003}));

  // Activations (nn::functional's; the ops with a kernel are core's).
  t.push_back(entry("softplus", [](const V& v) { return softplus(v[0]); },
                    with_samples(unary_samples(arg),
                                 {s("beta 2, threshold 1", {arg({2, 3}, 6)},
                                    [](const V& v) { return softplus(v[0], 2.0, 1.0); })}),
                    {e("softplus", "int64 tensor", "expected a floating-point tensor but got int64",
                       [] {
                         softplus(indices({1, 2}, {2}));
                       })})
                  .py("F.softplus(x[0])",
                      {{"beta 2, threshold 1", "F.softplus(x[0], beta=2.0, threshold=1.0)"}})
                  .ref("F.softplus(make((2, 3), 1))",
                       [] {
                         return softplus(make({2, 3}, 1));
                       },
                       {2, 3},
                       {0.14149506859980523, 1.1307764039416357, 0.3042139109556578,
                        1.7763004992001816, 0.8068463946934925, 0.19085491467275834})
                  .ref("F.softplus(make((2, 3), 1) * 10, beta=2, threshold=5)",
                       [] {
                         return softplus(make({2, 3}, 1) * 10, 2.0, 5.0);
                       },
                       {2, 3},
                       {2.1654389327250243e-17, 7.410135435423859, 5.214388427163293e-10,
                        15.908582625416283, 2.1644411851670946, 1.4291841431239628e-14}));
  t.push_back(
      entry("elu", [](const V& v) { return elu(v[0]); },
            with_samples(unary_samples(arg), {s("alpha 0.5", {arg({2, 3}, 6)},
                                                [](const V& v) { return elu(v[0], 0.5); })}),
            {e("elu", "int64 tensor", "expected a floating-point tensor but got int64",
               [] {
                 elu(indices({1, 2}, {2}));
               })})
          .py("F.elu(x[0])", {{"alpha 0.5", "F.elu(x[0], alpha=0.5)"}})
          .ref("F.elu(make((2, 3), 1))",
               [] {
                 return elu(make({2, 3}, 1));
               },
               {2, 3},
               {-0.848005176700695, 0.7410135435423859, -0.6444410060020247, 1.5908582625416283,
                0.21578062204124993, -0.7897161550850988})
          .ref("F.elu(make((2, 3), 1), alpha=0.5)",
               [] {
                 return elu(make({2, 3}, 1), 0.5);
               },
               {2, 3},
               {-0.4240025883503475, 0.7410135435423859, -0.32222050300101235, 1.5908582625416283,
                0.21578062204124993, -0.3948580775425494}));
  t.push_back(entry("selu", [](const V& v) { return selu(v[0]); }, unary_samples(arg),
                    {e("selu", "int64 tensor", "expected a floating-point tensor but got int64",
                       [] {
                         selu(indices({1, 2}, {2}));
                       })})
                  .py("F.selu(x[0])")
                  .ref("F.selu(make((2, 3), 1))",
                       [] {
                         return selu(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-1.4908773421926549, 0.7785836618437681, -1.1329913078671798,
                        1.671516347195113, 0.22672091263092103, -1.388399451711637}));
  t.push_back(
      entry("celu", [](const V& v) { return celu(v[0]); },
            with_samples(unary_samples(arg), {s("alpha 2", {arg({2, 3}, 6)},
                                                [](const V& v) { return celu(v[0], 2.0); })}),
            {e("celu", "int64 tensor", "expected a floating-point tensor but got int64",
               [] {
                 celu(indices({1, 2}, {2}));
               }),
             e("celu", "alpha 0", "alpha cannot be 0 (ZeroDivisionError)",
               [] { celu(make({2}, 1), 0.0); })})
          .py("F.celu(x[0])", {{"alpha 2", "F.celu(x[0], alpha=2.0)"}})
          .ref("F.celu(make((2, 3), 1))",
               [] {
                 return celu(make({2, 3}, 1));
               },
               {2, 3},
               {-0.848005176700695, 0.7410135435423859, -0.6444410060020247, 1.5908582625416283,
                0.21578062204124993, -0.7897161550850988})
          .ref("F.celu(make((2, 3), 1), alpha=2.0)",
               [] {
                 return celu(make({2, 3}, 1), 2.0);
               },
               {2, 3},
               {-1.220269730485458, 0.7410135435423859, -0.807424645570813, 1.5908582625416283,
                0.21578062204124993, -1.0828656697846248}));
  t.push_back(
      entry("leaky_relu", [](const V& v) { return leaky_relu(v[0]); },
            with_samples(unary_samples(arg), {s("slope 0.2", {arg({2, 3}, 6)},
                                                [](const V& v) { return leaky_relu(v[0], 0.2); })}),
            {e("leaky_relu", "int64 tensor", "expected a floating-point tensor but got int64",
               [] {
                 leaky_relu(indices({1, 2}, {2}));
               })})
          .py("F.leaky_relu(x[0])", {{"slope 0.2", "F.leaky_relu(x[0], 0.2)"}})
          .ref("F.leaky_relu(make((2, 3), 1))",
               [] {
                 return leaky_relu(make({2, 3}, 1));
               },
               {2, 3},
               {-0.01883908815957236, 0.7410135435423859, -0.010340640969579934, 1.5908582625416283,
                0.21578062204124993, -0.015592970184591284})
          .ref("F.leaky_relu(make((2, 3), 1), 0.2)",
               [] {
                 return leaky_relu(make({2, 3}, 1), 0.2);
               },
               {2, 3},
               {-0.3767817631914472, 0.7410135435423859, -0.20681281939159868, 1.5908582625416283,
                0.21578062204124993, -0.3118594036918257}));
  t.push_back(entry("hardtanh", [](const V& v) { return hardtanh(v[0]); },
                    with_samples(unary_samples(arg),
                                 {s("min -0.5, max 1.5", {arg({2, 3}, 6)},
                                    [](const V& v) { return hardtanh(v[0], -0.5, 1.5); })}),
                    {e("hardtanh", "bool tensor", "bool inputs not supported for hardtanh",
                       [] {
                         hardtanh(mask({1, 0}, {2}));
                       })})
                  .py("F.hardtanh(x[0])", {{"min -0.5, max 1.5", "F.hardtanh(x[0], -0.5, 1.5)"}})
                  .ref("F.hardtanh(make((2, 3), 1))",
                       [] {
                         return hardtanh(make({2, 3}, 1));
                       },
                       {2, 3}, {-1.0, 0.7410135435423859, -1.0, 1.0, 0.21578062204124993, -1.0})
                  .ref("F.hardtanh(make((2, 3), 1), -0.5, 1.5)",
                       [] {
                         return hardtanh(make({2, 3}, 1), -0.5, 1.5);
                       },
                       {2, 3}, {-0.5, 0.7410135435423859, -0.5, 1.5, 0.21578062204124993, -0.5}));
  t.push_back(
      entry("hardsigmoid", [](const V& v) { return hardsigmoid(v[0]); }, unary_samples(arg_wide),
            {e("hardsigmoid", "int64 tensor", "expected a floating-point tensor but got int64",
               [] {
                 hardsigmoid(indices({1, 2}, {2}));
               })})
          .py("F.hardsigmoid(x[0])")
          .ref("F.hardsigmoid(make((2, 3), 1) * 2.5)",
               [] {
                 return hardsigmoid(make({2, 3}, 1) * 2.5);
               },
               {2, 3},
               {0.0, 0.8087556431426609, 0.06913995960083612, 1.0, 0.5899085925171875, 0.0}));
  t.push_back(
      entry("hardswish", [](const V& v) { return hardswish(v[0]); }, unary_samples(arg_wide),
            {e("hardswish", "int64 tensor", "expected a floating-point tensor but got int64",
               [] {
                 hardswish(indices({1, 2}, {2}));
               })})
          .py("F.hardswish(x[0])")
          .ref("F.hardswish(make((2, 3), 1) * 2.5)",
               [] {
                 return hardswish(make({2, 3}, 1) * 2.5);
               },
               {2, 3},
               {-0.0, 1.4982472124626112, -0.17873787472087685, 3.9771456563540704,
                0.3182271076020924, -0.0}));
  t.push_back(
      entry("log_sigmoid", [](const V& v) { return log_sigmoid(v[0]); }, unary_samples(arg_wide),
            {e("log_sigmoid", "int64 tensor", "expected a floating-point tensor but got int64",
               [] {
                 log_sigmoid(indices({1, 2}, {2}));
               })})
          .py("F.logsigmoid(x[0])")
          .ref("F.logsigmoid(make((2, 3), 1) * 2.5)",
               [] {
                 return log_sigmoid(make({2, 3}, 1) * 2.5);
               },
               {2, 3},
               {-4.718738550861554, -0.14569150499599248, -2.657838048489244, -0.01856563779951397,
                -0.4593647018590848, -3.918317211878779})
          .ref("F.logsigmoid(make((2, 3), 1) * 100)",
               [] {
                 return log_sigmoid(make({2, 3}, 1) * 100);
               },
               {2, 3},
               {-188.39088159572358, -6.579466839119692e-33, -103.40640969579933,
                -8.126499421874838e-70, -4.253698014259703e-10, -155.92970184591283}));
  t.push_back(entry("softsign", [](const V& v) { return F::softsign(v[0]); }, unary_samples(arg),
                    {e("softsign", "undefined tensor",
                       "got an undefined tensor (a default-constructed Tensor, or one moved from)",
                       [] { F::softsign(undefined()); })})
                  .py("F.softsign(x[0])")
                  .ref("F.softsign(make((2, 3), 1))",
                       [] {
                         return F::softsign(make({2, 3}, 1));
                       },
                       {2, 3},
                       {-0.6532483986779323, 0.4256219294162806, -0.5083734079493701,
                        0.6140275157240747, 0.17748318909620583, -0.6092677040658343}));
  t.push_back(
      entry(
          "softmin", [](const V& v) { return F::softmin(v[0], 1); },
          {s("2-D", {arg({2, 3}, 1)}), s("non-contiguous", {arg_t({3, 2}, 2)}),
           s("dim 0", {arg({3, 4}, 3)}, [](const V& v) { return F::softmin(v[0], 0); }),
           s("3-D, dim -1", {arg({2, 2, 3}, 4)}, [](const V& v) { return F::softmin(v[0], -1); })},
          {e("softmax", "dim 2 of a 2-D tensor", "dim 2 is out of range for a tensor with 2 dims",
             [] {
               F::softmin(make({2, 3}, 1), 2);
             }),
           e("softmin", "undefined tensor",
             "got an undefined tensor (a default-constructed Tensor, or one moved from)",
             [] { F::softmin(undefined(), 0); })})
          .py("F.softmin(x[0], 1)",
              {{"dim 0", "F.softmin(x[0], 0)"}, {"3-D, dim -1", "F.softmin(x[0], -1)"}})
          .ref("F.softmin(make((2, 3), 1), 1)",
               [] {
                 return F::softmin(make({2, 3}, 1), 1);
               },
               {2, 3},
               {0.666699251356167, 0.048299281617979396, 0.28500146702585344, 0.03534184287409485,
                0.13979055308361746, 0.8248676040422878}));

  // In-place forms (a few; they all run through detail::inplace_op). Not elu_ and hardtanh_: at a
  // NaN, PyTorch's gradient differs between its vectorised loop and its scalar tail (see math.cpp).
  t.push_back(inplace_unary("sin_", arg, [](Tensor& y) { y.sin_(); })
                  .py("on_clone(x, lambda y: y.sin_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.sin_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.sin_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.sin_()",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.sin_();
                         return y;
                       },
                       {2, 3},
                       {-0.95137946681467, 0.675036035200939, -0.8593841771864578,
                        0.9997987661165886, 0.21411001252658485, -0.9999338836824736}));
  t.push_back(inplace_unary("log1p_", arg_pos, [](Tensor& y) { y.log1p_(); })
                  .py("on_clone(x, lambda y: y.log1p_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.log1p_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.log1p_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1).abs(); y.log1p_()",
                       [] {
                         Tensor y = abs(make({2, 3}, 1));
                         y.log1p_();
                         return y;
                       },
                       {2, 3},
                       {1.0591466017097044, 0.554467439930054, 0.7100358098918935,
                        0.9519891963174104, 0.1953863577626718, 0.9397326186169901}));
  t.push_back(inplace_unary("round_", arg, [](Tensor& y) { y.round_(); })
                  .py("on_clone(x, lambda y: y.round_())",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.round_(), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.round_(), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1) * 2; y.round_()",
                       [] {
                         Tensor y = make({2, 3}, 1) * 2;
                         y.round_();
                         return y;
                       },
                       {2, 3}, {-4.0, 1.0, -2.0, 3.0, 0.0, -3.0}));
  t.push_back(
      inplace_unary("remainder_scalar_", arg, [](Tensor& y) { y.remainder_(1.5); })
          .py("on_clone(x, lambda y: y.remainder_(1.5))",
              {{"on a row view (CopySlices)",
                "on_clone(x, lambda y: y.remainder_(1.5), view=lambda h: h.narrow(0, 1, 2))"},
               {"on a transposed view (CopySlices)",
                "on_clone(x, lambda y: y.remainder_(1.5), view=lambda h: h.t())"}})
          .ref("y = make((2, 3), 1); y.remainder_(1.5)",
               [] {
                 Tensor y = make({2, 3}, 1);
                 y.remainder_(1.5);
                 return y;
               },
               {2, 3},
               {1.116091184042764, 0.7410135435423859, 0.4659359030420067, 0.09085826254162832,
                0.21578062204124993, 1.4407029815408716}));
  t.push_back(inplace_binary("atan2_", arg, arg, [](Tensor& y, const Tensor& o) { y.atan2_(o); })
                  .py("on_clone(x, lambda y: y.atan2_(x[1]))",
                      {{"on a row view (CopySlices)",
                        "on_clone(x, lambda y: y.atan2_(x[1]), view=lambda h: h.narrow(0, 1, 2))"},
                       {"on a transposed view (CopySlices)",
                        "on_clone(x, lambda y: y.atan2_(x[1]), view=lambda h: h.t())"}})
                  .ref("y = make((2, 3), 1); y.atan2_(make((3,), 2))",
                       [] {
                         Tensor y = make({2, 3}, 1);
                         y.atan2_(make({3}, 2));
                         return y;
                       },
                       {2, 3},
                       {-1.7763234676161763, 2.7446716514807816, -0.8786979264074805,
                        1.8128297960628936, 3.020133021074127, -1.0682035868375883}));
  t.push_back(
      inplace_binary("xlogy_", arg, arg_pos, [](Tensor& y, const Tensor& o) { y.xlogy_(o); })
          .py("on_clone(x, lambda y: y.xlogy_(x[1]))",
              {{"on a row view (CopySlices)",
                "on_clone(x, lambda y: y.xlogy_(x[1]), view=lambda h: h.narrow(0, 1, 2))"},
               {"on a transposed view (CopySlices)",
                "on_clone(x, lambda y: y.xlogy_(x[1]), view=lambda h: h.t())"}})
          .ref("y = make((2, 3), 1); y.xlogy_(make((3,), 2).abs())",
               [] {
                 Tensor y = make({2, 3}, 1);
                 y.xlogy_(abs(make({3}, 2)));
                 return y;
               },
               {2, 3},
               {1.7607152814337808, 0.42218936123495077, 0.1594476843619713, -1.4868280405753043,
                0.122940105184818, 0.24043606151421576}));
}

}  // namespace minigrad::testing
