// The margin, ranking, embedding, multi-label, Poisson and CTC losses and pairwise_distance,
// composed from public ops as PyTorch 1.13 composes or computes them (aten/src/ATen/native/
// Loss.cpp, LossMultiMargin.cpp, LossMultiLabelMargin.cpp, LossCTC.cpp, Distance.cpp): where its
// kernel counts a term only when z > 0, the composition keeps where(z > 0, z, 0) (a NaN term and
// its gradient count as 0, as there); where it calls clamp_min, clamp.
#include "minigrad/nn/loss_more.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "loss_common.h"
#include "minigrad/autograd.h"
#include "minigrad/custom_function.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/index.h"
#include "minigrad/ops/math.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/shape.h"
#include "minigrad/profiler.h"

namespace minigrad::nn::functional {

using autograd::AutogradContext;
using nn::detail::check_defined;
using nn::detail::check_floating;
using nn::detail::parse_reduction;
using nn::detail::reduce;

namespace {

/// An int64 tensor, or throws naming op and which argument.
void check_int64(const Tensor& t, const char* op, const char* name) {
  check_defined(t, op, name);
  MG_CHECK(t.dtype() == kInt64, op, name, " must be int64 (class indices), got ",
           dtype_name(t.dtype()));
}

/// PyTorch's rule for a target its derivative formula does not cover.
void check_no_grad(const Tensor& t, const char* op, const char* name) {
  MG_CHECK(!t.requires_grad(), op, "the function '", op,
           "' is not differentiable with respect to argument '", name,
           "'. This input cannot have requires_grad True (detach() it).");
}

/// A loss over samples [N, C] or one sample [C]: the number of samples and classes.
struct Batch {
  std::int64_t n, c;
  bool single;
};
Batch vector_or_matrix(const Tensor& input, const char* op) {
  MG_CHECK((input.dim() == 1 || input.dim() == 2) && input.numel() > 0, op,
           "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
           input.shape());
  if (input.dim() == 1) return {1, input.size(0), true};
  return {input.size(0), input.size(1), false};
}

/// The identity on the losses, with an extra edge to log_probs whose gradient is NaN for the
/// samples where `impossible` holds: PyTorch's gradient of an infinite CTC loss (an impossible
/// alignment, without zero_infinity) is NaN in all of that sample's log_probs.
struct CtcInfiniteFn : autograd::Function<CtcInfiniteFn> {
  static constexpr const char* node_name = "CtcLossInfiniteBackward";
  static Tensor forward(AutogradContext* ctx, const Tensor& loss, const Tensor& lp,
                        const Tensor& impossible) {
    ctx->save_for_backward({lp, impossible});
    return loss.clone();
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &lp = saved[0], &impossible = saved[1];
    Tensor nan = where(impossible.reshape({1, lp.size(1), 1}),
                       std::numeric_limits<double>::quiet_NaN(), zeros(lp.shape(), lp.dtype()));
    return {grads[0], nan, Tensor()};
  }
};

}  // namespace

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  MG_PROFILE_OP("pairwise_distance");
  const char* op = "pairwise_distance";
  check_floating(x1, op, "x1");
  check_floating(x2, op, "x2");
  MG_CHECK(p >= 0, op, "p must be non-negative, got ", p);
  const std::int64_t dims = std::max(x1.dim(), x2.dim());
  MG_CHECK(dims >= 1, op, "expected inputs with at least 1 dim, got shapes ", x1.shape(), " and ",
           x2.shape());
  return norm(x1 - x2 + eps, p, {dims - 1}, keepdim);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  MG_PROFILE_OP("soft_margin_loss");
  const char* op = "soft_margin_loss";
  check_floating(input, op, "input");
  check_floating(target, op, "target");
  check_no_grad(target, op, "target");
  Reduction::Reduction red = parse_reduction(reduction, op);
  MG_CHECK(broadcast_shapes(input.shape(), target.shape(), op) == input.shape(), op,
           "target of shape ", target.shape(), " does not broadcast to the input's shape ",
           input.shape());
  return reduce(log1p(exp(-input * target)), red);
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   const std::string& reduction) {
  MG_PROFILE_OP("multilabel_soft_margin_loss");
  const char* op = "multilabel_soft_margin_loss";
  check_floating(input, op, "input");
  check_floating(target, op, "target");
  Reduction::Reduction red = parse_reduction(reduction, op);
  MG_CHECK(input.dim() >= 1, op, "input must have a class dim, got a 0-dim tensor");
  Tensor loss = -(target * log_sigmoid(input) + (1.0 - target) * log_sigmoid(-input));
  if (weight.defined()) {
    check_floating(weight, op, "weight");
    loss = loss * weight;
  }
  const std::int64_t class_dim = input.dim() - 1;
  return reduce(loss.sum({class_dim}) / static_cast<double>(input.size(class_dim)), red);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin, const std::string& reduction) {
  MG_PROFILE_OP("margin_ranking_loss");
  const char* op = "margin_ranking_loss";
  check_floating(input1, op, "input1");
  check_floating(input2, op, "input2");
  check_floating(target, op, "target");
  Reduction::Reduction red = parse_reduction(reduction, op);
  MG_CHECK(input1.dim() == input2.dim() && input1.dim() == target.dim(), op,
           "All input tensors should have same dimension but got sizes: input1: ", input1.shape(),
           ", input2: ", input2.shape(), ", target: ", target.shape());
  return reduce(clamp(-target * (input1 - input2) + margin, 0.0), red);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin,
                            const std::string& reduction) {
  MG_PROFILE_OP("hinge_embedding_loss");
  const char* op = "hinge_embedding_loss";
  check_floating(input, op, "input");
  check_floating(target, op, "target");
  Reduction::Reduction red = parse_reduction(reduction, op);
  Tensor margin_clamp = clamp(margin - input, 0.0);
  Tensor output = where(target != 1.0, margin_clamp, 0.0) + where(target != -1.0, input, 0.0);
  return reduce(output, red);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, const std::string& reduction) {
  MG_PROFILE_OP("cosine_embedding_loss");
  const char* op = "cosine_embedding_loss";
  check_floating(input1, op, "input1");
  check_floating(input2, op, "input2");
  check_floating(target, op, "target");
  Reduction::Reduction red = parse_reduction(reduction, op);
  const std::int64_t d = target.dim();
  MG_CHECK(d == 0 || d == 1, op, "0D or 1D target tensor expected, multi-target not supported");
  MG_CHECK(input1.dim() == d + 1 && input2.dim() == d + 1, op, d, "D target tensor expects ", d + 1,
           "D input tensors, but found inputs with sizes ", input1.shape(), " and ", input2.shape(),
           ".");
  constexpr double kEpsilon = 1e-12;  // PyTorch's EPSILON
  Tensor prod_sum = (input1 * input2).sum({d});
  Tensor mag_square1 = (input1 * input1).sum({d}) + kEpsilon;
  Tensor mag_square2 = (input2 * input2).sum({d}) + kEpsilon;
  Tensor cos = prod_sum / sqrt(mag_square1 * mag_square2);
  Tensor output =
      where(target == 1.0, 1.0 - cos, 0.0) + where(target == -1.0, clamp(cos - margin, 0.0), 0.0);
  return reduce(output, red);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap,
                           const std::string& reduction) {
  MG_PROFILE_OP("triplet_margin_loss");
  const char* op = "triplet_margin_loss";
  check_floating(anchor, op, "anchor");
  check_floating(positive, op, "positive");
  check_floating(negative, op, "negative");
  Reduction::Reduction red = parse_reduction(reduction, op);
  MG_CHECK(anchor.dim() == positive.dim() && positive.dim() == negative.dim(), op,
           "All inputs should have same dimension but got ", anchor.dim(), "D, ", positive.dim(),
           "D and ", negative.dim(), "D inputs.");
  Tensor dist_pos = pairwise_distance(anchor, positive, p, eps);
  Tensor dist_neg = pairwise_distance(anchor, negative, p, eps);
  if (swap) dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps));
  return reduce(clamp(margin + dist_pos - dist_neg, 0.0), red);
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, std::int64_t p, double margin,
                         const Tensor& weight, const std::string& reduction) {
  MG_PROFILE_OP("multi_margin_loss");
  const char* op = "multi_margin_loss";
  check_floating(input, op, "input");
  check_int64(target, op, "target");
  Reduction::Reduction red = parse_reduction(reduction, op);
  MG_CHECK(p == 1 || p == 2, op, "only p == 1 and p == 2 supported, got p = ", p);
  const Batch b = vector_or_matrix(input, op);
  MG_CHECK(target.numel() == b.n && target.dim() <= 1 && (target.dim() == 1 || b.single), op,
           "inconsistent target size, expected ", b.n, " class indices (one per sample) but got",
           " shape ", target.shape());
  for (std::int64_t y : target.to_vector<std::int64_t>())
    MG_CHECK(y >= 0 && y < b.c, op, "target out of range: class ", y, " for ", b.c, " classes");
  Tensor x = b.single ? input.unsqueeze(0) : input;
  Tensor y = target.reshape({b.n, 1});
  // PyTorch's kernel counts a term when z > 0 (so a NaN term counts as 0, as here).
  Tensor z = margin - gather(x, 1, y) + x;
  z = where(z > 0.0, z, 0.0);
  if (p == 2) z = z * z;
  // The target's own class is not a term.
  z = where(arange(b.c, TensorOptions().dtype(kInt64)).unsqueeze(0) == y, 0.0, z);
  if (weight.defined()) {
    check_floating(weight, op, "weight");
    check_no_grad(weight, op, "weight");
    MG_CHECK(weight.dtype() == input.dtype(), op, "weight must have the input's dtype (",
             dtype_name(input.dtype()), "), got ", dtype_name(weight.dtype()));
    MG_CHECK(weight.dim() == 1 && weight.numel() == b.c, op, "weight must be 1-D with ", b.c,
             " elements (one per class), got shape ", weight.shape());
    z = z * index_select(weight, 0, y.reshape({b.n})).unsqueeze(1);
  }
  Tensor loss = z.sum({1}) / static_cast<double>(b.c);
  return reduce(b.single ? loss.reshape({}) : loss, red);
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const std::string& reduction) {
  MG_PROFILE_OP("multilabel_margin_loss");
  const char* op = "multilabel_margin_loss";
  check_floating(input, op, "input");
  check_int64(target, op, "target");
  Reduction::Reduction red = parse_reduction(reduction, op);
  const Batch b = vector_or_matrix(input, op);
  MG_CHECK(target.shape() == input.shape(), op, "inconsistent size ", target.shape(),
           " for argument #2 'target' (it must have the input's shape ", input.shape(), ")");
  // count[n, j]: how often class j is among sample n's targets (before its first -1), as the
  // kernel's loop over them; outside[n, i]: whether class i is not among them.
  const std::vector<std::int64_t> t = target.contiguous().to_vector<std::int64_t>();
  std::vector<double> count(static_cast<std::size_t>(b.n * b.c), 0.0);
  std::vector<double> outside(static_cast<std::size_t>(b.n * b.c), 1.0);
  for (std::int64_t n = 0; n < b.n; ++n) {
    for (std::int64_t k = 0; k < b.c; ++k) {
      const std::int64_t j = t[static_cast<std::size_t>(n * b.c + k)];
      MG_CHECK(j >= -1 && j < b.c, op, "argument #2 'target' is out of range: ", j, " for ", b.c,
               " classes (class indices, ended by -1)");
      if (j == -1) break;
      count[static_cast<std::size_t>(n * b.c + j)] += 1.0;
      outside[static_cast<std::size_t>(n * b.c + j)] = 0.0;
    }
  }
  const Dtype dt = input.dtype();
  Tensor pairs = tensor(count, {b.n, b.c, 1}, dt) * tensor(outside, {b.n, 1, b.c}, dt);
  Tensor x = b.single ? input.unsqueeze(0) : input;
  // z[n, j, i] = 1 - (x[n, j] - x[n, i]), counted when positive (the kernel's z > 0).
  Tensor z = 1.0 - x.unsqueeze(2) + x.unsqueeze(1);
  z = where(z > 0.0, z, 0.0);
  Tensor loss = (z * pairs).sum({1, 2}) / static_cast<double>(b.c);
  return reduce(b.single ? loss.reshape({}) : loss, red);
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, const std::string& reduction) {
  MG_PROFILE_OP("poisson_nll_loss");
  const char* op = "poisson_nll_loss";
  check_floating(input, op, "input");
  check_floating(target, op, "target");
  Reduction::Reduction red = parse_reduction(reduction, op);
  Tensor loss = log_input ? exp(input) - target * input : input - target * log(input + eps);
  if (full) {
    // Stirling's approximation of log(target!), where target > 1 (as PyTorch's).
    Tensor stirling = target * log(target) - target + 0.5 * log(2 * std::numbers::pi * target);
    loss = loss + where(target <= 1.0, 0.0, stirling);
  }
  return reduce(loss, red);
}

// Note [CTC as public ops]
// ctc_loss runs the forward (alpha) recursion of Graves et al. over the extended target
// l' = (blank, l1, blank, l2, ..., lL, blank), in log space, for the whole batch at once:
// alpha_t(s) = y_t(l'_s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2)), the
// last term only where l'_s is not blank and differs from l'_{s-2}; the loss is
// -logsumexp(alpha_{T-1}(2L), alpha_{T-1}(2L-1)). Unreachable states hold kUnreachable (a large
// finite negative, not -inf, so that logsumexp's gradient stays finite: their weight in every
// later logsumexp is exp(-1e30 - x) = 0, so they receive exactly zero gradient). A sample past its
// input length keeps its alpha (where). Autograd then gives PyTorch's alpha-beta gradient, and the
// second derivative as well. A loss that never left kUnreachable is an impossible alignment: inf
// with a NaN gradient (CtcInfiniteFn), or 0 with zero_infinity.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, std::int64_t blank, const std::string& reduction,
                bool zero_infinity) {
  MG_PROFILE_OP("ctc_loss");
  const char* op = "ctc_loss";
  check_floating(log_probs, op, "log_probs");
  check_int64(targets, op, "targets");
  check_int64(input_lengths, op, "input_lengths");
  check_int64(target_lengths, op, "target_lengths");
  Reduction::Reduction red = parse_reduction(reduction, op);
  MG_CHECK(log_probs.dim() == 3 || log_probs.dim() == 2, op,
           "log_probs must be (T, N, C) or (T, C) for one sample, got shape ", log_probs.shape());
  const bool single = log_probs.dim() == 2;
  Tensor lp = single ? log_probs.unsqueeze(1) : log_probs;
  const std::int64_t T = lp.size(0), N = lp.size(1), C = lp.size(2);
  MG_CHECK(blank >= 0 && blank < C, op, "blank must be in label range: blank ", blank, " for ", C,
           " classes");
  MG_CHECK(input_lengths.numel() == N && target_lengths.numel() == N && input_lengths.dim() <= 1 &&
               target_lengths.dim() <= 1,
           op, "input_lengths and target_lengths must have ", N,
           " elements (one per sample), got shapes ", input_lengths.shape(), " and ",
           target_lengths.shape());
  const std::vector<std::int64_t> in_len = input_lengths.to_vector<std::int64_t>();
  const std::vector<std::int64_t> tg_len = target_lengths.to_vector<std::int64_t>();
  const std::vector<std::int64_t> tg = targets.contiguous().to_vector<std::int64_t>();
  std::int64_t max_len = 0, total = 0;
  for (std::int64_t n = 0; n < N; ++n) {
    MG_CHECK(in_len[n] >= 0 && in_len[n] <= T, op, "Expected input_lengths to have value at most ",
             T, ", but got value ", in_len[n], " (sample ", n, ")");
    MG_CHECK(tg_len[n] >= 0, op, "target_lengths must be non-negative, got ", tg_len[n],
             " (sample ", n, ")");
    max_len = std::max(max_len, tg_len[n]);
    total += tg_len[n];
  }
  // Where sample n's target starts in `targets`, and the stride of its labels.
  const bool padded = targets.dim() == 2;
  if (padded) {
    MG_CHECK(targets.size(0) == N, op, "targets must have ", N,
             " rows (one per sample), got shape ", targets.shape());
    MG_CHECK(targets.size(1) >= max_len, op, "Expected tensor to have size at least ", max_len,
             " at dimension 1, but got size ", targets.size(1), " for argument #2 'targets'");
  } else {
    MG_CHECK(targets.dim() == 1 && targets.numel() >= total, op,
             "targets must be (N, S) padded or 1-D with the ", total,
             " labels concatenated, got shape ", targets.shape());
  }
  // The extended targets l' [N, S] (blank-padded), which states may skip one back (s-2), which
  // start the path, and each sample's last two states.
  const std::int64_t S = 2 * max_len + 1;
  std::vector<std::int64_t> ext(static_cast<std::size_t>(N * S), blank);
  std::vector<bool> skip(static_cast<std::size_t>(N * S), false), start(ext.size(), false);
  std::vector<std::int64_t> last(static_cast<std::size_t>(N)), before_last(last.size());
  std::int64_t offset = 0;
  for (std::int64_t n = 0; n < N; ++n) {
    const std::int64_t L = tg_len[n];
    for (std::int64_t k = 0; k < L; ++k) {
      const std::int64_t label =
          tg[static_cast<std::size_t>(padded ? n * targets.size(1) + k : offset + k)];
      MG_CHECK(label >= 0 && label < C, op, "target label ", label, " (sample ", n,
               ") is out of range for ", C, " classes");
      ext[static_cast<std::size_t>(n * S + 2 * k + 1)] = label;
    }
    offset += L;
    for (std::int64_t s = 2; s < 2 * L + 1; ++s) {
      const auto i = static_cast<std::size_t>(n * S + s);
      skip[i] = ext[i] != blank && ext[i] != ext[i - 2];
    }
    start[static_cast<std::size_t>(n * S)] = true;
    if (L > 0) start[static_cast<std::size_t>(n * S + 1)] = true;
    last[static_cast<std::size_t>(n)] = 2 * L;
    before_last[static_cast<std::size_t>(n)] = L > 0 ? 2 * L - 1 : 2 * L;
  }
  auto mask = [&](const std::vector<bool>& v, const Shape& shape) {
    std::vector<double> d(v.begin(), v.end());
    return tensor(d, shape, kBool);
  };
  auto ints = [](const std::vector<std::int64_t>& v, const Shape& shape) {
    return tensor(v, TensorOptions().dtype(kInt64)).reshape(shape);
  };
  constexpr double kUnreachable = -1e30;
  // y[t, n, s] = log_probs[t, n, l'_s]
  Tensor index = ints(ext, {1, N, S}).expand({T, N, S}).contiguous();
  Tensor y = T > 0 ? gather(lp, 2, index) : Tensor();
  Tensor can_skip = mask(skip, {N, S});
  Tensor alpha = T > 0 ? where(mask(start, {N, S}), y.select(0, 0), kUnreachable)
                       : full({N, S}, kUnreachable, lp.dtype());
  for (std::int64_t t = 1; t < T; ++t) {
    std::vector<bool> on(static_cast<std::size_t>(N));
    for (std::int64_t n = 0; n < N; ++n) on[static_cast<std::size_t>(n)] = t < in_len[n];
    Tensor wall = full({N, std::min<std::int64_t>(2, S)}, kUnreachable, lp.dtype());
    Tensor from1 = cat({wall.narrow(1, 0, 1), alpha.narrow(1, 0, S - 1)}, 1);
    Tensor from2 = S > 2 ? where(can_skip, cat({wall, alpha.narrow(1, 0, S - 2)}, 1), kUnreachable)
                         : full({N, S}, kUnreachable, lp.dtype());
    Tensor next = y.select(0, t) + logsumexp(stack({alpha, from1, from2}), {0});
    alpha = where(mask(on, {N, 1}), next, alpha);
  }
  Tensor ends =
      cat({gather(alpha, 1, ints(last, {N, 1})), gather(alpha, 1, ints(before_last, {N, 1}))}, 1);
  // A target of length 0 has one end state, not two.
  std::vector<bool> one_end(static_cast<std::size_t>(N)), no_input(one_end.size());
  std::vector<double> without_input(one_end.size());
  for (std::int64_t n = 0; n < N; ++n) {
    one_end[static_cast<std::size_t>(n)] = tg_len[n] == 0;
    no_input[static_cast<std::size_t>(n)] = in_len[n] == 0;
    without_input[static_cast<std::size_t>(n)] = tg_len[n] == 0 ? 0.0 : -kUnreachable;
  }
  ends = cat(
      {ends.narrow(1, 0, 1), where(mask(one_end, {N, 1}), kUnreachable, ends.narrow(1, 1, 1))}, 1);
  Tensor loss = -logsumexp(ends, {1});
  // No input frames: an empty target costs 0, any other is impossible.
  loss = where(mask(no_input, {N}), tensor(without_input, {N}, lp.dtype()), loss);
  Tensor impossible = loss.detach() > -kUnreachable / 2;
  if (!zero_infinity && impossible.any().item<bool>())
    loss = CtcInfiniteFn::apply(loss, lp, impossible);
  loss = where(impossible, zero_infinity ? 0.0 : std::numeric_limits<double>::infinity(), loss);
  if (red == Reduction::Mean) {
    return (loss / clamp(ints(tg_len, {N}).to(lp.dtype()), 1.0)).mean();
  }
  return reduce(single ? loss.reshape({}) : loss, red);
}

// ---------------------------------------------------------------- libtorch's overloads

Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        const SoftMarginLossFuncOptions& o) {
  return soft_margin_loss(input, target, reduction_name(o.reduction()));
}
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& o) {
  return multilabel_soft_margin_loss(input, target, o.weight(), reduction_name(o.reduction()));
}
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& o) {
  return margin_ranking_loss(input1, input2, target, o.margin(), reduction_name(o.reduction()));
}
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                            const HingeEmbeddingLossFuncOptions& o) {
  return hinge_embedding_loss(input, target, o.margin(), reduction_name(o.reduction()));
}
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& o) {
  return cosine_embedding_loss(input1, input2, target, o.margin(), reduction_name(o.reduction()));
}
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& o) {
  return triplet_margin_loss(anchor, positive, negative, o.margin(), o.p(), o.eps(), o.swap(),
                             reduction_name(o.reduction()));
}
Tensor multi_margin_loss(const Tensor& input, const Tensor& target,
                         const MultiMarginLossFuncOptions& o) {
  return multi_margin_loss(input, target, o.p(), o.margin(), o.weight(),
                           reduction_name(o.reduction()));
}
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& o) {
  return multilabel_margin_loss(input, target, reduction_name(o.reduction()));
}
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target,
                        const PoissonNLLLossFuncOptions& o) {
  return poisson_nll_loss(input, target, o.log_input(), o.full(), o.eps(),
                          reduction_name(o.reduction()));
}
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& o) {
  return ctc_loss(log_probs, targets, input_lengths, target_lengths, o.blank(),
                  reduction_name(o.reduction()), o.zero_infinity());
}
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& o) {
  return pairwise_distance(x1, x2, o.p(), o.eps(), o.keepdim());
}

}  // namespace minigrad::nn::functional

// ---------------------------------------------------------------- modules

namespace minigrad::nn {

namespace F = functional;
using detail::clone_if_defined;
using detail::register_optional_buffer;

/// The constructor of a loss module whose options hold no tensor.
#define MG_DEFINE_LOSS_BASICS(Name) \
  Name##Impl::Name##Impl(const Name##Options& options_) : CopyCloneable(#Name), options(options_) {}

MG_DEFINE_LOSS_BASICS(SoftMarginLoss)
Tensor SoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::soft_margin_loss(input, target, options);
}

MG_DEFINE_LOSS_BASICS(HingeEmbeddingLoss)
Tensor HingeEmbeddingLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::hinge_embedding_loss(input, target, options);
}

MG_DEFINE_LOSS_BASICS(MultiLabelMarginLoss)
Tensor MultiLabelMarginLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::multilabel_margin_loss(input, target, options);
}

MG_DEFINE_LOSS_BASICS(PoissonNLLLoss)
Tensor PoissonNLLLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::poisson_nll_loss(input, target, options);
}

MG_DEFINE_LOSS_BASICS(MarginRankingLoss)
Tensor MarginRankingLossImpl::forward(const Tensor& a, const Tensor& b, const Tensor& c) const {
  return F::margin_ranking_loss(a, b, c, options);
}

MG_DEFINE_LOSS_BASICS(CosineEmbeddingLoss)
Tensor CosineEmbeddingLossImpl::forward(const Tensor& a, const Tensor& b, const Tensor& c) const {
  return F::cosine_embedding_loss(a, b, c, options);
}

MG_DEFINE_LOSS_BASICS(TripletMarginLoss)
Tensor TripletMarginLossImpl::forward(const Tensor& a, const Tensor& b, const Tensor& c) const {
  return F::triplet_margin_loss(a, b, c, options);
}

MG_DEFINE_LOSS_BASICS(CTCLoss)
Tensor CTCLossImpl::forward(const Tensor& log_probs, const Tensor& targets,
                            const Tensor& input_lengths, const Tensor& target_lengths) const {
  return F::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
}

MG_DEFINE_LOSS_BASICS(PairwiseDistance)
Tensor PairwiseDistanceImpl::forward(const Tensor& x1, const Tensor& x2) const {
  return F::pairwise_distance(x1, x2, options);
}

#undef MG_DEFINE_LOSS_BASICS

// The two whose options hold a weight: registered as the buffer "weight", as PyTorch's.
MultiLabelSoftMarginLossImpl::MultiLabelSoftMarginLossImpl(
    const MultiLabelSoftMarginLossOptions& options_)
    : Cloneable("MultiLabelSoftMarginLoss"), options(options_) {
  reset();
}
MultiLabelSoftMarginLossImpl::MultiLabelSoftMarginLossImpl(
    const MultiLabelSoftMarginLossImpl& other)
    : Cloneable(other), options(other.options) {
  options.weight(clone_if_defined(options.weight()));
}
void MultiLabelSoftMarginLossImpl::reset() {
  register_optional_buffer(*this, "weight", options.weight());
}
Tensor MultiLabelSoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::multilabel_soft_margin_loss(input, target, options);
}
MultiMarginLossImpl::MultiMarginLossImpl(const MultiMarginLossOptions& options_)
    : Cloneable("MultiMarginLoss"), options(options_) {
  reset();
}
MultiMarginLossImpl::MultiMarginLossImpl(const MultiMarginLossImpl& other)
    : Cloneable(other), options(other.options) {
  options.weight(clone_if_defined(options.weight()));
}
void MultiMarginLossImpl::reset() { register_optional_buffer(*this, "weight", options.weight()); }
Tensor MultiMarginLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::multi_margin_loss(input, target, options);
}
}  // namespace minigrad::nn
