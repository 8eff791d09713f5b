#pragma once
// Private: how an op records itself in the graph.
//
// Note [Backward next to forward]
// Each op records a FunctionNode whose backward is a lambda written directly under the op's
// forward code, as in micrograd. The lambda returns one gradient per input, in the inputs' order,
// possibly undefined for inputs that need none (check node.needs_input_grad(i)). It returns
// gradients shaped like the op's output where the input was broadcast: the engine reduces them
// (Note [The engine]).
// The tensors backward reads are not captured by the lambda: the op names them in a save list
// and the node owns them (Note [Saved tensors]); the lambda reads them with node.saved(i). The
// lambda captures only plain values (a dim, a scalar, a shape).
//
// Note [Saved tensors]
// A node owns the tensors its backward reads, as PyTorch's SavedVariable: each is an input (or
// another tensor such as a mask), kept as it was when saved (Note [Saved inputs are snapshots],
// node.cpp), or the op's own output (kOutput), kept as its data without grad_fn so that output ->
// grad_fn -> output is no reference cycle; reading it re-attaches it to this node, so create_graph
// differentiates through it. Each op saves only what the gradients that are actually needed read,
// as derivatives.yaml: mul saves b only when a needs a gradient (`needs_grad(a) ? &b : nullptr`),
// so ((w + 1) * m) keeps nothing of w + 1 when m does not require grad. Every saved tensor
// remembers its version (Note [Version counters]); apply() checks them all before the lambda runs.
// release() drops them after a backward without retain_graph; a second backward through a node that
// saved something then throws, as PyTorch.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "minigrad/profiler.h"
#include "tensor_impl.h"

namespace minigrad::detail {

/// The engine's and the ops' access to what Node keeps private (Note [The engine]).
struct NodeAccess {
  static std::vector<Edge>& edges(Node& n) { return n.next_edges_; }
  static void set_output_meta(Node& n, const Shape& shape, Dtype dtype) {
    n.set_output_meta(shape, dtype);
  }
  /// The node's hooks, to add one.
  static std::vector<PreHook>& pre_hooks(Node& n) { return n.extras().pre_hooks; }
  /// The node's hooks, to run them: null when it has none.
  static std::vector<PreHook>* pre_hooks_if(Node& n) {
    return n.extras_ ? &n.extras_->pre_hooks : nullptr;
  }
  static std::vector<std::weak_ptr<TensorImpl>>& retained(Node& n) { return n.extras().retained; }
  /// The outputs that retain their gradient: null when none does.
  static const std::vector<std::weak_ptr<TensorImpl>>* retained_if(const Node& n) {
    return n.extras_ ? &n.extras_->retained : nullptr;
  }
  static void set_outputs_meta(Node& n, const std::vector<std::pair<Shape, Dtype>>& outputs) {
    n.set_outputs_meta(outputs);
  }
  static void set_creation_trace(Node& n, std::vector<void*> trace) {
    if (!trace.empty() || n.extras_) n.extras().creation_trace = std::move(trace);
  }
  static bool is_accumulate_grad(const Node& n) { return n.is_accumulate_grad_; }
  static void mark_accumulate_grad(Node& n) { n.is_accumulate_grad_ = true; }
};

class FunctionNode;

/// One entry of an op's save list: a tensor (nullptr saves nothing in that slot) or kOutput.
struct OutputTag {};
inline constexpr OutputTag kOutput{};
struct Save {
  Save(std::nullptr_t) {}               // NOLINT: nullptr reads as "nothing" in a save list
  Save(const Tensor* t) : tensor(t) {}  // NOLINT
  Save(OutputTag) : output(true) {}     // NOLINT
  const Tensor* tensor = nullptr;
  bool output = false;
};

/// Whether t will need a gradient from a node recorded now (grad mode is checked by record()).
inline bool needs_grad(const Tensor& t) { return t.defined() && t.requires_grad(); }

/// A tensor a node keeps for its backward (Note [Saved tensors]).
class SavedTensor {
 public:
  SavedTensor() = default;
  /// Keeps t (an input, a mask, an index) as it is now: t itself when it is a leaf that requires
  /// grad, else a new handle on its data and grad_fn (Note [Saved inputs are snapshots]).
  static SavedTensor of(const Tensor& t);
  /// Keeps the op's output: its data without grad_fn.
  static SavedTensor of_output(const Tensor& out);
  bool defined() const { return impl_ != nullptr; }
  bool is_output() const { return is_output_; }
  /// Throws "[MulBackward0] a tensor saved for backward ... was modified in place ..." when the
  /// tensor's version moved on since it was saved.
  void check_version(const char* node_name) const;
  /// The saved tensor; an output is re-attached to `node` (its grad_fn).
  Tensor unpack(const std::shared_ptr<Node>& node) const;
  void reset() { impl_.reset(); }
  /// For a saved output: which output of its node it is.
  void set_output_nr(std::uint32_t nr) { output_nr_ = nr; }
  /// Whether this (non-output) saved tensor views `storage`.
  bool shares(const Storage* storage) const {
    return impl_ && !is_output_ && impl_->storage.get() == storage;
  }

 private:
  std::shared_ptr<TensorImpl> impl_;
  /// A saved leaf is the tensor itself, whose set_data may swap its storage: the storage it had
  /// (weak, so that nothing is kept alive, yet its address cannot be reused while it is checked).
  std::weak_ptr<Storage> leaf_storage_;
  std::uint32_t version_ = 0;
  std::uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool is_leaf_ = false;
};

class FunctionNode : public Node {
 public:
  explicit FunctionNode(const char* name) : name_(name) {}
  std::string name() const override { return name_; }
  const char* name_cstr() const { return name_; }
  std::vector<Tensor> apply(const Tensor& grad) override;
  void release() override;

  /// Saved tensor i of the op's save list (undefined when the op saved nothing there).
  Tensor saved(std::size_t i) const;
  /// Number of slots in the save list.
  std::size_t saved_count() const { return saved_count_; }
  /// Whether slot i holds a tensor (what a test of "saves only what backward needs" reads).
  bool has_saved(std::size_t i) const { return i < saved_count_ && saved_[i].defined(); }

  /// Fills the save list from the op's entries (output entries keep `out`'s data).
  void save(const Save* saves, std::size_t n, const Tensor& out,
            const std::shared_ptr<FunctionNode>& self);
  /// In-place ops (Note [In-place ops]): saved tensors that view `storage` become clones, taken
  /// before the write destroys their values.
  void clone_saved_sharing(const Storage* storage);
  /// In-place ops: a saved output now lives in `self`'s elements.
  void rebind_saved_output(const Tensor& self);
  /// In-place ops on a view (Note [In-place on views]): the saved output is the view's new
  /// value, whose grad_fn is not this node but one that `make` builds (the view's history).
  void set_output_history(std::function<std::shared_ptr<Node>()> make) {
    output_history_ =
        make ? std::make_unique<std::function<std::shared_ptr<Node>()>>(std::move(make)) : nullptr;
  }

 protected:
  /// Derived nodes hand over the storage of their save list once, in their constructor.
  void set_saved_storage(SavedTensor* saved, std::size_t n) {
    saved_ = saved;
    saved_count_ = static_cast<std::uint32_t>(n);
  }
  /// Calls the backward lambda.
  virtual std::vector<Tensor> call_backward(const Tensor& grad) = 0;
  /// Destroys the backward lambda (and whatever plain values it captured).
  virtual void destroy_backward() = 0;

 private:
  const char* name_;
  SavedTensor* saved_ = nullptr;
  std::uint32_t saved_count_ = 0;
  bool released_ = false;
  // Only nodes that save their output keep a handle to themselves: a weak_ptr in every node
  // (enable_shared_from_this) would cost locked instructions on every node's creation and death.
  std::weak_ptr<FunctionNode> self_;
  /// In-place ops on a view only (null elsewhere: a pointer, not a 32-byte std::function).
  std::unique_ptr<std::function<std::shared_ptr<Node>()>> output_history_;
};

/// A FunctionNode holding its backward lambda of type F and N saved tensors in place.
template <typename F, std::size_t N>
class FunctionNodeOf final : public FunctionNode {
 public:
  FunctionNodeOf(const char* name, F fn) : FunctionNode(name), fn_(std::move(fn)) {
    set_saved_storage(saved_.data(), N);
  }

 protected:
  std::vector<Tensor> call_backward(const Tensor& grad) override { return (*fn_)(grad, *this); }
  void destroy_backward() override { fn_.reset(); }

 private:
  std::optional<F> fn_;
  std::array<SavedTensor, N> saved_;
};

/// The node that adds incoming gradients into a leaf's grad().
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf);
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(const Tensor& grad) override;
  const std::shared_ptr<TensorImpl>& leaf() const { return leaf_; }
  /// The leaf's current shape and dtype (not a copy made when the node was).
  const Shape& output_shape(std::size_t = 0) const override { return leaf_->shape; }
  Dtype output_dtype(std::size_t = 0) const override { return leaf_->dtype; }

 private:
  /// grad() += the incoming gradient, under the leaf's lock.
  void accumulate(const Tensor& grad);
  std::shared_ptr<TensorImpl> leaf_;
};

/// Anomaly mode (Note [Anomaly mode], autograd.h): throws if node n returned a nan or inf
/// gradient for a finite incoming gradient.
void check_backward_anomaly(const Node& n, const Tensor& grad, const std::vector<Tensor>& grads);

/// Anomaly mode: throws if a hook on node n's gradient returned `result` with a nan or inf that
/// the gradient it was given did not hold.
void check_hook_anomaly(const Node& n, const PreHook& hook, const Tensor& grad,
                        const Tensor& result);
/// This thread's call stack (return addresses), for anomaly mode and minigrad::Error.
std::vector<void*> capture_trace();
/// The call stack of a hook being registered: recorded only when anomaly mode is on.
std::vector<void*> hook_trace();
/// "train.cpp:42, in main": the first frame of trace outside minigrad (Note [Anomaly mode]).
std::string creation_site(const std::vector<void*>& trace);

/// The edge a gradient for t flows along: its grad_fn, its leaf accumulator, or none.
Edge gradient_edge(const Tensor& t);

/// Attaches `node` (edges already set) to `out` as its grad_fn; anomaly mode's forward check.
void finish_record(const char* name, Tensor& out, std::shared_ptr<FunctionNode> node,
                   std::initializer_list<const Tensor*> inputs);
void finish_record(const char* name, Tensor& out, std::shared_ptr<FunctionNode> node,
                   const std::vector<Tensor>& inputs);

/// A new node holding `backward` and room for N saved tensors, through the caching allocator.
template <std::size_t N, typename F>
std::shared_ptr<FunctionNode> make_function_node(const char* name, F&& backward) {
  using Node_ = FunctionNodeOf<std::decay_t<F>, N>;
  return std::allocate_shared<Node_>(CachingAllocator<Node_>{}, name, std::forward<F>(backward));
}

template <std::size_t N, typename F>
void record_impl(const char* name, Tensor& out, std::initializer_list<const Tensor*> inputs,
                 const Save* saves, F&& backward) {
  if (!any_requires_grad(inputs)) return;
  try {
    auto node = make_function_node<N>(name, std::forward<F>(backward));
    std::vector<Edge>& edges = NodeAccess::edges(*node);
    edges.reserve(inputs.size());
    for (const Tensor* t : inputs) edges.push_back(gradient_edge(*t));
    if constexpr (N > 0) node->save(saves, N, out, node);
    finish_record(name, out, std::move(node), inputs);
  } catch (const std::bad_alloc&) {
    throw_out_of_memory_recording(name);  // Note [Out of memory]
  }
}

/// Makes `out` the result of a differentiable op on `inputs` if any input requires grad and grad
/// mode is on. `saves` lists what backward reads (Note [Saved tensors]); `backward` is the lambda.
template <std::size_t N, typename F>
void record(const char* name, Tensor& out, std::initializer_list<const Tensor*> inputs,
            const Save (&saves)[N], F&& backward) {
  record_impl<N>(name, out, inputs, saves, std::forward<F>(backward));
}
/// The same for an op whose backward reads no tensor (add, a view): it may run twice.
template <typename F>
void record(const char* name, Tensor& out, std::initializer_list<const Tensor*> inputs,
            F&& backward) {
  record_impl<0>(name, out, inputs, nullptr, std::forward<F>(backward));
}

/// For ops over a list of tensors (cat, stack): backward reads no tensor.
template <typename F>
void record(const char* name, Tensor& out, const std::vector<Tensor>& inputs, F&& backward) {
  if (!is_grad_enabled()) return;
  bool any = false;
  for (const auto& t : inputs) any |= t.requires_grad();
  if (!any) return;
  try {
    auto node = make_function_node<0>(name, std::forward<F>(backward));
    std::vector<Edge>& edges = NodeAccess::edges(*node);
    edges.reserve(inputs.size());
    for (const auto& t : inputs) edges.push_back(gradient_edge(t));
    finish_record(name, out, std::move(node), inputs);
  } catch (const std::bad_alloc&) {
    throw_out_of_memory_recording(name);  // Note [Out of memory]
  }
}

}  // namespace minigrad::detail
