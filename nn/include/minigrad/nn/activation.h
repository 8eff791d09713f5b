#pragma once
// The activations of torch.nn beyond layers.h's (ReLU, GELU, Tanh, Sigmoid, SiLU, Mish, Softmax):
// ELU, SELU, CELU, LeakyReLU, Hardtanh, Softplus, Hardsigmoid, Hardswish, LogSigmoid, Softsign,
// Softmin, with libtorch's options structs (`nn::ELU(nn::ELUOptions().alpha(0.5))`) and their
// functional forms (`F::elu(x, F::ELUFuncOptions().alpha(0.5))`). The ops with a kernel are
// core's (minigrad/ops/math.h); the modules print as PyTorch's (`ELU(alpha=1.0)`).
#include <cstdint>

#include "minigrad/nn/layers.h"
#include "minigrad/nn/options.h"

namespace minigrad::nn {

/// nn::ELU's options: ELUOptions().alpha(0.5).inplace(true).
struct ELUOptions {
  MG_ARG(double, alpha) = 1.0;
  MG_ARG(bool, inplace) = false;
};
/// nn::SELU's options: SELUOptions(true), or SELUOptions().inplace(true).
struct SELUOptions {
  SELUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(bool, inplace);
};
/// nn::CELU's options: CELUOptions().alpha(2.0).inplace(true).
struct CELUOptions {
  MG_ARG(double, alpha) = 1.0;
  MG_ARG(bool, inplace) = false;
};
/// nn::LeakyReLU's options: LeakyReLUOptions().negative_slope(0.2).inplace(true).
struct LeakyReLUOptions {
  MG_ARG(double, negative_slope) = 1e-2;
  MG_ARG(bool, inplace) = false;
};
/// nn::Hardtanh's options: HardtanhOptions().min_val(-2).max_val(2).inplace(true).
struct HardtanhOptions {
  MG_ARG(double, min_val) = -1.0;
  MG_ARG(double, max_val) = 1.0;
  MG_ARG(bool, inplace) = false;
};
/// nn::Softplus's options: SoftplusOptions().beta(2).threshold(10).
struct SoftplusOptions {
  MG_ARG(double, beta) = 1.0;
  MG_ARG(double, threshold) = 20.0;
};
/// nn::Softmin's options: SoftminOptions(1).
struct SoftminOptions {
  SoftminOptions(std::int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(std::int64_t, dim);
};

namespace functional {

// libtorch's functional options are the modules' (F::ELUFuncOptions = nn::ELUOptions, ...).
using ELUFuncOptions = ELUOptions;
using SELUFuncOptions = SELUOptions;
using CELUFuncOptions = CELUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using HardtanhFuncOptions = HardtanhOptions;
using SoftplusFuncOptions = SoftplusOptions;
using SoftminFuncOptions = SoftminOptions;

/// elu(x, alpha), or elu_(x) (x written) with inplace.
Tensor elu(Tensor x, const ELUFuncOptions& options = {});
/// selu(x), or selu_(x) with inplace.
Tensor selu(Tensor x, const SELUFuncOptions& options = {});
/// celu(x, alpha), or celu_(x) with inplace; alpha 0 throws.
Tensor celu(Tensor x, const CELUFuncOptions& options = {});
/// leaky_relu(x, negative_slope), or leaky_relu_(x) with inplace.
Tensor leaky_relu(Tensor x, const LeakyReLUFuncOptions& options = {});
/// hardtanh(x, min_val, max_val), or hardtanh_(x) with inplace.
Tensor hardtanh(Tensor x, const HardtanhFuncOptions& options = {});
/// softplus(x, beta, threshold).
Tensor softplus(const Tensor& x, const SoftplusFuncOptions& options = {});
/// hardsigmoid(x), or hardsigmoid_(x) with inplace (Python's F.hardsigmoid).
Tensor hardsigmoid(Tensor x, bool inplace = false);
/// hardswish(x), or hardswish_(x) with inplace (Python's F.hardswish).
Tensor hardswish(Tensor x, bool inplace = false);
/// log(sigmoid(x)), as F.logsigmoid.
Tensor logsigmoid(const Tensor& x);
/// x / (1 + |x|), as F.softsign (composed of differentiable ops, as PyTorch's).
Tensor softsign(const Tensor& x);
/// softmax(-x, dim), as F.softmin.
Tensor softmin(const Tensor& x, const SoftminFuncOptions& options);

}  // namespace functional

/// x where x > 0, else alpha (exp(x) - 1), as torch.nn.ELU.
class ELUImpl : public CopyCloneable<ELUImpl, UnaryModule> {
 public:
  explicit ELUImpl(const ELUOptions& options_ = {}) : CopyCloneable("ELU"), options(options_) {}
  /// F::elu(x, options).
  Tensor forward(const Tensor& x) const override;
  /// "alpha=1.0", then ", inplace=True" when in place.
  std::string extra_repr() const override;

  ELUOptions options;
};
MG_MODULE(ELU);

/// scale * elu(x, alpha) with PyTorch's constants, as torch.nn.SELU.
class SELUImpl : public CopyCloneable<SELUImpl, UnaryModule> {
 public:
  explicit SELUImpl(const SELUOptions& options_ = {}) : CopyCloneable("SELU"), options(options_) {}
  /// F::selu(x, options).
  Tensor forward(const Tensor& x) const override;
  /// "inplace=True" when in place, else nothing.
  std::string extra_repr() const override;

  SELUOptions options;
};
MG_MODULE(SELU);

/// max(0, x) + min(0, alpha (exp(x / alpha) - 1)), as torch.nn.CELU.
class CELUImpl : public CopyCloneable<CELUImpl, UnaryModule> {
 public:
  explicit CELUImpl(const CELUOptions& options_ = {}) : CopyCloneable("CELU"), options(options_) {}
  /// F::celu(x, options).
  Tensor forward(const Tensor& x) const override;
  /// "alpha=1.0", then ", inplace=True" when in place.
  std::string extra_repr() const override;

  CELUOptions options;
};
MG_MODULE(CELU);

/// x where x > 0, else negative_slope * x, as torch.nn.LeakyReLU.
class LeakyReLUImpl : public CopyCloneable<LeakyReLUImpl, UnaryModule> {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options_ = {})
      : CopyCloneable("LeakyReLU"), options(options_) {}
  /// F::leaky_relu(x, options).
  Tensor forward(const Tensor& x) const override;
  /// "negative_slope=0.01", then ", inplace=True" when in place.
  std::string extra_repr() const override;

  LeakyReLUOptions options;
};
MG_MODULE(LeakyReLU);

/// x clamped to [min_val, max_val], as torch.nn.Hardtanh.
class HardtanhImpl : public CopyCloneable<HardtanhImpl, UnaryModule> {
 public:
  /// Throws unless max_val > min_val, as libtorch.
  explicit HardtanhImpl(const HardtanhOptions& options_ = {});
  /// F::hardtanh(x, options).
  Tensor forward(const Tensor& x) const override;
  /// "min_val=-1.0, max_val=1.0", then ", inplace=True" when in place.
  std::string extra_repr() const override;

  HardtanhOptions options;
};
MG_MODULE(Hardtanh);

/// log(1 + exp(beta x)) / beta, as torch.nn.Softplus.
class SoftplusImpl : public CopyCloneable<SoftplusImpl, UnaryModule> {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options_ = {})
      : CopyCloneable("Softplus"), options(options_) {}
  /// F::softplus(x, options).
  Tensor forward(const Tensor& x) const override;
  /// "beta=1, threshold=20" (whole numbers without ".0", as PyTorch's defaults print).
  std::string extra_repr() const override;

  SoftplusOptions options;
};
MG_MODULE(Softplus);

/// relu6(x + 3) / 6, as torch.nn.Hardsigmoid(inplace).
class HardsigmoidImpl : public CopyCloneable<HardsigmoidImpl, UnaryModule> {
 public:
  explicit HardsigmoidImpl(bool inplace_ = false)
      : CopyCloneable("Hardsigmoid"), inplace(inplace_) {}
  /// F::hardsigmoid(x, inplace).
  Tensor forward(const Tensor& x) const override;

  /// Whether forward writes its input (not printed, as PyTorch).
  bool inplace;
};
MG_MODULE(Hardsigmoid);

/// x * relu6(x + 3) / 6, as torch.nn.Hardswish(inplace).
class HardswishImpl : public CopyCloneable<HardswishImpl, UnaryModule> {
 public:
  explicit HardswishImpl(bool inplace_ = false) : CopyCloneable("Hardswish"), inplace(inplace_) {}
  /// F::hardswish(x, inplace).
  Tensor forward(const Tensor& x) const override;

  /// Whether forward writes its input (not printed, as PyTorch).
  bool inplace;
};
MG_MODULE(Hardswish);

/// log(sigmoid(x)), as torch.nn.LogSigmoid.
class LogSigmoidImpl : public CopyCloneable<LogSigmoidImpl, UnaryModule> {
 public:
  LogSigmoidImpl() : CopyCloneable("LogSigmoid") {}
  /// F::logsigmoid(x).
  Tensor forward(const Tensor& x) const override;
};
MG_MODULE(LogSigmoid);

/// x / (1 + |x|), as torch.nn.Softsign.
class SoftsignImpl : public CopyCloneable<SoftsignImpl, UnaryModule> {
 public:
  SoftsignImpl() : CopyCloneable("Softsign") {}
  /// F::softsign(x).
  Tensor forward(const Tensor& x) const override;
};
MG_MODULE(Softsign);

/// softmax(-x) over dim, as torch.nn.Softmin(dim).
class SoftminImpl : public CopyCloneable<SoftminImpl, UnaryModule> {
 public:
  explicit SoftminImpl(const SoftminOptions& options_)
      : CopyCloneable("Softmin"), options(options_) {}
  /// F::softmin(x, options).
  Tensor forward(const Tensor& x) const override;
  /// "dim=1".
  std::string extra_repr() const override;

  SoftminOptions options;
};
MG_MODULE(Softmin);

}  // namespace minigrad::nn
