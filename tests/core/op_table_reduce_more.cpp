// The op table's entries for minigrad/ops/reduce_more.h (prod, cumprod, median, nansum) and
// minigrad/ops/matrix.h (outer, cross, diag, trace). Reference values printed by PyTorch 1.13
// from the expression each carries.
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

void add_matrix(std::vector<OpInfo>& t) {
  t.push_back(entry("outer", [](const V& v) { return outer(v[0], v[1]); },
                    {s("vectors", {arg({2}, 1), arg({3}, 2)}),
                     s("strided", {arg({3, 2}, 3), arg({3}, 4)},
                       [](const V& v) { return v[0].select(1, 0).outer(v[1]); }),
                     s("empty", {arg({0}, 4), arg({3}, 5)})},
                    {e("outer", "2-D argument", "expected 1-D argument self, but got 2-D",
                       [] {
                         outer(make({2, 2}, 1), make({2}, 2));
                       })})
                  .py("torch.outer(x[0], x[1])", {{"strided", "x[0].select(1, 0).outer(x[1])"}})
                  .ref("torch.outer(make((2,), 1), make((3,), 2))",
                       [] { return outer(make({2}, 1), make({3}, 2)); }, {2, 3},
                       {0.7398863322039794, 3.3304072217683167, -1.6147071524962893,
                        -0.29102565272856346, -1.3099768077616518, 0.6351262113748034}));
  t.push_back(
      entry("cross", [](const V& v) { return cross(v[0], v[1], -1); },
            {s("rows", {arg({2, 3}, 1), arg({2, 3}, 2)}),
             s("dim 0", {arg({3, 2}, 3), arg({3, 2}, 4)},
               [](const V& v) { return v[0].cross(v[1], 0); }),
             s("broadcast", {arg({1, 3}, 5), arg({4, 3}, 6)}),
             s("default dim", {arg({2, 3, 4}, 7), arg({2, 3, 4}, 8)},
               [](const V& v) { return cross(v[0], v[1]); }),
             s("linalg_cross", {arg({2, 3}, 9), arg_t({3, 2}, 10)},
               [](const V& v) { return linalg_cross(v[0], v[1]); })},
            {e("cross", "dim of size 2", "inputs dimension 0 must have length 3. Got 2 and 2",
               [] {
                 cross(make({2, 3}, 1), make({2, 3}, 2), 0);
               }),
             e("cross", "no dim of size 3", "no dimension of size 3 in input",
               [] {
                 cross(make({2, 2}, 1), make({2, 2}, 2));
               })})
          .py("torch.linalg.cross(x[0], x[1], dim=-1)",
              {{"dim 0", "x[0].cross(x[1], dim=0)"},
               {"default dim", "torch.cross(x[0], x[1])"},
               {"linalg_cross", "torch.linalg.cross(x[0], x[1])"}})
          .ref("torch.linalg.cross(make((2, 3), 1), make((2, 3), 2))",
               [] {
                 return linalg_cross(make({2, 3}, 1), make({2, 3}, 2));
               },
               {2, 3},
               {-1.192910531757253, 2.0208254770571936, 3.6214328744968802, 2.7332526874742653,
                0.903431421321591, 2.913595397005508}));
  t.push_back(
      entry(
          "diag", [](const V& v) { return diag(v[0]); },
          {s("vector", {arg({3}, 1)}),
           s("vector, diagonal 1", {arg({2}, 2)}, [](const V& v) { return diag(v[0], 1); }),
           s("vector, diagonal -2", {arg({2}, 3)}, [](const V& v) { return v[0].diag(-2); }),
           s("matrix", {arg({3, 4}, 4)}),
           s("matrix, diagonal -1", {arg({3, 4}, 5)}, [](const V& v) { return diag(v[0], -1); }),
           s("non-contiguous matrix, diagonal 2", {arg_t({4, 3}, 6)},
             [](const V& v) { return diag(v[0], 2); }),
           s("matrix, empty diagonal", {arg({2, 3}, 7)}, [](const V& v) { return diag(v[0], 3); })},
          {e("diag", "3-D input", "expected a matrix or a vector (1 or 2 dims)",
             [] {
               diag(make({2, 2, 2}, 1));
             })})
          .py("torch.diag(x[0])", {{"vector, diagonal 1", "torch.diag(x[0], 1)"},
                                   {"vector, diagonal -2", "x[0].diag(-2)"},
                                   {"matrix, diagonal -1", "torch.diag(x[0], -1)"},
                                   {"non-contiguous matrix, diagonal 2", "torch.diag(x[0], 2)"},
                                   {"matrix, empty diagonal", "torch.diag(x[0], 3)"}})
          .ref("torch.diag(make((2,), 1), 1)", [] { return diag(make({2}, 1), 1); }, {3, 3},
               {0.0, -1.883908815957236, 0.0, 0.0, 0.0, 0.7410135435423859, 0.0, 0.0, 0.0})
          .ref("torch.diag(make((3, 4), 1), -1)",
               [] {
                 return diag(make({3, 4}, 1), -1);
               },
               {2}, {0.21578062204124993, 0.5403924195393581}));
  t.push_back(entry("trace", [](const V& v) { return trace(v[0]); },
                    {s("square", {arg({3, 3}, 1)}), s("wide", {arg({2, 4}, 2)}),
                     s("non-contiguous", {arg_t({4, 3}, 3)}), s("empty", {arg({0, 3}, 4)})},
                    {e("trace", "1-D input", "expected a matrix, but got a tensor with dim 1",
                       [] { trace(make({3}, 1)); })})
                  .py("torch.trace(x[0])")
                  .ref("torch.trace(make((3, 4), 1))",
                       [] {
                         return trace(make({3, 4}, 1));
                       },
                       {}, {-4.677891055377384}));
}

}  // namespace minigrad::testing
