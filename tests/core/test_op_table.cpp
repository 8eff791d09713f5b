// Tests driven by the op table (core/op_table.h): gradcheck of every sample, gradgradcheck of the
// entries marked gradgrad, the error inputs, forward values against PyTorch, and that the table
// covers every node core and nn can create (Note [Op table coverage]).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/op_table.h"

#include "attention_function.h"

namespace minigrad::testing {
namespace {

using V = std::vector<Tensor>;
namespace F = nn::functional;

std::vector<const OpInfo*> entries(bool (*keep)(const OpInfo&)) {
  std::vector<const OpInfo*> r;
  for (const OpInfo& op : op_table())
    if (keep(op)) r.push_back(&op);
  return r;
}

std::string entry_name(const ::testing::TestParamInfo<const OpInfo*>& info) {
  return info.param->name;
}

Tensor run(const OpInfo& op, const Sample& smp, const V& inputs) {
  return smp.fn ? smp.fn(inputs) : op.fn(inputs);
}

bool has_grad_input(const Sample& smp) {
  return std::any_of(smp.inputs.begin(), smp.inputs.end(),
                     [](const Tensor& t) { return t.requires_grad(); });
}

// ---------------------------------------------------------------- gradcheck

class OpGradcheck : public ::testing::TestWithParam<const OpInfo*> {};

TEST_P(OpGradcheck, Float64) {
  const OpInfo& op = *GetParam();
  ASSERT_FALSE(op.samples.empty()) << op.name << " has no samples";
  for (const Sample& smp : op.samples) {
    SCOPED_TRACE(op.name + ": " + smp.desc);
    ASSERT_TRUE(has_grad_input(smp)) << "no input requires grad";
    auto fn = [&](const V& in) { return run(op, smp, in); };
    autograd::GradcheckResult r = autograd::gradcheck_report(fn, smp.inputs, op.tolerances);
    EXPECT_TRUE(r.ok) << r.message;
    // Only a sample with an empty input or output may compare nothing.
    Tensor out = fn(smp.inputs);
    bool empty = out.numel() == 0;
    for (const Tensor& t : smp.inputs) empty |= t.requires_grad() && t.numel() == 0;
    if (!empty) {
      EXPECT_GT(r.checked, 0);
      // Every sample's output must depend on its inputs through the graph.
      EXPECT_TRUE(out.requires_grad()) << "the output has no grad_fn";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OpTable, OpGradcheck,
                         ::testing::ValuesIn(entries([](const OpInfo&) { return true; })),
                         entry_name);

// ---------------------------------------------------------------- gradgradcheck

class OpGradgradcheck : public ::testing::TestWithParam<const OpInfo*> {};

TEST_P(OpGradgradcheck, Float64) {
  const OpInfo& op = *GetParam();
  for (const Sample& smp : op.samples) {
    SCOPED_TRACE(op.name + ": " + smp.desc);
    auto fn = [&](const V& in) { return run(op, smp, in); };
    autograd::GradcheckResult r = autograd::gradgradcheck_report(fn, smp.inputs, op.tolerances);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

INSTANTIATE_TEST_SUITE_P(OpTable, OpGradgradcheck,
                         ::testing::ValuesIn(entries([](const OpInfo& op) { return op.gradgrad; })),
                         entry_name);

// ---------------------------------------------------------------- error inputs

class OpErrors : public ::testing::TestWithParam<const OpInfo*> {};

TEST_P(OpErrors, ThrowErrorNamingTheOp) {
  const OpInfo& op = *GetParam();
  for (const ErrorInput& err : op.error_inputs) {
    SCOPED_TRACE(op.name + ": " + err.desc);
    std::string prefix = "[" + err.op + "]";
    try {
      err.call();
      ADD_FAILURE() << "no exception; expected minigrad::Error starting with " << prefix;
    } catch (const Error& ex) {
      std::string what = ex.what();
      EXPECT_EQ(what.rfind(prefix, 0), 0u) << "message: " << what;
      EXPECT_GT(what.size(), prefix.size() + 1) << "the message says nothing after the op name";
      EXPECT_FALSE(err.message.empty()) << "the error input names no expected message";
      EXPECT_NE(what.find(err.message), std::string::npos)
          << "message: " << what << "\nexpected it to contain: " << err.message;
    } catch (const std::exception& ex) {
      ADD_FAILURE() << "threw a std::exception that is not minigrad::Error: " << ex.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OpTable, OpErrors, ::testing::ValuesIn(entries([](const OpInfo& op) {
                           return !op.error_inputs.empty();
                         })),
                         entry_name);

// ---------------------------------------------------------------- forward values

// Every entry's references (OpInfo::ref in op_table.cpp): literal PyTorch 1.13 values, from the
// Python expression each carries (/usr/bin/python3, torch.set_default_dtype(torch.float64),
// F = torch.nn.functional, cond = torch.tensor([[1, 0, 0], [1, 1, 0]], dtype=torch.bool) and
// make() as documented in op_table.h); the numbers are result.flatten().tolist().
TEST(OpTable, ForwardMatchesPyTorch) {
  std::size_t checked = 0;
  for (const OpInfo& op : op_table()) {
    EXPECT_FALSE(op.references.empty()) << op.name << " has no forward value from PyTorch";
    for (const Reference& ref : op.references) {
      SCOPED_TRACE(op.name + ": " + ref.torch);
      Tensor out = ref.fn();
      ASSERT_EQ(out.dtype(), kFloat64);
      ASSERT_EQ(out.shape(), ref.shape);
      std::vector<double> got = out.to_vector<double>();
      ASSERT_EQ(got.size(), ref.expected.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], ref.expected[i], 1e-12 + 1e-10 * std::fabs(ref.expected[i]))
            << "element " << i;
      ++checked;
    }
  }
  std::cout << "compared " << checked << " forward references with PyTorch's values\n";
}

// ---------------------------------------------------------------- coverage

// NaN propagation against PyTorch 1.13: forward and backward of an op on x = [1.5, nan, -2, 0.5]
// (float64), with upstream gradient [1, 2, 3, 4] (1 for a 0-dim output). Expected values are
// PyTorch's (/usr/bin/python3: out = f(x); out.backward(upstream); out, x.grad); a NaN expected
// must be NaN. gradcheck cannot run on NaN, so this table checks values; a new op joins with a
// row. (The parity suite runs every op-table sample with a NaN too: parity_dump's float64_nan
// run, tests/parity/compare.py.)
struct NanCase {
  std::string op;  // the op-table entry it belongs to
  std::function<Tensor(const Tensor&)> fn;
  std::vector<double> out, grad;
};

const std::vector<NanCase>& nan_cases() {
  const double nan = std::nan("");
  const Tensor zero = zeros({4}, kFloat64);
  static const std::vector<NanCase> cases = {
      {"relu", [](const Tensor& x) { return relu(x); }, {1.5, nan, 0, 0.5}, {1, 2, 0, 4}},
      // torch.scatter_reduce(x, 0, torch.tensor([0, 1, 3]), torch.tensor([2.0, 1.0, 0.25]), "amax")
      {"scatter_reduce",
       [](const Tensor& x) {
         return scatter_reduce(x, 0, indices({0, 1, 3}, {3}), tensor({2.0, 1.0, 0.25}, kFloat64),
                               "amax");
       },
       {2, nan, -2, 0.5},
       {0, nan, 3, 4}},
      // torch.scatter_reduce(torch.tensor([0., 0., 5., -1.]), 0, torch.tensor([0, 0, 1, 1]), x,
      //                      "amin")
      {"scatter_reduce",
       [](const Tensor& x) {
         return scatter_reduce(tensor({0.0, 0.0, 5.0, -1.0}, kFloat64), 0,
                               indices({0, 0, 1, 1}, {4}), x, "amin");
       },
       {nan, -2, 5, -1},
       {nan, nan, 2, 0}},
      // torch.scatter_reduce(torch.tensor([1., 2., 5., -1.]), 0, torch.tensor([0, 0, 1, 3]), x,
      //                      "prod", include_self=False)
      {"scatter_reduce",
       [](const Tensor& x) {
         return scatter_reduce(tensor({1.0, 2.0, 5.0, -1.0}, kFloat64), 0,
                               indices({0, 0, 1, 3}, {4}), x, "prod", false);
       },
       {nan, -2, 5, 0.5},
       {nan, nan, 2, 4}},
      {"clamp",
       [](const Tensor& x) { return clamp(x, -1.0, 1.0); },
       {1, nan, -1, 0.5},
       {0, 0, 0, 4}},
      {"max", [](const Tensor& x) { return max(x); }, {nan}, {0, 1, 0, 0}},
      {"amax", [](const Tensor& x) { return amax(x); }, {nan}, {nan, nan, nan, nan}},
      {"maximum",
       [zero](const Tensor& x) { return maximum(x, zero); },
       {1.5, nan, 0, 0.5},
       {1, 2, 0, 4}},
      {"minimum",
       [zero](const Tensor& x) { return minimum(x, zero); },
       {0, nan, -2, 0},
       {0, 2, 3, 0}},
      // torch.linalg.vector_norm(x, inf)
      {"norm", [](const Tensor& x) { return norm(x, INFINITY); }, {nan}, {0, 0, 0, 0}},
      {"sort",
       [](const Tensor& x) { return std::get<0>(sort(x)); },
       {-2, 0.5, 1.5, nan},
       {3, 4, 1, 2}},
      {"cumsum", [](const Tensor& x) { return cumsum(x, 0); }, {1.5, nan, nan, nan}, {10, 9, 7, 4}},
      {"softmax",
       [](const Tensor& x) { return softmax(x, 0); },
       {nan, nan, nan, nan},
       {nan, nan, nan, nan}},
      {"sum", [](const Tensor& x) { return sum(x); }, {nan}, {1, 1, 1, 1}},
      // F.smooth_l1_loss(x, t, beta=0., reduction='none') with t = [0, 0, -2, 0]: the gradient
      // is -1 at x == t and nan at the nan (PyTorch's kernel), not abs's 0.
      {"smooth_l1_loss",
       [](const Tensor& x) {
         return F::smooth_l1_loss(x, tensor({0.0, 0.0, -2.0, 0.0}, kFloat64), "none", 0.0);
       },
       {1.5, nan, 0, 0.5},
       {1, nan, -3, 4}},
  };
  return cases;
}

void expect_values(const Tensor& t, const std::vector<double>& expected, const char* what) {
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i]))
      EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i << " is " << got[i];
    else
      EXPECT_NEAR(got[i], expected[i], 1e-12) << what << " element " << i;
  }
}

TEST(OpTable, NanPropagatesAsInPyTorch) {
  std::set<std::string> table_names;
  for (const OpInfo& op : op_table()) table_names.insert(op.name);
  for (const NanCase& c : nan_cases()) {
    SCOPED_TRACE(c.op);
    EXPECT_TRUE(table_names.count(c.op)) << "no table entry named " << c.op;
    Tensor x = tensor({1.5, std::nan(""), -2.0, 0.5}, kFloat64).requires_grad_();
    Tensor out = c.fn(x);
    expect_values(out, c.out, "output");
    Tensor upstream = out.numel() == 1
                          ? ones_like(out)
                          : tensor({1.0, 2.0, 3.0, 4.0}, kFloat64).reshape(out.shape());
    out.backward(upstream);
    expect_values(x.grad(), c.grad, "gradient");
  }
}

// Note [Op table coverage]
// The op table is the single list of differentiable ops: a new op without an entry must fail a
// test. Every node name core and nn can create is a string literal "XxxBackwardN" in core/src or
// nn/src (record("MulBackward0", ...), extremum<true>("maximum", "MaximumBackward0", ...), a
// custom node's name); this test reads those sources and runs every sample forward and backward
// (with create_graph, so double-backward nodes such as SliceBackwardBackward0 are created too),
// collecting the grad_fn names of the outputs and the gradients. A name in the sources that no
// sample produces fails, listing the missing names; kNotOps lists the literals that are not an
// op's node, each with its reason.
// The string literals of text that read "[A-Z][A-Za-z0-9]*Backward[0-9]*" (a plain scan: GCC 12's
// <regex> trips -Wmaybe-uninitialized under the sanitizers).
std::vector<std::string> backward_literals(const std::string& text) {
  std::vector<std::string> found;
  for (std::size_t q = text.find('"'); q != std::string::npos; q = text.find('"', q + 1)) {
    std::size_t b = q + 1, e = b;
    if (b >= text.size() || !std::isupper(static_cast<unsigned char>(text[b]))) continue;
    while (e < text.size() && std::isalnum(static_cast<unsigned char>(text[e]))) ++e;
    if (e >= text.size() || text[e] != '"') continue;
    std::string name = text.substr(b, e - b);
    std::size_t stem = name.find_last_not_of("0123456789") + 1;
    const std::string suffix = "Backward";
    if (stem > suffix.size() && name.compare(stem - suffix.size(), suffix.size(), suffix) == 0)
      found.push_back(name);
    q = e;
  }
  return found;
}

std::set<std::string> node_names_in_sources() {
  std::set<std::string> names;
  for (const char* dir : {"/core/src", "/nn/src"}) {
    for (const auto& f :
         std::filesystem::recursive_directory_iterator(std::string(MINIGRAD_SOURCE_DIR) + dir)) {
      std::string ext = f.path().extension().string();
      if (ext != ".cpp" && ext != ".h") continue;
      std::ifstream in(f.path());
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (const std::string& name : backward_literals(text)) names.insert(name);
    }
  }
  return names;
}

void collect_node_names(const Tensor& t, std::set<std::string>& names) {
  std::vector<std::shared_ptr<Node>> stack;
  std::set<const Node*> seen;
  if (t.defined() && t.grad_fn()) stack.push_back(t.grad_fn());
  while (!stack.empty()) {
    std::shared_ptr<Node> n = stack.back();
    stack.pop_back();
    if (!seen.insert(n.get()).second) continue;
    names.insert(n->name());
    for (const Edge& e : n->next_edges())
      if (e.fn) stack.push_back(e.fn);
  }
}

TEST(OpTable, CoversEveryNodeCoreCanCreate) {
  // Literals that are not an op's node name.
  const std::map<std::string, std::string> kNotOps = {
      {"CustomFunctionBackward",
       "the name of a custom Function without a name(); custom_attention names its own"},
      {"CtcLossInfiniteBackward",
       "ctc_loss's NaN gradient for an impossible alignment (tests/nn/test_loss_more.cpp): a "
       "NaN cannot be gradchecked"},
  };
  std::set<std::string> in_sources = node_names_in_sources();
  ASSERT_GT(in_sources.size(), 50u) << "the scan of core/src and nn/src found too few names";
  std::set<std::string> produced;
  for (const OpInfo& op : op_table()) {
    for (const Sample& smp : op.samples) {
      V inputs;
      for (const Tensor& t : smp.inputs)
        inputs.push_back(t.requires_grad() ? t.detach().requires_grad_() : t);
      Tensor out = run(op, smp, inputs);
      collect_node_names(out, produced);
      if (!out.requires_grad() || out.numel() == 0) continue;
      V wrt;
      for (const Tensor& t : inputs)
        if (t.requires_grad()) wrt.push_back(t);
      std::vector<Tensor> grads =
          autograd::grad({out}, wrt, {ones_like(out)}, /*retain_graph=*/true,
                         /*create_graph=*/true, /*allow_unused=*/true);
      for (const Tensor& g : grads) collect_node_names(g, produced);
    }
  }
  std::vector<std::string> missing;
  for (const std::string& n : in_sources)
    if (!produced.count(n) && !kNotOps.count(n)) missing.push_back(n);
  std::string list;
  for (const std::string& n : missing) list += (list.empty() ? "" : ", ") + n;
  EXPECT_TRUE(missing.empty())
      << missing.size() << " node name(s) in core/src or nn/src that no op-table sample "
      << "produces (add an entry to tests/core/op_table.cpp, see docs/adding_an_op.md): " << list;
  for (const auto& [n, why] : kNotOps)
    EXPECT_TRUE(in_sources.count(n)) << n << " is listed in kNotOps but no longer in the sources";
  std::cout << "node names in core/src and nn/src: " << in_sources.size()
            << "; produced by the op table's samples (forward and create_graph backward): "
            << produced.size() << "\n";
}

// Every entry and every sample with its own fn has a PyTorch call (the parity suite evaluates
// them; a desc with no sample throws when the table is built).
TEST(OpTable, EverySampleHasAPyTorchCall) {
  for (const OpInfo& op : op_table()) {
    bool uses_default = false;
    for (const Sample& smp : op.samples) {
      if (smp.fn) {
        EXPECT_FALSE(smp.torch.empty()) << op.name << ": '" << smp.desc << "' has no PyTorch call";
      } else {
        uses_default = true;
      }
    }
    if (uses_default) {
      EXPECT_FALSE(op.torch.empty()) << op.name << " has no PyTorch call";
    }
  }
}

TEST(OpTable, CoversEveryDifferentiableOp) {
  const std::vector<std::string> required_gradgrad = {"matmul",
                                                      "mm",
                                                      "bmm",
                                                      "softmax",
                                                      "log_softmax",
                                                      "add",
                                                      "sub",
                                                      "mul",
                                                      "div",
                                                      "add_scalar",
                                                      "sub_scalar",
                                                      "mul_scalar",
                                                      "div_scalar",
                                                      "exp",
                                                      "log",
                                                      "tanh",
                                                      "sum",
                                                      "mean",
                                                      "transpose",
                                                      "reshape",
                                                      "linear",
                                                      "scaled_dot_product_attention",
                                                      "cross_entropy",
                                                      "layer_norm",
                                                      "add_",
                                                      "mul_",
                                                      "div_",
                                                      "copy_",
                                                      "exp_",
                                                      "log_",
                                                      "sigmoid_",
                                                      "masked_fill_",
                                                      "custom_attention"};

  std::set<std::string> names, gradgrad;
  std::size_t samples = 0, gradgrad_samples = 0, errors = 0, non_contiguous = 0, empty = 0;
  for (const OpInfo& op : op_table()) {
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate entry " << op.name;
    samples += op.samples.size();
    for (const Sample& smp : op.samples) {
      bool nc = false, em = false;
      for (const Tensor& t : smp.inputs) {
        nc |= t.requires_grad() && !t.is_contiguous();
        em |= t.numel() == 0;
      }
      non_contiguous += nc;
      empty += em;
    }
    errors += op.error_inputs.size();
    if (op.gradgrad) {
      gradgrad.insert(op.name);
      gradgrad_samples += op.samples.size();
    }
  }
  for (const std::string& n : required_gradgrad)
    EXPECT_TRUE(gradgrad.count(n)) << n << " is not gradgradchecked";
  EXPECT_GE(non_contiguous, 40u) << "too few samples with a non-contiguous leaf";
  EXPECT_GE(empty, 20u) << "too few samples with an empty input";
  std::size_t references = 0;
  for (const OpInfo& op : op_table()) references += op.references.size();
  std::cout << "gradchecked " << names.size() << " ops, " << samples << " samples ("
            << non_contiguous << " with a non-contiguous leaf, " << empty << " with an empty "
            << "input); gradgradchecked " << gradgrad.size() << " ops, " << gradgrad_samples
            << " samples; " << errors << " error inputs; " << references << " forward references\n";
}

}  // namespace
}  // namespace minigrad::testing
