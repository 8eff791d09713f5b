#pragma once
// The margin, ranking, embedding, multi-label, Poisson and CTC losses, and pairwise_distance, with
// torch.nn.functional's (PyTorch 1.13) semantics, each composed from public ops (so each has a
// gradient and a second derivative), and their modules as libtorch's.
//
//   F::margin_ranking_loss(x1, x2, y, /*margin=*/0.5)          // y in {1, -1}
//   F::triplet_margin_loss(anchor, positive, negative)          // margin 1, p 2
//   F::ctc_loss(log_probs, targets, input_lengths, target_lengths)
//   nn::MultiMarginLoss loss(nn::MultiMarginLossOptions().p(2).margin(0.5));
//
// `reduction` is "mean" (the default), "sum" or "none", as in minigrad/nn/loss.h; the modules take
// mg::kMean, mg::kSum or mg::kNone. Bad shapes, dtypes, targets or options throw
// minigrad::Error "[op] ...", with PyTorch's phrase where a user would look for it.
#include <cstdint>
#include <memory>
#include <string>

#include "minigrad/nn/loss.h"
#include "minigrad/nn/module.h"
#include "minigrad/nn/options.h"
#include "minigrad/tensor.h"

namespace minigrad::nn::functional {

/// The p-norm of x1 - x2 + eps over the last dim, as torch.nn.functional.pairwise_distance
/// (x1, x2 broadcast; 1-D inputs give a 0-dim result unless keepdim).
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6,
                         bool keepdim = false);

/// log(1 + exp(-target * input)), target in {1, -1} broadcast to the input's shape, as
/// torch.nn.functional.soft_margin_loss. target may not require grad (PyTorch's rule).
Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        const std::string& reduction = "mean");

/// -(y log sigmoid(x) + (1 - y) log sigmoid(-x)), times weight, averaged over the classes (the
/// last dim), then reduced over the samples, as torch.nn.functional.multilabel_soft_margin_loss.
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const Tensor& weight = Tensor(),
                                   const std::string& reduction = "mean");

/// max(0, -target * (input1 - input2) + margin), as torch.nn.functional.margin_ranking_loss; the
/// three tensors must have the same number of dims (they broadcast).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin = 0.0, const std::string& reduction = "mean");

/// input where target is 1, max(0, margin - input) where target is -1 (their sum elsewhere), as
/// torch.nn.functional.hinge_embedding_loss.
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            const std::string& reduction = "mean");

/// 1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1; x1, x2 are
/// [N, D] with target [N], or [D] with a 0-dim target, as
/// torch.nn.functional.cosine_embedding_loss.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin = 0.0, const std::string& reduction = "mean");

/// max(0, margin + d(anchor, positive) - d(anchor, negative)) with d = pairwise_distance(p, eps);
/// swap uses min(d(a, n), d(p, n)), as torch.nn.functional.triplet_margin_loss.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin = 1.0, double p = 2.0, double eps = 1e-6,
                           bool swap = false, const std::string& reduction = "mean");

/// The multi-class hinge loss, as torch.nn.functional.multi_margin_loss: for input [N, C] (or
/// [C]) and int64 class targets [N] (or 0-dim), sum over i != y of
/// weight[y] * max(0, margin - x[y] + x[i])^p / C; p is 1 or 2.
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, std::int64_t p = 1,
                         double margin = 1.0, const Tensor& weight = Tensor(),
                         const std::string& reduction = "mean");

/// The multi-label hinge loss, as torch.nn.functional.multilabel_margin_loss: target is int64 of
/// the input's shape ([N, C] or [C]) holding each sample's classes, ended by the first -1; sum
/// over its classes j and the classes i not among them of max(0, 1 - (x[j] - x[i])) / C.
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const std::string& reduction = "mean");

/// The negative log likelihood of a Poisson target, as torch.nn.functional.poisson_nll_loss:
/// exp(input) - target * input (log_input), else input - target * log(input + eps); full adds
/// Stirling's term target log target - target + log(2 pi target) / 2 where target > 1.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true,
                        bool full = false, double eps = 1e-8,
                        const std::string& reduction = "mean");

/// The connectionist temporal classification loss, as torch.nn.functional.ctc_loss:
/// log_probs [T, N, C] (or [T, C]) of log_softmax outputs, targets [N, S] padded (or the
/// targets concatenated, 1-D), int64 input_lengths [N] and target_lengths [N]. The forward
/// (alpha) recursion written with public ops, one time step at a time: its gradient is the
/// usual alpha-beta one, and it has a second derivative (PyTorch 1.13's has none). "mean" divides
/// each loss by its target length, then averages over the batch; an impossible alignment gives
/// inf (its inputs' gradient NaN, as PyTorch's), or 0 with zero_infinity (its gradient 0 too).
/// The gradient with respect to log_probs is the derivative, -gamma; PyTorch's is
/// exp(log_probs) - gamma, the same once log_softmax's backward has run (as it does in a model).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, std::int64_t blank = 0,
                const std::string& reduction = "mean", bool zero_infinity = false);

}  // namespace minigrad::nn::functional

namespace minigrad::nn {

/// The options of the losses below, as libtorch's (each also `F::XxxFuncOptions`); a reduction
/// tag constructs them: `nn::SoftMarginLoss(mg::kSum)`.
#define MG_LOSS_OPTIONS_CTORS(Options)                                 \
  using reduction_t = nn::reduction_t;                                 \
  Options() {}                                                         \
  Options(enumtype::kNone r) : reduction_(r) {} /* NOLINT: implicit */ \
  Options(enumtype::kMean r) : reduction_(r) {} /* NOLINT: implicit */ \
  Options(enumtype::kSum r) : reduction_(r) {}  /* NOLINT: implicit */

/// nn::SoftMarginLoss's options: its reduction.
struct SoftMarginLossOptions {
  MG_LOSS_OPTIONS_CTORS(SoftMarginLossOptions)
  MG_ARG(reduction_t, reduction) = kMean;
};
/// nn::MultiLabelSoftMarginLoss's options: weight (per class, optional) and reduction.
struct MultiLabelSoftMarginLossOptions {
  MG_LOSS_OPTIONS_CTORS(MultiLabelSoftMarginLossOptions)
  MG_ARG(Tensor, weight) = {};
  MG_ARG(reduction_t, reduction) = kMean;
};
/// nn::MarginRankingLoss's options: margin and reduction.
struct MarginRankingLossOptions {
  MG_LOSS_OPTIONS_CTORS(MarginRankingLossOptions)
  MG_ARG(double, margin) = 0.0;
  MG_ARG(reduction_t, reduction) = kMean;
};
/// nn::HingeEmbeddingLoss's options: margin and reduction.
struct HingeEmbeddingLossOptions {
  MG_LOSS_OPTIONS_CTORS(HingeEmbeddingLossOptions)
  MG_ARG(double, margin) = 1.0;
  MG_ARG(reduction_t, reduction) = kMean;
};
/// nn::CosineEmbeddingLoss's options: margin and reduction.
struct CosineEmbeddingLossOptions {
  MG_LOSS_OPTIONS_CTORS(CosineEmbeddingLossOptions)
  MG_ARG(double, margin) = 0.0;
  MG_ARG(reduction_t, reduction) = kMean;
};
/// nn::TripletMarginLoss's options: margin, p, eps, swap and reduction.
struct TripletMarginLossOptions {
  MG_LOSS_OPTIONS_CTORS(TripletMarginLossOptions)
  MG_ARG(double, margin) = 1.0;
  MG_ARG(double, p) = 2.0;
  MG_ARG(double, eps) = 1e-6;
  MG_ARG(bool, swap) = false;
  MG_ARG(reduction_t, reduction) = kMean;
};
/// nn::MultiMarginLoss's options: p (1 or 2), margin, weight (per class, optional), reduction.
struct MultiMarginLossOptions {
  MG_LOSS_OPTIONS_CTORS(MultiMarginLossOptions)
  MG_ARG(std::int64_t, p) = 1;
  MG_ARG(double, margin) = 1.0;
  MG_ARG(Tensor, weight) = {};
  MG_ARG(reduction_t, reduction) = kMean;
};
/// nn::MultiLabelMarginLoss's options: its reduction.
struct MultiLabelMarginLossOptions {
  MG_LOSS_OPTIONS_CTORS(MultiLabelMarginLossOptions)
  MG_ARG(reduction_t, reduction) = kMean;
};
/// nn::PoissonNLLLoss's options: log_input, full, eps and reduction.
struct PoissonNLLLossOptions {
  MG_LOSS_OPTIONS_CTORS(PoissonNLLLossOptions)
  MG_ARG(bool, log_input) = true;
  MG_ARG(bool, full) = false;
  MG_ARG(double, eps) = 1e-8;
  MG_ARG(reduction_t, reduction) = kMean;
};
/// nn::CTCLoss's options: blank, reduction and zero_infinity.
struct CTCLossOptions {
  MG_LOSS_OPTIONS_CTORS(CTCLossOptions)
  MG_ARG(std::int64_t, blank) = 0;
  MG_ARG(reduction_t, reduction) = kMean;
  MG_ARG(bool, zero_infinity) = false;
};
/// nn::PairwiseDistance's options: p, eps and keepdim.
struct PairwiseDistanceOptions {
  MG_ARG(double, p) = 2.0;
  MG_ARG(double, eps) = 1e-6;
  MG_ARG(bool, keepdim) = false;
};

#undef MG_LOSS_OPTIONS_CTORS

/// A two-tensor loss module over its options: forward(input, target) calls the functional form.
#define MG_DECLARE_LOSS2(Name)                                                  \
  class Name##Impl : public CopyCloneable<Name##Impl, LossModule> {             \
   public:                                                                      \
    explicit Name##Impl(const Name##Options& options_ = {});                    \
    /** The loss of input against target (the functional form with options). */ \
    Tensor forward(const Tensor& input, const Tensor& target) const override;   \
    Name##Options options;                                                      \
  };                                                                            \
  MG_MODULE(Name)

/// A three-tensor loss module: forward(a, b, c) calls the functional form.
/// Its call operator (nn::Cloneable's) runs forward through the hooks.
#define MG_DECLARE_LOSS3(Name)                                               \
  class Name##Impl : public CopyCloneable<Name##Impl> {                      \
   public:                                                                   \
    explicit Name##Impl(const Name##Options& options_ = {});                 \
    /** The loss (the functional form with options). */                      \
    Tensor forward(const Tensor& a, const Tensor& b, const Tensor& c) const; \
    Name##Options options;                                                   \
  };                                                                         \
  MG_MODULE(Name)

/// A two-tensor loss module whose options hold a weight, registered as the buffer "weight".
#define MG_DECLARE_WEIGHTED_LOSS2(Name)                                               \
  class Name##Impl : public Cloneable<Name##Impl, LossModule> {                       \
   public:                                                                            \
    explicit Name##Impl(const Name##Options& options_ = {});                          \
    /** A copy with its own copy of the options' weight (clone(), Note [Cloning]). */ \
    Name##Impl(const Name##Impl& other);                                              \
    /** Registers the options' weight as the buffer "weight" (libtorch's reset()). */ \
    void reset() override;                                                            \
    /** The loss of input against target (the functional form with options). */       \
    Tensor forward(const Tensor& input, const Tensor& target) const override;         \
    Name##Options options;                                                            \
  };                                                                                  \
  MG_MODULE(Name)

/// torch.nn.SoftMarginLoss: functional::soft_margin_loss.
MG_DECLARE_LOSS2(SoftMarginLoss);
/// torch.nn.MultiLabelSoftMarginLoss (a given weight is the buffer "weight", as PyTorch's).
MG_DECLARE_WEIGHTED_LOSS2(MultiLabelSoftMarginLoss);
/// torch.nn.HingeEmbeddingLoss: functional::hinge_embedding_loss.
MG_DECLARE_LOSS2(HingeEmbeddingLoss);
/// torch.nn.MultiMarginLoss (a given weight is the buffer "weight", as PyTorch's).
MG_DECLARE_WEIGHTED_LOSS2(MultiMarginLoss);
/// torch.nn.MultiLabelMarginLoss: functional::multilabel_margin_loss.
MG_DECLARE_LOSS2(MultiLabelMarginLoss);
/// torch.nn.PoissonNLLLoss: forward(log_input, target).
MG_DECLARE_LOSS2(PoissonNLLLoss);
/// torch.nn.MarginRankingLoss: forward(input1, input2, target).
MG_DECLARE_LOSS3(MarginRankingLoss);
/// torch.nn.CosineEmbeddingLoss: forward(input1, input2, target).
MG_DECLARE_LOSS3(CosineEmbeddingLoss);
/// torch.nn.TripletMarginLoss: forward(anchor, positive, negative).
MG_DECLARE_LOSS3(TripletMarginLoss);

#undef MG_DECLARE_LOSS2
#undef MG_DECLARE_LOSS3
#undef MG_DECLARE_WEIGHTED_LOSS2

/// torch.nn.CTCLoss: forward(log_probs, targets, input_lengths, target_lengths).
/// Its call operator (nn::Cloneable's) runs forward through the hooks.
class CTCLossImpl : public CopyCloneable<CTCLossImpl> {
 public:
  explicit CTCLossImpl(const CTCLossOptions& options_ = {});
  /// functional::ctc_loss with the options.
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths) const;
  CTCLossOptions options;
};
MG_MODULE(CTCLoss);

/// torch.nn.PairwiseDistance: forward(x1, x2) = functional::pairwise_distance.
/// Its call operator (nn::Cloneable's) runs forward through the hooks.
class PairwiseDistanceImpl : public CopyCloneable<PairwiseDistanceImpl> {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options_ = {});
  /// pairwise_distance(x1, x2, p, eps, keepdim).
  Tensor forward(const Tensor& x1, const Tensor& x2) const;
  PairwiseDistanceOptions options;
};
MG_MODULE(PairwiseDistance);

}  // namespace minigrad::nn

namespace minigrad::nn::functional {

// libtorch's functional options and overloads: F::margin_ranking_loss(x1, x2, y,
// F::MarginRankingLossFuncOptions().margin(0.5)).
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
using CTCLossFuncOptions = CTCLossOptions;
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;

/// soft_margin_loss with options (libtorch's overload).
Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        const SoftMarginLossFuncOptions& options);
/// multilabel_soft_margin_loss with options (libtorch's overload).
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options);
/// margin_ranking_loss with options (libtorch's overload).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options);
/// hinge_embedding_loss with options (libtorch's overload).
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                            const HingeEmbeddingLossFuncOptions& options);
/// cosine_embedding_loss with options (libtorch's overload).
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options);
/// triplet_margin_loss with options (libtorch's overload).
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options);
/// multi_margin_loss with options (libtorch's overload).
Tensor multi_margin_loss(const Tensor& input, const Tensor& target,
                         const MultiMarginLossFuncOptions& options);
/// multilabel_margin_loss with options (libtorch's overload).
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options);
/// poisson_nll_loss with options (libtorch's overload).
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target,
                        const PoissonNLLLossFuncOptions& options);
/// ctc_loss with options (libtorch's overload).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options);
/// pairwise_distance with options (libtorch's overload).
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2,
                         const PairwiseDistanceFuncOptions& options);

}  // namespace minigrad::nn::functional
