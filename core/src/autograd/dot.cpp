// autograd::to_dot: the graph behind a tensor in Graphviz's DOT language (torchviz's make_dot).
#include <cstdint>
#include <memory>
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
    if (options_.collapse_modules) return write_collapsed(outputs);
    write_header();
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const Tensor& out = outputs[i];
      const std::string id = write_output(outputs, i);
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
  void write_header() {
    os_ << "digraph autograd {\n"
        << "  graph [rankdir=TB];\n"
        << "  node [shape=box, style=\"filled,rounded\", fontname=\"Helvetica\", fontsize=11, "
           "fillcolor=lightgrey];\n";
  }

  /// The declaration of an output's box; returns its id.
  std::string write_output(const std::vector<Tensor>& outputs, std::size_t i) {
    const Tensor& out = outputs[i];
    MG_CHECK(out.defined(), "to_dot", "output ", i, " is an undefined tensor");
    const std::string id = cat("out", i);
    const std::string title = outputs.size() > 1 ? cat("output ", i) : std::string("output");
    os_ << "  " << id << " [label=" << quoted(cat(title, "\n", describe(out.shape(), out.dtype())))
        << ", fillcolor=darkolivegreen1];\n";
    return id;
  }

  // Note [Collapsed graphs]
  // With collapse_modules every node recorded inside a module call at collapse_depth (its scope,
  // or the scope enclosing it at that depth) joins that call's box: one box per call, so a module
  // called twice (a dropout before and after the MLP) gives two boxes and the picture keeps the
  // order of the computation. A leaf that only one box uses (a layer's weight) is inside it; a
  // leaf used by several (a tied embedding) or by a loose node stays a blue box. Saved tensors are
  // drawn for the loose nodes only. The graph is walked once to group it, then written.
  std::string write_collapsed(const std::vector<Tensor>& outputs) {
    MG_CHECK(options_.collapse_depth >= 1, "to_dot", "collapse_depth must be at least 1, got ",
             options_.collapse_depth);
    // Every node reachable from the outputs, in the order of the plain picture's walk.
    std::vector<Node*> order;
    std::unordered_map<const Node*, std::size_t> index;
    std::vector<std::shared_ptr<Node>> stack;
    auto reach = [&](const std::shared_ptr<Node>& n) {
      if (n && index.emplace(n.get(), order.size()).second) {
        order.push_back(n.get());
        stack.push_back(n);
      }
    };
    for (const Tensor& out : outputs)
      if (out.defined()) reach(out.grad_fn());
    while (!stack.empty()) {
      std::shared_ptr<Node> n = std::move(stack.back());
      stack.pop_back();
      for (const Edge& e : n->next_edges()) reach(e.fn);
    }
    // The box of each node: the call at collapse_depth that encloses it, if any.
    std::vector<const autograd::ModuleScope*> box(order.size(), nullptr);
    bool any_scope = false;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const autograd::ModuleScope* s = order[i]->module_scope().get();
      any_scope |= s != nullptr;
      if (dynamic_cast<detail::AccumulateGrad*>(order[i])) continue;
      while (s && s->depth > options_.collapse_depth) s = s->parent.get();
      if (s && s->depth == options_.collapse_depth) box[i] = s;
    }
    MG_CHECK(any_scope, "to_dot",
             "collapse_modules: no node of the graph was recorded inside a module; build the graph "
             "(run the forward) while an nn::RecordModuleScopes of the model is alive");
    // A leaf goes into the box of its users when they all are in one box.
    std::vector<const autograd::ModuleScope*> users(order.size(), nullptr);
    std::vector<bool> shared(order.size(), false);
    for (std::size_t u = 0; u < order.size(); ++u) {
      for (const Edge& e : order[u]->next_edges()) {
        if (!e.fn) continue;
        const std::size_t i = index.at(e.fn.get());
        if (!box[u] || (users[i] && users[i] != box[u])) shared[i] = true;
        users[i] = box[u];
      }
    }
    for (std::size_t i = 0; i < order.size(); ++i)
      if (!shared[i] && dynamic_cast<detail::AccumulateGrad*>(order[i])) box[i] = users[i];

    write_header();
    // One box per module call, in the order of their first node; the box's output is that of
    // its latest node (the call's result).
    struct Box {
      std::string id;
      std::int64_t nodes = 0, leaves = 0;
      const Node* last = nullptr;
    };
    std::unordered_map<const autograd::ModuleScope*, Box> boxes;
    std::vector<const autograd::ModuleScope*> box_order;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (!box[i]) continue;
      auto [it, added] = boxes.try_emplace(box[i]);
      if (added) {
        it->second.id = cat("m", box_order.size());
        box_order.push_back(box[i]);
      }
      if (dynamic_cast<detail::AccumulateGrad*>(order[i])) {
        ++it->second.leaves;
        continue;
      }
      ++it->second.nodes;
      if (!it->second.last || order[i]->sequence_nr() > it->second.last->sequence_nr())
        it->second.last = order[i];
    }
    for (const autograd::ModuleScope* s : box_order) {
      const Box& b = boxes.at(s);
      std::string label =
          cat(s->name, "\n", s->type_name, ": ", b.nodes, b.nodes == 1 ? " node" : " nodes");
      if (b.leaves > 0) label = cat(label, ", ", b.leaves, b.leaves == 1 ? " leaf" : " leaves");
      label = cat(label, "\n", describe(b.last->output_shape(), b.last->output_dtype()));
      os_ << "  " << b.id << " [label=" << quoted(label)
          << ", shape=box3d, style=filled, fillcolor=lightyellow];\n";
    }
    // The id each node is drawn as: its box, its own box (declared here) or its leaf's box.
    std::vector<std::string> ids(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (box[i]) {
        ids[i] = boxes.at(box[i]).id;
      } else if (auto* acc = dynamic_cast<detail::AccumulateGrad*>(order[i])) {
        ids[i] = leaf_id(acc->leaf().get(), Tensor(acc->leaf()));
      } else {
        ids[i] = visit_loose(*order[i]);
      }
    }
    std::unordered_map<std::string, bool> drawn;  // "from->to": each edge between boxes once
    auto edge_once = [&](const std::string& from, const std::string& to) {
      if (from != to && drawn.emplace(cat(from, "->", to), true).second) edge(from, to);
    };
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const std::string id = write_output(outputs, i);
      if (std::shared_ptr<Node> fn = outputs[i].grad_fn())
        edge_once(id, ids[index.at(fn.get())]);
      else if (outputs[i].requires_grad())
        edge_once(id, leaf_id(outputs[i].impl(), outputs[i]));
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      for (const Edge& e : order[i]->next_edges())
        if (e.fn) edge_once(ids[i], ids[index.at(e.fn.get())]);
    }
    os_ << "}\n";
    return os_.str();
  }

  /// A node outside every box, drawn as in the plain picture (with its saved tensors).
  std::string visit_loose(Node& node) {
    std::string id = cat("n", ids_.size());
    ids_.emplace(&node, id);
    std::string label = node.name();
    for (std::size_t i = 0; i < node.num_outputs(); ++i)
      label = cat(label, "\n", describe(node.output_shape(i), node.output_dtype(i)));
    os_ << "  " << id << " [label=" << quoted(label) << "];\n";
    if (auto* fn = dynamic_cast<detail::FunctionNode*>(&node); fn && options_.show_saved)
      write_saved(*fn, id);
    return id;
  }

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
