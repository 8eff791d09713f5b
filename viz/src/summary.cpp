// utils::summary: torchinfo's table, with output shapes read from the autograd graph.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "minigrad/error.h"
#include "minigrad/utils.h"

namespace minigrad::utils {
namespace {

std::string with_commas(std::int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string megabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes / 1e6);
  return buf;
}

/// The node that accumulates p's gradient. A leaf keeps one accumulator while a graph uses it
/// (as PyTorch's grad_accumulator()), so the edge of a fresh op on p leads to the same node as
/// the edges of the graph under summary's output.
const Node* accumulator_of(const Tensor& p) {
  Tensor use = p.view(p.shape());
  return use.grad_fn() ? use.grad_fn()->next_edges().at(0).fn.get() : nullptr;
}

/// The nodes of output's graph (not the accumulators) in the order the forward pass made them,
/// walked without recursion.
std::vector<const Node*> graph_nodes(const Tensor& output) {
  std::vector<const Node*> nodes, stack;
  std::set<const Node*> seen;
  if (output.grad_fn()) stack.push_back(output.grad_fn().get());
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    if (!seen.insert(node).second || node->name() == "AccumulateGrad") continue;
    nodes.push_back(node);
    for (const Edge& e : node->next_edges())
      if (e.fn) stack.push_back(e.fn.get());
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const Node* a, const Node* b) { return a->sequence_nr() < b->sequence_nr(); });
  return nodes;
}

std::int64_t elements(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

/// The first node (in forward order) that combines the parameters with something else, or
/// changes their size: the module's output for a layer (Linear's matmul, Embedding's lookup,
/// LayerNorm). Views of the parameters alone (Linear's weight.t()) are skipped. nullptr if no
/// node uses them.
const Node* first_output(const std::vector<const Node*>& nodes, std::set<const Node*> from_params) {
  for (const Node* node : nodes) {
    bool uses = false, only = true, same_size = true;
    for (const Edge& e : node->next_edges()) {
      if (!e.fn) continue;
      const bool p = from_params.count(e.fn.get()) > 0;
      uses |= p;
      only &= p;
      same_size &= elements(e.fn->output_shape(e.input_nr)) == elements(node->output_shape());
    }
    if (uses && only && same_size)
      from_params.insert(node);
    else if (uses)
      return node;
  }
  return nullptr;
}

/// node, or for matmul's GEMM (MmBackward0, or AddmmBackward0: Linear with a bias) the reshape
/// right after it: matmul of (B, T, C) by a weight runs as one (B*T, C) GEMM and reshapes the
/// result back to (B, T, out).
const Node* after_gemm_reshape(const std::vector<const Node*>& nodes, const Node* node) {
  if (node->name() != "MmBackward0" && node->name() != "AddmmBackward0") return node;
  const Node* only_user = nullptr;
  int users = 0;
  for (const Node* n : nodes)
    for (const Edge& e : n->next_edges())
      if (e.fn.get() == node) {
        only_user = n;
        ++users;
      }
  if (users != 1 || only_user->output_shape().size() <= node->output_shape().size()) return node;
  const std::string name = only_user->name();
  const bool reshape = name.rfind("View", 0) == 0 || name.rfind("UnsafeView", 0) == 0 ||
                       name.rfind("Reshape", 0) == 0;
  return reshape ? only_user : node;
}

}  // namespace

std::string summary(const nn::Module& module, const Tensor& input, const Tensor& output,
                    const SummaryOptions& options) {
  MG_CHECK(input.defined() && output.defined(), "summary", module.type_name(),
           ": the input and the output must be defined tensors");
  GradModeGuard grad_on(true);  // for accumulator_of
  const std::vector<const Node*> nodes = graph_nodes(output);
  std::vector<std::string> names, types, shapes, counts;
  auto modules = module.named_modules();
  for (const auto& [name, m] : modules) {
    const auto depth =
        name.empty() ? 0 : static_cast<std::size_t>(std::count(name.begin(), name.end(), '.')) + 1;
    const std::string leaf = name.empty() ? "" : name.substr(name.find_last_of('.') + 1);
    names.push_back(std::string(2 * depth, ' ') + (name.empty() ? "" : leaf + " ") + "(" +
                    m->type_name() + ")");
    std::string shape = "--";
    if (name.empty()) {
      shape = detail::shape_str(output.shape());
    } else if (const auto children = m->children();
               std::none_of(children.begin(), children.end(),
                            [](const auto& c) { return c->num_parameters() > 0; })) {
      // A layer (no child with parameters): MultiheadAttention's in-projection is not its output.
      std::set<const Node*> accumulators;
      for (const Tensor& p : m->parameters(false))
        if (const Node* acc = accumulator_of(p)) accumulators.insert(acc);
      if (!accumulators.empty())
        if (const Node* out = first_output(nodes, accumulators))
          shape = detail::shape_str(after_gemm_reshape(nodes, out)->output_shape());
    }
    shapes.push_back(shape);
    const std::int64_t n = m->num_parameters();
    counts.push_back(n == 0 ? "--" : with_commas(n));
  }
  std::size_t w0 = std::string("Layer (type)").size(), w1 = std::string("Output Shape").size();
  for (std::size_t i = 0; i < names.size(); ++i) {
    w0 = std::max(w0, names[i].size());
    w1 = std::max(w1, shapes[i].size());
  }
  std::ostringstream os;
  auto row = [&](const std::string& a, const std::string& b, const std::string& c) {
    os << a << std::string(w0 + 3 - a.size(), ' ') << b << std::string(w1 + 3 - b.size(), ' ')
       << std::string(c.size() < 12 ? 12 - c.size() : 0, ' ') << c << "\n";
  };
  const std::string rule(w0 + w1 + 18, '=');
  os << rule << "\n";
  row("Layer (type)", "Output Shape", "Param #");
  os << rule << "\n";
  for (std::size_t i = 0; i < names.size(); ++i) row(names[i], shapes[i], counts[i]);
  os << rule << "\n";
  const std::int64_t total = module.num_parameters(), trainable = module.num_parameters(true);
  double param_bytes = 0;
  std::set<const TensorImpl*> seen;
  for (const Tensor& p : module.parameters())
    if (seen.insert(p.impl()).second)
      param_bytes +=
          static_cast<double>(p.numel() * static_cast<std::int64_t>(element_size(p.dtype())));
  os << "Total params: " << with_commas(total) << "\n"
     << "Trainable params: " << with_commas(trainable) << "\n"
     << "Non-trainable params: " << with_commas(total - trainable) << "\n"
     << rule << "\n"
     << "Input size (MB): "
     << megabytes(static_cast<double>(input.numel() *
                                      static_cast<std::int64_t>(element_size(input.dtype()))))
     << "\n"
     << "Params size (MB): " << megabytes(param_bytes) << "\n"
     << rule << "\n";
  if (options.verbose != 0) *(options.out ? options.out : &std::cout) << os.str() << std::flush;
  return os.str();
}

}  // namespace minigrad::utils
