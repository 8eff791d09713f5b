// The backward engine.
//
// Note [The engine]
// Backward runs in three iterative passes, with no recursion anywhere (a 100,000-op chain works
// under the default stack):
//  1. Walk the graph from the roots with an explicit stack and count, for every node, how many
//     edges lead into it (its dependencies).
//  2. Seed each root's gradient buffer, then repeatedly take a ready node (all of its
//     dependencies delivered; among ready nodes the most recently created first, as PyTorch),
//     run its pre-hooks, store retained gradients, call apply(), and free its saved tensors
//     unless retain_graph.
//  3. Check every gradient a node returns before routing it: one per input, and its shape must
//     equal the input's or reduce to it by summing broadcast dims. This is the one place where
//     broadcast gradients are reduced (sum_to), so ops return gradients shaped like their
//     output. A dtype different from the input's is converted.
// Gradients arriving at the same node are summed into its buffer, one per output of the node
// (an edge names the output it feeds: custom Functions have several). Under create_graph the
// whole pass records history (grad mode on), so the gradients can be differentiated again.
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/function.h"
#include "autograd/observer.h"
#include "kernels/dispatch.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/profiler.h"
#include "parallel.h"
#include "tensor_impl.h"

namespace minigrad {
namespace {

// The engine's per-backward maps allocate one node per graph node: through the caching allocator
// (Note [Caching allocator]) that is a free-list pop instead of a malloc.
template <typename K, typename V>
using Map = std::unordered_map<K, V, std::hash<K>, std::equal_to<K>,
                               detail::CachingAllocator<std::pair<const K, V>>>;
template <typename K>
using Set = std::unordered_set<K, std::hash<K>, std::equal_to<K>, detail::CachingAllocator<K>>;

thread_local detail::BackwardObserver* t_observer = nullptr;

struct LaterFirst {
  bool operator()(const Node* a, const Node* b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

/// Whether `grad` (shape g) can be reduced to `target` by summing broadcast dims.
bool reducible_to(const Shape& g, const Shape& target) {
  if (g.size() < target.size()) return false;
  std::size_t lead = g.size() - target.size();
  for (std::size_t i = 0; i < target.size(); ++i)
    if (target[i] != 1 && target[i] != g[lead + i]) return false;
  return true;
}

Tensor validate(const Node& producer, std::size_t index, Tensor grad, const Node& consumer,
                std::uint32_t output_nr) {
  const Shape& want = consumer.output_shape(output_nr);
  if (grad.shape() != want) {
    MG_CHECK(reducible_to(grad.shape(), want), "backward", "Function ", producer.name(),
             " returned an invalid gradient at index ", index, ": got shape ", grad.shape(),
             " but expected shape ", want, " or one that broadcasts to it");
    grad = detail::sum_to(grad, want);
  }
  Dtype dtype = consumer.output_dtype(output_nr);
  if (grad.dtype() != dtype) grad = grad.to(dtype);
  return grad;
}

/// buffer += grad. Without create_graph, a sum into a gradient that is ours alone is taken in
/// place, as PyTorch's InputBuffer::accumulate: the two gradients of a tied embedding (GPT-2
/// small's 154 MB table) otherwise summed into a fresh, page-faulted buffer every step. The same
/// bits: a + b == b + a, and add_ rounds as add.
void accumulate(Tensor& buffer, Tensor grad) {
  if (!buffer.defined()) {
    buffer = std::move(grad);
    return;
  }
  // into += from for two contiguous floating tensors of one shape and dtype.
  auto add_into = [](Tensor& into, const Tensor& from) {
    detail::dispatch_floating(into.dtype(), "backward", [&]<typename T>() {
      T* a = into.data_ptr<T>();
      const T* b = from.data_ptr<T>();
      detail::parallel_for(0, into.numel(), detail::kGrainSize,
                           [&](std::int64_t i0, std::int64_t i1) {
                             for (std::int64_t i = i0; i < i1; ++i) a[i] += b[i];
                           });
    });
    ++into.impl()->storage->version;
  };
  if (!is_grad_enabled() && buffer.shape() == grad.shape() && buffer.dtype() == grad.dtype() &&
      buffer.is_floating_point() && buffer.is_contiguous() && grad.is_contiguous()) {
    if (detail::sole_owner(buffer)) {
      add_into(buffer, grad);
      return;
    }
    if (detail::sole_owner(grad)) {
      add_into(grad, buffer);
      buffer = std::move(grad);
      return;
    }
  }
  buffer = buffer + grad;
}

/// The incoming gradients of a node: output 0's, and the others' for nodes with several.
struct InputBuffer {
  Tensor first;
  std::vector<Tensor> rest;
  void add(std::uint32_t output_nr, Tensor grad, std::size_t num_outputs) {
    if (output_nr == 0) return accumulate(first, std::move(grad));
    if (rest.size() < num_outputs - 1) rest.resize(num_outputs - 1);
    accumulate(rest[output_nr - 1], std::move(grad));
  }
  Tensor& at(std::uint32_t output_nr) { return output_nr == 0 ? first : rest[output_nr - 1]; }
};

/// Runs node n's hooks on the gradient of output k and stores it for retain_grad().
void run_hooks(Node& n, std::uint32_t k, Tensor& grad, bool create_graph) {
  // By index, and only the hooks there were when it started: a hook may register another one,
  // which reallocates the list.
  std::vector<PreHook>* hooks = detail::NodeAccess::pre_hooks_if(n);
  const std::size_t count = hooks ? hooks->size() : 0;
  for (std::size_t h = 0; h < count; ++h) {
    if ((*hooks)[h].output_nr != k) continue;
    PreHook hook = (*hooks)[h];
    Tensor r = hook.fn(grad);
    if (!r.defined()) continue;
    // As PyTorch: a hook may change the values, never the shape or the dtype.
    MG_CHECK(r.shape() == grad.shape(), "hook",
             "a hook changed the size of the gradient: it returned shape ", r.shape(),
             " for a gradient of shape ", grad.shape(), " (at ", n.name(), ")");
    MG_CHECK(r.dtype() == grad.dtype(), "hook",
             "a hook changed the type of the gradient: it returned ", dtype_name(r.dtype()),
             " for a gradient of ", dtype_name(grad.dtype()), " (at ", n.name(), ")");
    if (autograd::is_anomaly_enabled()) detail::check_hook_anomaly(n, hook, grad, r);
    grad = std::move(r);
  }
  const auto* retained = detail::NodeAccess::retained_if(n);
  if (retained == nullptr) return;
  for (const auto& weak : *retained) {
    if (auto impl = weak.lock()) {
      if (impl->output_nr != k) continue;
      Tensor g = create_graph ? grad : grad.detach();
      Tensor& kept = impl->autograd_meta().grad;
      kept = kept.defined() ? kept + g : g.clone();
    }
  }
}

/// An input of autograd::grad: the gradient arriving at output `output_nr` of its node goes to
/// `index` of the result.
struct Capture {
  std::size_t index;
  std::uint32_t output_nr;
};

/// Runs backward from `roots` (with their seed gradients). When `capture` is given, only the nodes
/// that lead to a captured one run (Note [Pruning autograd::grad]); with `captured`, the gradient
/// arriving at each captured node is stored there at its index instead of being accumulated into
/// a leaf (torch.autograd.grad); without it (backward's `inputs`), the captured leaves'
/// AccumulateGrad nodes run and no other leaf's does.
void run_backward(const std::vector<Edge>& roots, std::vector<Tensor> root_grads, bool keep_graph,
                  bool create_graph, const std::unordered_map<Node*, std::vector<Capture>>* capture,
                  std::vector<Tensor>* captured) {
  GradModeGuard grad_mode(create_graph);

  // 1. Dependencies.
  Map<Node*, int> deps;
  Set<Node*> seen;
  std::vector<Node*> stack;
  for (const Edge& r : roots)
    if (seen.insert(r.fn.get()).second) stack.push_back(r.fn.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges()) {
      if (!e.fn) continue;
      ++deps[e.fn.get()];
      if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
  }

  // Note [Pruning autograd::grad]
  // torch.autograd.grad runs only the nodes whose gradients can reach a requested input: a
  // branch that leads elsewhere (another leaf, a frozen weight's history) is neither run nor
  // freed. `useful` holds the nodes with an edge to a node that reaches a captured one.
  Set<Node*> useful;
  if (capture) {
    Map<Node*, std::vector<Node*>> parents;
    for (Node* n : seen)
      for (const Edge& e : n->next_edges())
        if (e.fn) parents[e.fn.get()].push_back(n);
    Set<Node*> reaches;
    for (const auto& entry : *capture)
      if (seen.count(entry.first) && reaches.insert(entry.first).second)
        stack.push_back(entry.first);
    while (!stack.empty()) {
      Node* c = stack.back();
      stack.pop_back();
      for (Node* p : parents[c]) {
        useful.insert(p);
        if (reaches.insert(p).second) stack.push_back(p);
      }
    }
  }

  // 2. Seed and run.
  Map<Node*, InputBuffer> buffers;
  for (std::size_t i = 0; i < roots.size(); ++i)
    buffers[roots[i].fn.get()].add(roots[i].input_nr, root_grads[i], roots[i].fn->num_outputs());
  std::priority_queue<Node*, std::vector<Node*>, LaterFirst> ready;
  Set<Node*> queued;
  for (const Edge& r : roots)
    if (deps[r.fn.get()] == 0 && queued.insert(r.fn.get()).second) ready.push(r.fn.get());

  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    InputBuffer in;
    if (auto it = buffers.find(n); it != buffers.end()) {
      in = std::move(it->second);
      buffers.erase(it);
    }
    const std::size_t outputs = n->num_outputs();
    in.rest.resize(outputs - 1);
    bool any = false;
    for (std::uint32_t k = 0; k < outputs; ++k) any |= in.at(k).defined();
    std::vector<Tensor> grads;
    const bool is_accumulator = detail::NodeAccess::is_accumulate_grad(*n);
    if (any) {
      for (std::uint32_t k = 0; k < outputs; ++k)
        if (in.at(k).defined()) run_hooks(*n, k, in.at(k), create_graph);
      bool skip = false;
      if (capture && captured) {
        if (auto it = capture->find(n); it != capture->end()) {
          for (const Capture& c : it->second)
            if (in.at(c.output_nr).defined()) accumulate((*captured)[c.index], in.at(c.output_nr));
        }
        // autograd::grad never writes .grad, nor runs what cannot reach an input.
        skip = is_accumulator || !useful.count(n);
      } else if (capture) {
        // backward(inputs=...): only the listed leaves accumulate (a listed non-leaf's gradient
        // was stored by run_hooks, as it retains grad), only what leads to them runs.
        skip = is_accumulator ? !capture->count(n) : !useful.count(n);
      }
      if (!skip) {
        // Note [Profiler]: a backward node is timed under its name ("MmBackward0").
        const bool profiled = profiler::detail::is_on() && profiler::detail::begin(n->name());
        struct EndScope {
          bool open;
          ~EndScope() {
            if (open) profiler::detail::end();
          }
        } end_scope{profiled};
        if (outputs == 1) {
          grads = n->apply(in.first);
        } else {
          std::vector<Tensor> all{in.first};
          for (auto& g : in.rest) all.push_back(g);
          grads = n->apply_outputs(std::move(all));
        }
        if (autograd::is_anomaly_enabled()) {
          Tensor incoming = in.first;
          for (std::uint32_t k = 1; !incoming.defined() && k < outputs; ++k) incoming = in.at(k);
          detail::check_backward_anomaly(*n, incoming, grads);
        }
      }
      if (!keep_graph && !(capture && !is_accumulator && !useful.count(n))) n->release();
    }
    const auto& edges = n->next_edges();
    MG_CHECK(grads.empty() || grads.size() == edges.size(), "backward", "Function ", n->name(),
             " returned ", grads.size(), " gradients but has ", edges.size(), " inputs");
    std::vector<Tensor> passed;  // for the observer (minigrad/backward_steps.h) only
    if (t_observer && any) passed.resize(is_accumulator ? 0 : edges.size());
    for (std::size_t i = 0; i < edges.size(); ++i) {
      Node* next = edges[i].fn.get();
      if (!next) continue;
      if (i < grads.size() && grads[i].defined()) {
        Tensor g = validate(*n, i, std::move(grads[i]), *next, edges[i].input_nr);
        if (i < passed.size()) passed[i] = g;
        buffers[next].add(edges[i].input_nr, std::move(g), next->num_outputs());
      }
      if (--deps[next] == 0) ready.push(next);
    }
    if (t_observer && any) {
      std::vector<Tensor> received{in.first};
      for (auto& g : in.rest) received.push_back(g);
      (*t_observer)(*n, received, passed);
    }
  }
}

Edge root_edge(const Tensor& t, std::size_t i, const char* op) {
  MG_CHECK(t.defined(), op, "output ", i, " is an undefined tensor");
  MG_CHECK(t.requires_grad(), op, "element ", i,
           " of tensors does not require grad and does not have a grad_fn: nothing to "
           "differentiate (did you forget requires_grad_(), or run the forward under "
           "NoGradGuard?)");
  Edge e = detail::gradient_edge(t);
  return e;
}

std::vector<Tensor> root_gradients(const std::vector<Tensor>& outputs,
                                   const std::vector<Tensor>& grad_outputs, const char* op) {
  MG_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), op, "got ",
           outputs.size(), " outputs but ", grad_outputs.size(), " gradients");
  std::vector<Tensor> grads;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!g.defined()) {
      MG_CHECK(out.numel() == 1, op, "grad can be implicitly created only for scalar outputs, but ",
               "output ", i, " has shape ", out.shape(),
               "; call backward(gradient) with a gradient of that shape");
      g = ones_like(out);
    } else {
      MG_CHECK(g.shape() == out.shape(), op, "gradient ", i, " has shape ", g.shape(),
               " but the output has shape ", out.shape());
      if (g.dtype() != out.dtype()) g = g.to(out.dtype());
    }
    grads.push_back(g);
  }
  return grads;
}

}  // namespace

detail::BackwardObserverGuard::BackwardObserverGuard(BackwardObserver* observer)
    : previous_(t_observer) {
  t_observer = observer;
}
detail::BackwardObserverGuard::~BackwardObserverGuard() { t_observer = previous_; }

namespace autograd {

void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
              std::optional<bool> retain_graph, bool create_graph,
              const std::vector<Tensor>& inputs) {
  MG_CHECK(!outputs.empty(), "backward", "no outputs to differentiate");
  std::vector<Edge> roots;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    roots.push_back(root_edge(outputs[i], i, "backward"));
  std::vector<Tensor> seeds = root_gradients(outputs, grad_outputs, "backward");
  const bool keep_graph = retain_graph.value_or(create_graph) || create_graph;
  if (inputs.empty()) {
    run_backward(roots, std::move(seeds), keep_graph, create_graph, nullptr, nullptr);
    return;
  }
  // As PyTorch's run_backward: each input retains its gradient (a no-op for a leaf), which is
  // what refuses one that does not require grad.
  std::unordered_map<Node*, std::vector<Capture>> capture;
  std::vector<Edge> keep_alive;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    MG_CHECK(inputs[i].defined(), "backward", "input ", i, " of inputs is an undefined tensor");
    MG_CHECK(inputs[i].requires_grad(), "backward",
             "One of the differentiated Tensors does not require grad: input ", i,
             " of inputs (can't retain_grad on Tensor that has requires_grad=False)");
    if (!inputs[i].is_leaf()) inputs[i].retain_grad();
    Edge e = detail::gradient_edge(inputs[i]);
    keep_alive.push_back(e);
    capture[e.fn.get()].push_back(Capture{i, e.input_nr});
  }
  run_backward(roots, std::move(seeds), keep_graph, create_graph, &capture, nullptr);
}

Tensor make_variable(const Tensor& data, bool requires_grad,
                     bool /*allow_tensor_metadata_change*/) {
  if (!data.defined()) return Tensor();
  Tensor out = data.detach();
  if (requires_grad) out.requires_grad_();
  return out;
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused) {
  MG_CHECK(!outputs.empty(), "grad", "no outputs to differentiate");
  MG_CHECK(!inputs.empty(), "grad", "no inputs to differentiate with respect to");
  std::vector<Edge> roots;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    roots.push_back(root_edge(outputs[i], i, "grad"));
  std::unordered_map<Node*, std::vector<Capture>> capture;
  std::vector<Edge> keep_alive;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    MG_CHECK(inputs[i].defined() && inputs[i].requires_grad(), "grad", "input ", i,
             " does not require grad");
    Edge e = detail::gradient_edge(inputs[i]);
    keep_alive.push_back(e);
    capture[e.fn.get()].push_back(Capture{i, e.input_nr});
  }
  std::vector<Tensor> captured(inputs.size());
  run_backward(roots, root_gradients(outputs, grad_outputs, "grad"),
               retain_graph.value_or(create_graph), create_graph, &capture, &captured);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    MG_CHECK(captured[i].defined() || allow_unused, "grad", "input ", i,
             " was not used in the graph of the outputs; pass allow_unused=true to get an "
             "undefined gradient for it");
    if (captured[i].defined() && !create_graph) captured[i] = captured[i].detach();
  }
  return captured;
}

}  // namespace autograd
}  // namespace minigrad
