// autograd::to_dot: the graph behind a tensor in Graphviz's DOT language (torchviz's make_dot).
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/function.h"
#include "minigrad/autograd.h"
#include "minigrad/error.h"
#include "minigrad/parameter_names.h"

namespace minigrad::autograd {
namespace {

/// The arguments printed one after the other (GCC 12 warns falsely, -Wrestrict, on chains of
/// std::string operator+ with literals).
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

/// A DOT string literal: quotes and backslashes escaped, line breaks as \n.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string describe(const Shape& shape, Dtype dtype) {
  return cat(detail::shape_str(shape), " ", dtype_name(dtype));
}

class DotWriter {
 public:
  explicit DotWriter(const DotOptions& options) : options_(options) {
    for (const auto& [name, t] : options.names)
      if (t.defined()) names_.emplace(t.impl(), name);
  }

  std::string write(const std::vector<Tensor>& outputs) {
    os_ << "digraph autograd {\n"
        << "  graph [rankdir=TB];\n"
        << "  node [shape=box, style=\"filled,rounded\", fontname=\"Helvetica\", fontsize=11, "
           "fillcolor=lightgrey];\n";
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const Tensor& out = outputs[i];
      MG_CHECK(out.defined(), "to_dot", "output ", i, " is an undefined tensor");
      const std::string id = cat("out", i);
      const std::string title = outputs.size() > 1 ? cat("output ", i) : std::string("output");
      os_ << "  " << id
          << " [label=" << quoted(cat(title, "\n", describe(out.shape(), out.dtype())))
          << ", fillcolor=darkolivegreen1];\n";
      if (std::shared_ptr<Node> fn = out.grad_fn()) {
        edge(id, visit(fn));
      } else if (out.requires_grad()) {
        edge(id, leaf_id(out.impl(), out));
      }
    }
    // Iterative: a graph may be deeper than the stack.
    while (!pending_.empty()) {
      Node* node = pending_.back();
      pending_.pop_back();
      const std::string& id = ids_.at(node);
      if (auto* fn = dynamic_cast<detail::FunctionNode*>(node); fn && options_.show_saved)
        write_saved(*fn, id);
      for (const Edge& e : node->next_edges()) {
        if (e.fn) edge(id, visit(e.fn));
      }
    }
    os_ << "}\n";
    return os_.str();
  }

 private:
  /// Declarations come before the edge that names them (visit() writes them).
  void edge(const std::string& from, const std::string& to) {
    os_ << "  " << from << " -> " << to << ";\n";
  }

  /// The id of node, declaring it (and queueing its edges) the first time.
  std::string visit(const std::shared_ptr<Node>& node) {
    if (auto it = ids_.find(node.get()); it != ids_.end()) return it->second;
    if (auto* acc = dynamic_cast<detail::AccumulateGrad*>(node.get())) {
      Tensor leaf(acc->leaf());
      std::string id = leaf_id(acc->leaf().get(), leaf);
      ids_.emplace(node.get(), id);
      return id;
    }
    std::string id = cat("n", ids_.size());
    ids_.emplace(node.get(), id);
    std::string label = node->name();
    for (std::size_t i = 0; i < node->num_outputs(); ++i)
      label = cat(label, "\n", describe(node->output_shape(i), node->output_dtype(i)));
    os_ << "  " << id << " [label=" << quoted(label) << "];\n";
    pending_.push_back(node.get());
    return id;
  }

  /// The id of a leaf's box (declared once), named as DotOptions or parameter_name() name it.
  std::string leaf_id(const TensorImpl* impl, const Tensor& leaf) {
    if (auto it = leaf_ids_.find(impl); it != leaf_ids_.end()) return it->second;
    std::string id = cat("leaf", leaf_ids_.size());
    leaf_ids_.emplace(impl, id);
    std::string name = name_of(impl, leaf);
    os_ << "  " << id << " [label="
        << quoted(cat(name, name.empty() ? "" : "\n", describe(leaf.shape(), leaf.dtype())))
        << ", fillcolor=lightblue];\n";
    return id;
  }

  std::string name_of(const TensorImpl* impl, const Tensor& t) const {
    if (auto it = names_.find(impl); it != names_.end()) return it->second;
    return parameter_name(t);
  }

  /// A saved input other than a leaf that requires grad is a new handle on the tensor's data
  /// (Note [Saved inputs are snapshots]): it is named after the named tensor whose data it is.
  std::string saved_name(const Tensor& t) const {
    std::string name = name_of(t.impl(), t);
    if (!name.empty()) return name;
    const TensorImpl& s = *t.impl();
    for (const auto& [n, named] : options_.names) {
      const TensorImpl* o = named.impl();
      if (o && o->storage == s.storage && o->offset == s.offset && o->shape == s.shape &&
          o->strides == s.strides && o->dtype == s.dtype)
        return n;
    }
    return name;
  }

  void write_saved(const detail::FunctionNode& fn, const std::string& id) {
    for (std::size_t i = 0; i < fn.saved_count(); ++i) {
      if (!fn.has_saved(i)) continue;
      Tensor t;
      try {
        t = fn.saved(i);
      } catch (const Error&) {
        continue;  // modified in place since: backward would say so, the picture leaves it out
      }
      if (!t.defined()) continue;
      const std::string sid = cat(id, "_saved", i);
      std::string name = saved_name(t);
      os_ << "  " << sid << " [label="
          << quoted(cat("saved ", i, name.empty() ? "" : " (", name, name.empty() ? "" : ")", "\n",
                        describe(t.shape(), t.dtype())))
          << ", fillcolor=orange, fontsize=9];\n"
          << "  " << sid << " -> " << id << " [style=dashed, arrowhead=none];\n";
    }
  }

  const DotOptions& options_;
  std::ostringstream os_;
  std::unordered_map<const Node*, std::string> ids_;
  std::unordered_map<const TensorImpl*, std::string> leaf_ids_;
  std::unordered_map<const TensorImpl*, std::string> names_;
  std::vector<Node*> pending_;
};

}  // namespace

std::string to_dot(const std::vector<Tensor>& outputs, const DotOptions& options) {
  return DotWriter(options).write(outputs);
}

std::string to_dot(const Tensor& output, const DotOptions& options) {
  return to_dot(std::vector<Tensor>{output}, options);
}

}  // namespace minigrad::autograd
