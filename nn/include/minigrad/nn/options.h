#pragma once
// MG_ARG: a chained option of a module's options struct, as libtorch's TORCH_ARG (defined in
// minigrad/arg.h, shared with the optimizers' options):
//
//   struct FlattenOptions {
//     MG_ARG(std::int64_t, start_dim) = 1;
//   };
//   FlattenOptions().start_dim(2).start_dim()  // 2
//
// It also has the losses' reductions: ATen's codes mg::Reduction::None, Mean and Sum, the one
// list every loss reads, and the tags a loss module's options take, libtorch's torch::kNone, kMean
// and kSum, which map to them.
#include <string>
#include <variant>

#include "minigrad/arg.h"

namespace minigrad {

namespace Reduction {
/// ATen's reduction codes, as at::Reduction::Reduction: what every loss reduces by. The int64
/// `reduction` argument of the ATen-level losses (`mg::binary_cross_entropy(x, t, {},
/// mg::Reduction::Sum)`); the tags kNone, kMean, kSum and the functional losses' names "none",
/// "mean", "sum" map to them.
enum Reduction { None, Mean, Sum, END };
}  // namespace Reduction

/// The tag types of libtorch's reductions (torch::enumtype::kMean, ...): the values kNone, kMean
/// and kSum select a loss module's reduction, as in libtorch:
/// `nn::MSELoss(mg::kSum)`, `nn::CrossEntropyLossOptions().reduction(mg::kNone)`.
namespace enumtype {
struct kNone {};
struct kMean {};
struct kSum {};
}  // namespace enumtype

/// No reduction: the loss of every element (Python's reduction="none").
inline constexpr enumtype::kNone kNone{};
/// The mean of the losses (Python's reduction="mean", the default).
inline constexpr enumtype::kMean kMean{};
/// The sum of the losses (Python's reduction="sum").
inline constexpr enumtype::kSum kSum{};

}  // namespace minigrad

namespace minigrad::nn {

/// A loss module's reduction, as libtorch's `reduction_t` (each loss options struct also names it
/// `XxxLossOptions::reduction_t`).
using reduction_t = std::variant<enumtype::kNone, enumtype::kMean, enumtype::kSum>;

/// The reduction as the functional losses take it: "none", "mean" or "sum".
std::string reduction_name(const reduction_t& reduction);

}  // namespace minigrad::nn

namespace minigrad::enumtype {

/// The tag's ATen code, as libtorch's torch::enumtype::reduction_get_enum (kMean ->
/// Reduction::Mean): reduction_t lists the tags in the codes' order.
inline Reduction::Reduction reduction_get_enum(const nn::reduction_t& reduction) {
  return static_cast<Reduction::Reduction>(reduction.index());
}

}  // namespace minigrad::enumtype
