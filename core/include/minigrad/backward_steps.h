#pragma once
// Stepping through backward, for learners: micrograd's lecture view of what loss.backward() does.
//
//   auto steps = mg::autograd::backward_steps(loss);   // runs loss.backward(), recording
//   std::cout << mg::autograd::format_backward_steps(steps);
//   // or, in one call: mg::autograd::print_backward(loss);
//
// Each step is one node of the graph, in the order the engine runs them (a node runs once every
// node that feeds it a gradient has run; among ready nodes the most recently created first): the
// gradient it receives (the sum of what its users passed it) and, for each of its inputs, the node
// that input's gradient goes to and the gradient itself (reduced to the input's shape when the
// forward broadcast it). A leaf's AccumulateGrad step receives what is added into its .grad().
// PyTorch has no such call; it is the chain rule written out, node by node.
#include <iosfwd>
#include <string>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad::autograd {

/// One node as backward ran it.
struct BackwardStep {
  /// What one input of the node receives from it.
  struct Pass {
    std::string to;  // the next node's name ("MulBackward0", "AccumulateGrad (w)"), or "" when
                     // that input needs no gradient
    Tensor grad;     // undefined when the input needs no gradient
  };
  std::string node;              // "MulBackward0", "AccumulateGrad"
  std::string leaf;              // AccumulateGrad: the leaf's parameter name, else its shape
  std::vector<Tensor> received;  // the gradient of each of the node's outputs (usually one)
  std::vector<Pass> passed;      // one per forward input of the node; empty for AccumulateGrad
};

/// Runs loss.backward(retain_graph) (every .grad() is written as backward() writes it) and
/// returns the nodes in the order the engine ran them. loss must be a scalar that requires grad.
std::vector<BackwardStep> backward_steps(const Tensor& loss, bool retain_graph = false);

/// The steps as text: one numbered block per node, its incoming gradient and what it passes on.
std::string format_backward_steps(const std::vector<BackwardStep>& steps);

/// backward_steps(loss) written to os as format_backward_steps does.
void print_backward(const Tensor& loss, std::ostream& os, bool retain_graph = false);
void print_backward(const Tensor& loss, bool retain_graph = false);

}  // namespace minigrad::autograd
