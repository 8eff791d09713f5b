#pragma once
// nn::parallel::DistributedDataParallel: data-parallel training with PyTorch's semantics
// (torch.nn.parallel.DistributedDataParallel), on minigrad::distributed (docs/distributed.md).
//
//   mg::distributed::InitGuard dist;
//   GPT model(config);
//   mg::nn::parallel::DistributedDataParallel ddp(model);   // rank 0's weights on every rank
//   mg::optim::AdamW opt(model.parameters(), ...);
//   for (...) {
//     mg::Tensor loss = cross_entropy(ddp.forward(x_shard), y_shard);
//     opt.zero_grad();
//     loss.backward();   // returns with every grad() averaged over the ranks
//     opt.step();
//   }
//
// Note [DDP buckets and overlap]
// The gradients are grouped into buckets of about bucket_cap_mb (25 MB), in reverse parameter
// order, which is roughly the order backward produces them. A post-accumulate-grad hook on each
// parameter copies its gradient into its bucket's flat buffer; when a bucket's last gradient has
// arrived, the bucket's all-reduce starts (MPI_Iallreduce) while backward goes on with the earlier
// layers. Buckets start in index order on every rank (MPI needs the same order everywhere). When
// the last bucket has started, that hook waits for all of them and writes the averaged gradients
// back into each grad(), so backward returns with them in place.
//
// forward() arms this for the next backward (when grad mode is on and not under no_sync()). A
// parameter that gets no gradient in that backward would leave its bucket waiting: with
// find_unused_parameters the forward's graph is walked and the parameters it cannot reach count as
// ready (with a zero gradient); without it, the next forward throws naming them, as PyTorch does.
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "minigrad/nn/module.h"
#include "minigrad/tensor.h"

namespace minigrad::nn::parallel {

struct DistributedDataParallelOptions {
  /// Bucket size in MiB (PyTorch's bucket_cap_mb).
  double bucket_cap_mb = 25.0;
  /// Walk each forward's graph and treat the parameters it does not reach as ready.
  bool find_unused_parameters = false;
  /// Copy rank 0's buffers to every rank at each forward (PyTorch's broadcast_buffers).
  bool broadcast_buffers = true;
};

namespace detail {
struct ReducerState;

/// Everything but the module's type: buckets, hooks, the all-reduces.
class Reducer {
 public:
  Reducer(Module& module, const DistributedDataParallelOptions& options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  /// Called by forward() before the module runs: checks that the last reduction finished,
  /// broadcasts buffers, arms the hooks for the coming backward.
  void prepare_forward();
  /// Called by forward() with its output(s): with find_unused_parameters, marks the parameters
  /// the outputs' graph does not reach. Call it yourself for a forward that returns no Tensor.
  void prepare_for_backward(const std::vector<Tensor>& outputs);
  /// The buckets, as lists of parameter names (bucket 0 is reduced first).
  std::vector<std::vector<std::string>> bucket_parameter_names() const;

  /// While alive, forward()/backward() do not synchronise: gradients accumulate locally, and the
  /// first synchronised backward afterwards averages the accumulated sums (PyTorch's no_sync()).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(Reducer& reducer);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    Reducer& reducer_;
    bool previous_;
  };
  [[nodiscard]] NoSyncGuard no_sync() { return NoSyncGuard(*this); }

 private:
  std::shared_ptr<ReducerState> state_;
};
}  // namespace detail

/// Wraps a module: a Module kept by reference (it must outlive this) or a holder (nn::Linear,
/// an MG_MODULE of yours) kept by value, sharing its module. M has a forward().
template <typename M>
class DistributedDataParallel : public detail::Reducer {
  static_assert(std::is_base_of_v<Module, M> || IsModuleHolder<M>,
                "DistributedDataParallel wraps an nn::Module or a module holder");
  static Module& as_module(M& m) {
    if constexpr (IsModuleHolder<M>)
      return *m;
    else
      return m;
  }

 public:
  /// Broadcasts rank 0's parameters and buffers to every rank and builds the buckets. Every rank
  /// must construct it with the same model (checked: parameter dtypes and sizes).
  explicit DistributedDataParallel(M& module, DistributedDataParallelOptions options = {})
      : Reducer(as_module(module), options), module_(module) {}

  /// Runs module.forward(args...) and arms the gradient synchronisation of the next backward.
  template <typename... Args>
  auto forward(Args&&... args) {
    prepare_forward();
    auto out = [&] {
      if constexpr (IsModuleHolder<M>)
        return module_->forward(std::forward<Args>(args)...);
      else
        return module_.forward(std::forward<Args>(args)...);
    }();
    // Another output type: call prepare_for_backward() yourself for find_unused_parameters.
    if constexpr (std::is_convertible_v<decltype(out), const Tensor&>) prepare_for_backward({out});
    return out;
  }

  M& module() { return module_; }
  const M& module() const { return module_; }

 private:
  std::conditional_t<IsModuleHolder<M>, M, M&> module_;
};

}  // namespace minigrad::nn::parallel
