// Stepping through backward (minigrad/backward_steps.h): backward() with the engine's observer
// installed, and the steps as text.
#include "minigrad/backward_steps.h"

#include <iostream>
#include <sstream>

#include "autograd/function.h"
#include "autograd/observer.h"
#include "minigrad/error.h"
#include "minigrad/parameter_names.h"
#include "tensor_impl.h"

namespace minigrad::autograd {
namespace {

/// "AccumulateGrad (W_q.weight)" for a leaf's node, else the node's name.
std::string describe(const Node& n, std::string* leaf_out = nullptr) {
  auto* acc = dynamic_cast<const detail::AccumulateGrad*>(&n);
  if (!acc) return n.name();
  std::string leaf = parameter_name(Tensor(acc->leaf()));
  if (leaf.empty()) {
    std::ostringstream os;
    os << "a leaf of shape " << acc->leaf()->shape;
    leaf = os.str();
  }
  if (leaf_out) *leaf_out = leaf;
  return n.name() + " (" + leaf + ")";
}

/// t as operator<< prints it, its lines after the first indented by `indent` spaces.
std::string indented(const Tensor& t, std::size_t indent) {
  std::ostringstream os;
  os << t;
  std::string s = os.str(), out;
  for (char c : s) {
    out += c;
    if (c == '\n') out += std::string(indent, ' ');
  }
  return out;
}

}  // namespace

std::vector<BackwardStep> backward_steps(const Tensor& loss, bool retain_graph) {
  MG_CHECK(loss.defined(), "backward_steps", "the loss is an undefined tensor");
  MG_CHECK(loss.requires_grad(), "backward_steps",
           "the loss does not require grad: nothing to step through (did you forget "
           "requires_grad_(), or run the forward under NoGradGuard?)");
  MG_CHECK(loss.numel() == 1, "backward_steps", "the loss must be a scalar, but it has shape ",
           loss.shape(), " (reduce it first, e.g. .sum() or .mean())");
  std::vector<BackwardStep> steps;
  detail::BackwardObserver observe = [&steps](const Node& n, const std::vector<Tensor>& received,
                                              const std::vector<Tensor>& passed) {
    BackwardStep step;
    step.node = n.name();
    describe(n, &step.leaf);
    step.received = received;
    const auto& edges = n.next_edges();
    for (std::size_t i = 0; i < passed.size(); ++i) {
      BackwardStep::Pass p;
      if (i < edges.size() && edges[i].fn) p.to = describe(*edges[i].fn);
      p.grad = passed[i];
      step.passed.push_back(std::move(p));
    }
    steps.push_back(std::move(step));
  };
  detail::BackwardObserverGuard guard(&observe);
  autograd::backward({loss}, {}, retain_graph);
  return steps;
}

std::string format_backward_steps(const std::vector<BackwardStep>& steps) {
  std::ostringstream os;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const BackwardStep& s = steps[i];
    const std::string number = std::to_string(i + 1) + ". ";
    os << number << s.node;
    if (!s.leaf.empty()) os << " (" << s.leaf << ")";
    os << "\n";
    const std::size_t pad = number.size() + 2;
    for (std::size_t k = 0; k < s.received.size(); ++k) {
      if (!s.received[k].defined()) continue;
      const std::string head =
          s.received.size() > 1 ? "receives (output " + std::to_string(k) + ") " : "receives ";
      os << std::string(pad, ' ') << head << indented(s.received[k], pad + head.size()) << "\n";
    }
    if (!s.leaf.empty()) {
      os << std::string(pad, ' ') << "and adds it into " << s.leaf << ".grad()\n";
      continue;
    }
    for (std::size_t k = 0; k < s.passed.size(); ++k) {
      const BackwardStep::Pass& p = s.passed[k];
      if (p.to.empty()) {
        os << std::string(pad, ' ') << "input " << k << " needs no gradient\n";
        continue;
      }
      const std::string head = "passes to " + p.to + ": ";
      os << std::string(pad, ' ') << head
         << (p.grad.defined() ? indented(p.grad, pad + head.size()) : std::string("nothing"))
         << "\n";
    }
  }
  return os.str();
}

void print_backward(const Tensor& loss, std::ostream& os, bool retain_graph) {
  os << format_backward_steps(backward_steps(loss, retain_graph));
}

void print_backward(const Tensor& loss, bool retain_graph) {
  print_backward(loss, std::cout, retain_graph);
}

}  // namespace minigrad::autograd
