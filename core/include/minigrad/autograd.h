#pragma once
// Autograd: graph nodes, the backward engine's entry points and the public gradient checker.
// See docs/architecture.md, Note [The engine].
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad {

/// An edge of the backward graph: the node that receives a gradient (nullptr when that input
/// does not require grad), and which of its outputs the gradient is for.
struct Edge {
  std::shared_ptr<Node> fn;
  std::uint32_t input_nr = 0;
};

namespace detail {
struct NodeAccess;
}

namespace autograd {
/// The module call that created a graph node: what to_dot's collapse_modules draws as one box.
/// Recorded only while nn::RecordModuleScopes is alive (Note [Module scopes], nn/module.h).
struct ModuleScope {
  std::string name;                           // qualified, as named_modules(): "blocks.0.attn"
  std::string type_name;                      // the module's class: "MultiheadAttention"
  const void* module = nullptr;               // which module (two calls of one share it)
  std::shared_ptr<const ModuleScope> parent;  // the enclosing module call, or null
  int depth = 1;                              // 1 for a call outside any other scope
};

/// While alive, nodes created on this thread remember a new scope (a call of `module`) inside the
/// current one. Opens nothing when `module` is already the innermost scope (a holder's call
/// operator and the module's own guard). nn::ModuleScope opens these; it is core's half.
class ModuleScopeGuard {
 public:
  ModuleScopeGuard(const void* module, std::string name, std::string type_name);
  ~ModuleScopeGuard();
  ModuleScopeGuard(const ModuleScopeGuard&) = delete;
  ModuleScopeGuard& operator=(const ModuleScopeGuard&) = delete;

 private:
  bool pushed_ = false;
};
}  // namespace autograd

/// A hook on the gradient of one output of a node (what Tensor::register_hook adds).
struct PreHook {
  std::uint32_t output_nr = 0;
  TensorHook fn;
  /// Where it was registered, kept when anomaly mode was on (for its nan/inf message).
  std::vector<void*> trace = {};
};

/// A node of the backward graph (a tensor's grad_fn). It receives one gradient per forward output
/// (ops have one output; a custom Function may have several) and returns one gradient per
/// forward input (next_edges()). Backward formulas are written with public differentiable ops, so
/// create_graph works through them. Only the engine rewires a node: what a user may call is
/// below (PyTorch's name, next_functions, needs_input_grad, hooks).
class Node {
 public:
  /// Destroys the graph behind this node iteratively (Note [Iterative graph destruction]).
  virtual ~Node();
  /// PyTorch's name for the node, e.g. "MulBackward0".
  virtual std::string name() const = 0;
  /// Gradients for each forward input, given the gradient of the forward output. An entry may
  /// be undefined when that input needs no gradient.
  virtual std::vector<Tensor> apply(const Tensor& grad) = 0;
  /// The same for a node with several outputs: one gradient per output, undefined for an output
  /// no gradient reached. The engine calls it when num_outputs() > 1.
  virtual std::vector<Tensor> apply_outputs(std::vector<Tensor> grads) { return apply(grads[0]); }
  /// Frees saved tensors after a backward without retain_graph.
  virtual void release() {}

  /// Where this node's gradients go, one edge per forward input (PyTorch's next_functions).
  const std::vector<Edge>& next_edges() const { return next_edges_; }
  /// Whether forward input i needs a gradient (its edge is set).
  bool needs_input_grad(std::size_t i) const {
    return i < next_edges_.size() && next_edges_[i].fn != nullptr;
  }
  /// Number of forward outputs (gradients this node receives).
  std::size_t num_outputs() const { return num_outputs_; }
  /// Shape and dtype of forward output i: what its incoming gradient must look like.
  virtual const Shape& output_shape(std::size_t i = 0) const;
  virtual Dtype output_dtype(std::size_t i = 0) const;
  /// Creation order; the engine runs later nodes first among the ready ones, as PyTorch does.
  std::uint64_t sequence_nr() const { return sequence_nr_; }

  /// Calls hook with the gradient of output `output_nr` before apply(); the hook may return a
  /// replacement. Returns the hook's index (Tensor::register_hook on a non-leaf calls this).
  std::size_t register_prehook(TensorHook hook, std::uint32_t output_nr = 0);
  /// The call stack (return addresses) where this node's op ran; recorded in anomaly mode only.
  const std::vector<void*>& creation_trace() const;
  /// The module call this node was created in (null unless recorded under
  /// nn::RecordModuleScopes inside a module's forward).
  const std::shared_ptr<const autograd::ModuleScope>& module_scope() const { return module_scope_; }

 protected:
  Node();
  std::vector<Edge>& mutable_next_edges() { return next_edges_; }
  void set_output_meta(const Shape& shape, Dtype dtype) {
    output_shape_ = shape;
    output_dtype_ = dtype;
  }
  /// For nodes with several outputs: the shape and dtype of each, in order.
  void set_outputs_meta(const std::vector<std::pair<Shape, Dtype>>& outputs);

 private:
  friend struct detail::NodeAccess;
  /// What few nodes need, made on first use (Note [Node extras], node.cpp).
  struct Extras {
    std::vector<std::pair<Shape, Dtype>> more_outputs;  // outputs 1, 2, ... of a multi-output op
    std::vector<PreHook> pre_hooks;
    std::vector<std::weak_ptr<TensorImpl>> retained;  // retain_grad() on an output of this node
    std::vector<void*> creation_trace;                // anomaly mode
  };
  Extras& extras();

  std::vector<Edge> next_edges_;
  Shape output_shape_;
  Dtype output_dtype_ = kFloat32;
  /// Whether this is a leaf's AccumulateGrad node (set by it; read by the engine instead of a
  /// dynamic_cast per node).
  bool is_accumulate_grad_ = false;
  std::uint32_t num_outputs_ = 1;
  std::uint64_t sequence_nr_;
  std::shared_ptr<const autograd::ModuleScope> module_scope_;
  std::unique_ptr<Extras> extras_;
};

namespace autograd {

/// libtorch's names: a Variable is a Tensor, and custom Functions take and return variable_lists.
using Variable = Tensor;
using variable_list = std::vector<Tensor>;

/// Computes and accumulates into .grad() the gradients of `outputs` (seeded with grad_outputs,
/// which may be empty for scalar outputs) with respect to every leaf that requires grad.
/// retain_graph defaults to create_graph. With `inputs` (torch.autograd.backward's), only those
/// tensors get a gradient, and only the part of the graph that leads to them runs: a leaf into
/// grad(), a non-leaf too (it retain_grad()s from then on, as PyTorch does). An input that does
/// not require grad throws; one the outputs do not reach gets nothing (as PyTorch).
void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const std::vector<Tensor>& inputs = {});

/// A new tensor sharing data's storage and geometry but none of its history, with the given
/// requires_grad, as libtorch's torch::autograd::make_variable (what a custom op's forward uses
/// to wrap a result). allow_tensor_metadata_change is accepted and changes nothing.
Tensor make_variable(const Tensor& data, bool requires_grad = false,
                     bool allow_tensor_metadata_change = true);

/// Returns d(outputs)/d(inputs) . grad_outputs without touching any .grad(), as
/// torch.autograd.grad. An input that the outputs do not depend on throws unless allow_unused (then
/// its entry is undefined). retain_graph defaults to create_graph.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                         bool allow_unused = false);

// Note [Anomaly mode]
// With anomaly detection on, every op that records a graph node checks its output: a nan or an
// inf that the op produced (its inputs had none; masked_fill's fill value is deliberate) throws
//   [exp] produced inf in forward (created at train.cpp:42, in main)
// and every backward function checks the gradients it returns, given a finite incoming one:
//   [sqrt] produced inf in backward: SqrtBackward0's gradient for input 0 (created at ...)
// The creation site is the first frame of the op's call stack outside minigrad, read in-process
// with GCC's libbacktrace (no shell); it has a file and line when the program has debug
// information (-g), and only a function name otherwise. Off by default: then the cost is one
// relaxed atomic load per recorded op and per backward node.

/// Turns anomaly detection on or off for the whole process (torch.autograd.set_detect_anomaly).
void set_detect_anomaly(bool enabled);
bool is_anomaly_enabled();
/// Anomaly detection while alive (torch.autograd.detect_anomaly); restores the previous setting.
class DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool enabled = true);
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

/// Records an in-place write made behind minigrad's back (through data_ptr()), so that backward
/// notices it in a tensor saved for backward (torch.autograd.graph.increment_version).
void increment_version(const Tensor& t);

/// The number of graph nodes alive in the process: a test of "backward frees the graph".
std::int64_t live_node_count();

/// What to_dot draws besides the nodes and edges.
struct DotOptions {
  /// Names for leaves (e.g. a model's named_parameters()); a leaf not listed here is named by
  /// parameter_name() when a Module listed it, else by its shape only.
  std::vector<std::pair<std::string, Tensor>> names{};
  /// Draw the tensors each node saved for backward (orange, dashed edge to the node).
  bool show_saved = true;
  /// Draw each module call as one box (its name from named_modules(), its class, how many nodes
  /// it holds and its output's shape) instead of its nodes. The graph must have been built under
  /// nn::RecordModuleScopes; throws when no node was recorded inside a module.
  bool collapse_modules = false;
  /// With collapse_modules, which level of nested module calls becomes a box: 1 the outermost
  /// below the root ("blocks.0"), 2 the modules they call ("blocks.0.attn"), ... Nodes of a
  /// shallower call (a block's residual add at depth 2) are drawn one by one.
  int collapse_depth = 1;
};

/// The graph behind outputs in Graphviz's DOT language, as torchviz's make_dot: one box per node
/// of backward (its grad_fn name, e.g. MulBackward0, and the shape and dtype it produced), the
/// leaves that require grad (blue, with their names), the outputs (green) and, with show_saved,
/// the saved tensors; edges point the way backward runs, from the outputs to the leaves.
/// Render it with `dot -Tpng graph.dot -o graph.png` or minigrad::viz::draw_graph.
std::string to_dot(const std::vector<Tensor>& outputs, const DotOptions& options = {});
std::string to_dot(const Tensor& output, const DotOptions& options = {});

/// The function type gradcheck takes: inputs in, one tensor out.
using GradcheckFn = std::function<Tensor(const std::vector<Tensor>&)>;

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  /// Throw minigrad::Error with the report instead of returning false.
  bool raise_exception = false;
};

/// The outcome of a gradient check; `message` names the input, the element (the output element
/// and the input element), the analytic and the numeric value of the first mismatch.
struct GradcheckResult {
  bool ok = true;
  std::string message;
  /// Number of Jacobian entries compared.
  std::int64_t checked = 0;
  explicit operator bool() const { return ok; }
};

/// Compares the analytic Jacobian of fn (by backward) with central finite differences, for every
/// input that requires grad. Inputs must be float64 (float32 is too coarse for finite differences).
GradcheckResult gradcheck_report(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                                 const GradcheckOptions& options = {});
/// gradcheck_report(...).ok, as torch.autograd.gradcheck.
bool gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
               const GradcheckOptions& options = {});

/// Checks second derivatives: gradcheck of (inputs, v) -> d(fn . v)/d(inputs), with a random v.
GradcheckResult gradgradcheck_report(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                                     const GradcheckOptions& options = {});
bool gradgradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                   const GradcheckOptions& options = {});

}  // namespace autograd
}  // namespace minigrad
