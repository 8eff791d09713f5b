// The op table's entries for minigrad/ops/reduce_more.h (prod, cumprod, median, nansum).
// Reference values printed by PyTorch 1.13 from the expression each carries.
#include <cmath>
#include <vector>

#include "core/op_table.h"
#include "core/op_table_builders.h"

namespace minigrad::testing {

namespace {

/// make(shape, seed) with zeros where zero_at is non-zero, as a leaf (prod's and cumprod's
/// gradients with zeros in the input).
Tensor arg_zeros(const Shape& shape, std::int64_t seed, const std::vector<double>& zero_at) {
  return masked_fill(make(shape, seed), mask(zero_at, shape), 0).requires_grad_();
}

/// make(shape, seed) with NaN where nan_at is non-zero, as a leaf (nansum).
Tensor arg_nan(const Shape& shape, std::int64_t seed, const std::vector<double>& nan_at) {
  return masked_fill(make(shape, seed), mask(nan_at, shape), NAN).requires_grad_();
}

const char* const kUndefined =
    "got an undefined tensor (a default-constructed Tensor, or one moved from)";
const char* const kDim2 =
    "dim 2 is out of range for a tensor with 2 dims (expected a dim in [-2, 1])";

}  // namespace

void add_reduce_more(std::vector<OpInfo>& t) {
  t.push_back(entry("prod", [](const V& v) { return prod(v[0]); },
                    {s("2-D", {arg({2, 3}, 1)}), s("non-contiguous", {arg_t({3, 2}, 2)}),
                     s("0-dim", {arg({}, 3)}), s("empty", {arg({0, 2}, 4)}),
                     s("one zero", {arg_zeros({2, 3}, 5, {0, 0, 1, 0, 0, 0})}),
                     s("two zeros", {arg_zeros({2, 2}, 6, {1, 0, 0, 1})})},
                    {e("prod", "undefined tensor", kUndefined, [] { prod(undefined()); })})
                  .py("torch.prod(x[0])")
                  .ref("torch.prod(make((2, 3), 1))",
                       [] {
                         return prod(make({2, 3}, 1));
                       },
                       {}, {-0.7726917241411884}));
  t.push_back(
      entry(
          "prod_dim", [](const V& v) { return prod(v[0], 1); },
          {s("dim 1", {arg({2, 3}, 1)}),
           s("dim 0 keepdim", {arg({3, 2}, 2)}, [](const V& v) { return prod(v[0], 0, true); }),
           s("negative dim of 3-D", {arg({2, 3, 2}, 3)}, [](const V& v) { return v[0].prod(-2); }),
           s("non-contiguous", {arg_t({3, 2}, 4)}),
           s("0-dim", {arg({}, 5)}, [](const V& v) { return prod(v[0], 0); }),
           s("zeros in rows", {arg_zeros({3, 3}, 6, {1, 0, 0, 0, 1, 1, 0, 0, 0})}),
           s("empty", {arg({2, 0}, 7)})},
          {e("prod", "dim out of range", kDim2,
             [] {
               prod(make({2, 3}, 1), 2);
             })})
          .py("torch.prod(x[0], 1)", {{"dim 0 keepdim", "torch.prod(x[0], 0, True)"},
                                      {"negative dim of 3-D", "x[0].prod(-2)"},
                                      {"0-dim", "torch.prod(x[0], 0)"}})
          .ref("torch.prod(make((2, 3), 1), 1)",
               [] {
                 return prod(make({2, 3}, 1), 1);
               },
               {2}, {1.4435554931137837, -0.5352698443718806}));
  t.push_back(
      entry("cumprod", [](const V& v) { return cumprod(v[0], 1); },
            {s("dim 1", {arg({2, 3}, 1)}),
             s("dim 0 of 3-D", {arg({3, 2, 2}, 2)}, [](const V& v) { return cumprod(v[0], 0); }),
             s("non-contiguous", {arg_t({3, 2}, 3)}),
             s("negative dim", {arg({2, 4}, 4)}, [](const V& v) { return v[0].cumprod(-1); }),
             s("0-dim", {arg({}, 5)}, [](const V& v) { return cumprod(v[0], 0); }),
             s("zeros", {arg_zeros({2, 4}, 6, {0, 1, 0, 1, 1, 0, 0, 0})}),
             s("empty", {arg({0, 3}, 7)})},
            {e("cumprod", "dim out of range", kDim2,
               [] {
                 cumprod(make({2, 3}, 1), 2);
               })})
          .py("torch.cumprod(x[0], 1)", {{"dim 0 of 3-D", "torch.cumprod(x[0], 0)"},
                                         {"negative dim", "x[0].cumprod(-1)"},
                                         {"0-dim", "torch.cumprod(x[0], 0)"}})
          .ref("torch.cumprod(make((2, 3), 1), 1)",
               [] {
                 return cumprod(make({2, 3}, 1), 1);
               },
               {2, 3},
               {-1.883908815957236, -1.396001947423212, 1.4435554931137837, 1.5908582625416283,
                0.34327638547069467, -0.5352698443718806}));
  t.push_back(entry("median", [](const V& v) { return median(v[0]); },
                    {s("2-D, even count", {arg({2, 3}, 1)}), s("odd count", {arg({5}, 2)}),
                     s("non-contiguous", {arg_t({3, 3}, 3)}), s("0-dim", {arg({}, 4)})},
                    {e("median", "undefined tensor", kUndefined, [] { median(undefined()); })})
                  .py("torch.median(x[0])")
                  .ref("torch.median(make((2, 3), 1))",
                       [] {
                         return median(make({2, 3}, 1));
                       },
                       {}, {-1.0340640969579933}));
  auto values = [](std::tuple<Tensor, Tensor> r) { return std::get<0>(r); };
  t.push_back(
      entry("median_dim", [values](const V& v) { return values(median(v[0], 1)); },
            {s("dim 1, even", {arg({2, 4}, 1)}),
             s("dim 0 keepdim", {arg({3, 4}, 2)},
               [values](const V& v) { return values(median(v[0], 0, true)); }),
             s("negative dim of 3-D", {arg({2, 3, 4}, 3)},
               [values](const V& v) { return values(v[0].median(-1)); }),
             s("non-contiguous", {arg_t({4, 3}, 4)}), s("size-1 dim", {arg({3, 1}, 5)}),
             s("0-dim", {arg({}, 6)}, [values](const V& v) { return values(median(v[0], 0)); })},
            {e("median", "dim out of range", kDim2,
               [] {
                 median(make({2, 3}, 1), 2);
               }),
             e("median", "zero-size dim", "expected reduction dim 0 to have non-zero size",
               [] {
                 median(make({0, 3}, 1), 0);
               })})
          .py("torch.median(x[0], 1)[0]", {{"dim 0 keepdim", "torch.median(x[0], 0, True)[0]"},
                                           {"negative dim of 3-D", "x[0].median(-1)[0]"},
                                           {"0-dim", "torch.median(x[0], 0)[0]"}})
          .ref("torch.median(make((2, 4), 1), 1).values",
               [values] {
                 return values(median(make({2, 4}, 1), 1));
               },
               {2}, {-1.0340640969579933, -0.7094522994598851}));
  t.push_back(
      entry("nansum", [](const V& v) { return nansum(v[0]); },
            {s("all", {arg({2, 3}, 1)}), s("with NaN", {arg_nan({2, 3}, 2, {0, 1, 0, 0, 0, 1})}),
             s("dim 1 with NaN", {arg_nan({2, 3}, 3, {1, 0, 0, 0, 0, 1})},
               [](const V& v) { return nansum(v[0], {1}); }),
             s("dims (0, 2) keepdim", {arg_nan({2, 3, 2}, 4, {0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0})},
               [](const V& v) {
                 return nansum(v[0], {0, 2}, true);
               }),
             s("non-contiguous", {arg_t({3, 2}, 5)}), s("0-dim", {arg({}, 6)}),
             s("empty", {arg({0, 2}, 7)})},
            {e("nansum", "dim out of range", kDim2,
               [] {
                 nansum(make({2, 3}, 1), {2});
               }),
             e("nansum", "repeated dim", "dim 0 appears multiple times in the list of dims (0, 0)",
               [] {
                 nansum(make({2, 3}, 1), {0, 0});
               })})
          .py("torch.nansum(x[0])", {{"dim 1 with NaN", "torch.nansum(x[0], 1)"},
                                     {"dims (0, 2) keepdim", "torch.nansum(x[0], (0, 2), True)"}})
          .ref("torch.nansum(make((2, 3), 1).masked_fill(torch.tensor([[0, 1, 0], [0, 0, 1]], "
               "dtype=torch.bool), math.nan), 1)",
               [] {
                 return nansum(masked_fill(make({2, 3}, 1), mask({0, 1, 0, 0, 0, 1}, {2, 3}), NAN),
                               {1});
               },
               {2}, {-2.9179729129152294, 1.8066388845828782}));
}

}  // namespace minigrad::testing
