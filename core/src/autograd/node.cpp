// Graph nodes: FunctionNode (an op's backward), AccumulateGrad (a leaf's sink), and record().
#include <atomic>

#include "autograd/function.h"
#include "minigrad/ops.h"

namespace minigrad {

namespace {
std::atomic<std::uint64_t> next_sequence_nr{0};
}

namespace {
std::atomic<std::int64_t> live_nodes{0};
}

namespace autograd {
std::int64_t live_node_count() { return live_nodes.load(std::memory_order_relaxed); }
}  // namespace autograd

Node::Node() : sequence_nr_(next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {
  live_nodes.fetch_add(1, std::memory_order_relaxed);
}

// Note [Iterative graph destruction]
// Dropping the last handle to a long graph (a 100,000-op chain) would destroy node after node
// recursively and overflow the stack. Instead a dying node hands its edges to a thread-local
// list, and only the outermost destructor on the stack drains that list, one node at a time.
namespace {
thread_local std::vector<std::shared_ptr<Node>> pending_destruction;
thread_local bool draining = false;
}  // namespace

Node::~Node() {
  live_nodes.fetch_sub(1, std::memory_order_relaxed);
  for (auto& e : next_edges_)
    if (e.fn) pending_destruction.push_back(std::move(e.fn));
  if (draining) return;
  draining = true;
  while (!pending_destruction.empty()) {
    std::shared_ptr<Node> n = std::move(pending_destruction.back());
    pending_destruction.pop_back();
    n.reset();
  }
  draining = false;
}

namespace detail {

std::vector<Tensor> FunctionNode::apply(const Tensor& grad) {
  MG_CHECK(!released_, "backward",
           "trying to backward through the graph a second time (or to use saved tensors after "
           "they were freed) at ",
           name_,
           ": the saved tensors were freed by the first backward; call backward(gradient, "
           "/*retain_graph=*/true) the first time if you need to backward twice");
  return fn_(grad, *this);
}

void FunctionNode::release() {
  if (!saves_tensors_ && !output_) return;
  fn_ = nullptr;
  output_.reset();
  released_ = true;
}

void FunctionNode::save_output(const Tensor& out) { output_ = out.detach().impl_ptr(); }

Tensor FunctionNode::output() {
  MG_CHECK(output_ != nullptr, name_, "internal error: the output was not saved");
  // Re-attach the saved data to this node, so that create_graph differentiates through it.
  auto impl = std::make_shared<TensorImpl>(*output_);
  impl->requires_grad = true;
  impl->grad_fn = shared_from_this();
  return Tensor(std::move(impl));
}

AccumulateGrad::AccumulateGrad(std::shared_ptr<TensorImpl> leaf) : leaf_(std::move(leaf)) {
  set_output_meta(leaf_->shape, leaf_->dtype);
}

std::vector<Tensor> AccumulateGrad::apply(const Tensor& grad) {
  Tensor& g = leaf_->grad;
  if (!g.defined()) {
    // Take the incoming gradient when nothing else can see it (the engine's buffer was its only
    // owner); otherwise copy it: it may alias another leaf's gradient or the user's tensor.
    bool exclusive = grad.impl_ptr().use_count() == 1 && grad.impl()->storage.use_count() == 1 &&
                     grad.is_contiguous() && !grad.requires_grad();
    g = is_grad_enabled() ? grad : (exclusive ? grad : grad.detach().clone());
  } else {
    g = is_grad_enabled() ? g + grad : (g + grad).detach();
  }
  return {};
}

Edge gradient_edge(const Tensor& t) {
  TensorImpl* impl = t.impl();
  if (impl == nullptr || !impl->requires_grad) return Edge{nullptr};
  if (impl->grad_fn) return Edge{impl->grad_fn};
  std::shared_ptr<Node> acc = impl->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    for (auto& h : impl->leaf_hooks) acc->pre_hooks().push_back(h);
    impl->grad_accumulator = acc;
  }
  return Edge{acc};
}

namespace {
void finish_record(const char* name, Tensor& out, std::vector<Edge> edges, BackwardFn backward,
                   bool saves_tensors, SaveOutput save_output) {
  auto node = std::make_shared<FunctionNode>(name, std::move(backward), saves_tensors);
  node->mutable_next_edges() = std::move(edges);
  node->set_output_meta(out.shape(), out.dtype());
  if (save_output == SaveOutput::kYes) node->save_output(out);
  TensorImpl* impl = out.impl();
  impl->requires_grad = true;
  impl->grad_fn = std::move(node);
}
}  // namespace

void record(const char* name, Tensor& out, std::initializer_list<const Tensor*> inputs,
            BackwardFn backward, bool saves_tensors, SaveOutput save_output) {
  if (!any_requires_grad(inputs)) return;
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor* t : inputs) edges.push_back(gradient_edge(*t));
  finish_record(name, out, std::move(edges), std::move(backward), saves_tensors, save_output);
}

void record(const char* name, Tensor& out, const std::vector<Tensor>& inputs, BackwardFn backward,
            bool saves_tensors) {
  if (!is_grad_enabled()) return;
  bool any = false;
  for (const auto& t : inputs) any |= t.requires_grad();
  if (!any) return;
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const auto& t : inputs) edges.push_back(gradient_edge(t));
  finish_record(name, out, std::move(edges), std::move(backward), saves_tensors, SaveOutput::kNo);
}

}  // namespace detail
}  // namespace minigrad
