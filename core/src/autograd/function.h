#pragma once
// Private: how an op records itself in the graph.
//
// Note [Backward next to forward]
// Each op records a FunctionNode whose backward is a lambda written directly under the op's
// forward code, as in micrograd. The lambda captures what backward needs (the inputs it reads, a
// dim, a scalar) and returns one gradient per input, in the inputs' order, possibly undefined for
// inputs that need none (check node.needs_input_grad(i)). It returns gradients shaped like the
// op's output where the input was broadcast: the engine reduces them (Note [The engine]).
// The op's own output must never be captured (that is a reference cycle output -> grad_fn ->
// output); pass SaveOutput::kYes and call node.output() inside the lambda instead.
// release() destroys the lambda, and with it the saved tensors, after a backward without
// retain_graph; a second backward through such a node throws.
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensor_impl.h"

namespace minigrad::detail {

class FunctionNode;
/// The type-erased form of a backward lambda; record() also takes the lambda itself and stores it
/// inside the node (one allocation for both, Note [Caching allocator]).
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad, FunctionNode& node)>;

enum class SaveOutput { kNo, kYes };

class FunctionNode : public Node {
 public:
  FunctionNode(const char* name, bool saves_tensors) : name_(name), saves_tensors_(saves_tensors) {}
  std::string name() const override { return name_; }
  std::vector<Tensor> apply(const Tensor& grad) override;
  void release() override;

  /// The op's output, re-attached to this node (for formulas like exp's grad * result).
  Tensor output();
  /// Keeps out's data, and a weak handle to this node (`self`) for output() to re-attach to.
  void save_output(const Tensor& out, const std::shared_ptr<FunctionNode>& self);

 protected:
  /// Calls the backward lambda.
  virtual std::vector<Tensor> call_backward(const Tensor& grad) = 0;
  /// Destroys the backward lambda and the tensors it captured.
  virtual void destroy_backward() = 0;

 private:
  const char* name_;
  bool saves_tensors_;
  bool released_ = false;
  // The output's data without its grad_fn (Note [Backward next to forward]).
  std::shared_ptr<TensorImpl> output_;
  // Only nodes that save their output keep a handle to themselves: a weak_ptr in every node
  // (enable_shared_from_this) would cost locked instructions on every node's creation and death.
  std::weak_ptr<FunctionNode> self_;
};

/// A FunctionNode holding its backward lambda of type F in place.
template <typename F>
class FunctionNodeOf final : public FunctionNode {
 public:
  FunctionNodeOf(const char* name, F fn, bool saves_tensors)
      : FunctionNode(name, saves_tensors), fn_(std::move(fn)) {}

 protected:
  std::vector<Tensor> call_backward(const Tensor& grad) override { return (*fn_)(grad, *this); }
  void destroy_backward() override { fn_.reset(); }

 private:
  std::optional<F> fn_;
};

/// The node that adds incoming gradients into a leaf's grad().
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf);
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(const Tensor& grad) override;
  const std::shared_ptr<TensorImpl>& leaf() const { return leaf_; }
  /// The leaf's current shape and dtype (not a copy made when the node was).
  const Shape& output_shape() const override { return leaf_->shape; }
  Dtype output_dtype() const override { return leaf_->dtype; }

 private:
  std::shared_ptr<TensorImpl> leaf_;
};

/// Anomaly mode (Note [Anomaly mode], autograd.h): throws if node n returned a nan or inf
/// gradient for a finite incoming gradient.
void check_backward_anomaly(const Node& n, const Tensor& grad, const std::vector<Tensor>& grads);

/// The edge a gradient for t flows along: its grad_fn, its leaf accumulator, or none.
Edge gradient_edge(const Tensor& t);

/// Attaches `node` (edges already set) to `out` as its grad_fn; anomaly mode's forward check.
void finish_record(const char* name, Tensor& out, std::shared_ptr<FunctionNode> node,
                   SaveOutput save_output, std::initializer_list<const Tensor*> inputs);
void finish_record(const char* name, Tensor& out, std::shared_ptr<FunctionNode> node,
                   const std::vector<Tensor>& inputs);

/// A new node holding `backward`, through the caching allocator.
template <typename F>
std::shared_ptr<FunctionNode> make_function_node(const char* name, F&& backward,
                                                 bool saves_tensors) {
  using Node_ = FunctionNodeOf<std::decay_t<F>>;
  return std::allocate_shared<Node_>(CachingAllocator<Node_>{}, name, std::forward<F>(backward),
                                     saves_tensors);
}

/// Makes `out` the result of a differentiable op on `inputs` if any input requires grad and grad
/// mode is on. `backward` is the lambda (or a BackwardFn). `saves_tensors` says whether the lambda
/// captured tensors (then a second backward without retain_graph throws, as in PyTorch).
template <typename F>
void record(const char* name, Tensor& out, std::initializer_list<const Tensor*> inputs,
            F&& backward, bool saves_tensors = true, SaveOutput save_output = SaveOutput::kNo) {
  if (!any_requires_grad(inputs)) return;
  auto node = make_function_node(name, std::forward<F>(backward), saves_tensors);
  std::vector<Edge>& edges = node->mutable_next_edges();
  edges.reserve(inputs.size());
  for (const Tensor* t : inputs) edges.push_back(gradient_edge(*t));
  finish_record(name, out, std::move(node), save_output, inputs);
}

template <typename F>
void record(const char* name, Tensor& out, const std::vector<Tensor>& inputs, F&& backward,
            bool saves_tensors = true) {
  if (!is_grad_enabled()) return;
  bool any = false;
  for (const auto& t : inputs) any |= t.requires_grad();
  if (!any) return;
  auto node = make_function_node(name, std::forward<F>(backward), saves_tensors);
  std::vector<Edge>& edges = node->mutable_next_edges();
  edges.reserve(inputs.size());
  for (const auto& t : inputs) edges.push_back(gradient_edge(t));
  finish_record(name, out, std::move(node), inputs);
}

}  // namespace minigrad::detail
