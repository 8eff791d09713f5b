// The op table's family of minigrad/ops/backward.h (op_table.h): the backward ops tanh_backward,
// sigmoid_backward, gelu_backward, _softmax_backward_data, _log_softmax_backward_data (Note
// [Backward ops] in core/src/ops/elementwise.cpp), native_layer_norm_backward (Note [Layer norm's
// double backward]) and embedding_dense_backward (Note [Embedding's backward], both in
// core/src/ops/nn.cpp), with
// gradcheck and gradgradcheck of each as an op of its own (their derivatives are
// TanhBackwardBackward0, ...). Reference values printed by PyTorch 1.13 from the expression each
// carries (make as in tests/parity/compare.py, A = torch.ops.aten).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/op_table.h"
#include "core/op_table_builders.h"

namespace minigrad::testing {

namespace {

Tensor gelu_backward_none(const Tensor& g, const Tensor& x) { return gelu_backward(g, x); }
Tensor gelu_backward_tanh(const Tensor& g, const Tensor& x) { return gelu_backward(g, x, "tanh"); }

/// The errors every backward op shares: integer operands, shapes that do not broadcast, an
/// undefined operand.
std::vector<ErrorInput> backward_errors(const std::string& op, BinaryOp f) {
  return {e(op, "int64 operands", "expected floating-point tensors but got int64 and int64",
            [f] {
              f(indices({1, 2}, {2}), indices({1, 2}, {2}));
            }),
          e(op, "shapes that do not broadcast",
            "shapes (2, 3) and (4,) cannot be broadcast: size 3 and size 4 differ at dim 1",
            [f] {
              f(make({2, 3}, 1), make({4}, 2));
            }),
          e(op, "undefined output",
            "got an undefined tensor (a default-constructed Tensor, or one moved from)",
            [f] { f(make({2}, 1), undefined()); })};
}

using SoftmaxBackward = Tensor (*)(const Tensor&, const Tensor&, std::int64_t, Dtype);

/// Samples of a softmax backward op f (grad_output and output of one shape, a dim).
std::vector<Sample> softmax_backward_samples(SoftmaxBackward f) {
  auto along = [f](std::int64_t dim) {
    return [f, dim](const V& v) { return f(v[0], v[1], dim, v[1].dtype()); };
  };
  return {s("dim 1", {arg({2, 3}, 1), arg({2, 3}, 2)}),
          s("dim 0", {arg({2, 3}, 3), arg({2, 3}, 4)}, along(0)),
          s("3-D, dim 1", {arg({2, 3, 2}, 5), arg({2, 3, 2}, 6)}, along(1)),
          s("non-contiguous", {arg_t({3, 2}, 7), arg_t({3, 2}, 8)}, along(1)),
          s("empty", {arg({0, 3}, 9), arg({0, 3}, 10)}),
          s("only output requires grad", {make({2, 3}, 11), arg({2, 3}, 12)})};
}

/// The PyTorch calls of softmax_backward_samples, for torch.ops.aten.<name>.
std::string softmax_backward_py(const std::string& name) {
  return "torch.ops.aten." + name + "(x[0], x[1], 1, x[1].dtype)";
}
/// contiguous: the non-contiguous sample's operands are made contiguous first.
std::vector<std::pair<std::string, std::string>> softmax_backward_py_by_desc(
    const std::string& name, bool contiguous = false) {
  std::vector<std::pair<std::string, std::string>> r = {
      {"dim 0", "torch.ops.aten." + name + "(x[0], x[1], 0, x[1].dtype)"},
      {"3-D, dim 1", "torch.ops.aten." + name + "(x[0], x[1], 1, x[1].dtype)"}};
  const std::string operands = contiguous ? "x[0].contiguous(), x[1].contiguous()" : "x[0], x[1]";
  r.push_back({"non-contiguous", "torch.ops.aten." + name + "(" + operands + ", 1, x[1].dtype)"});
  return r;
}

/// The errors of a softmax backward op.
std::vector<ErrorInput> softmax_backward_errors(const std::string& op, SoftmaxBackward f) {
  return {
      e(op, "shapes differ",
        "grad_output of shape (3,) and output of shape (2, 3) must have the same shape",
        [f] {
          f(make({3}, 1), make({2, 3}, 2), 1, kFloat64);
        }),
      e(op, "dtypes differ", "grad_output (float32) and output (float64) must have the same dtype",
        [f] {
          f(make({2, 3}, 1).to(kFloat32), make({2, 3}, 2), 1, kFloat64);
        }),
      e(op, "int64 operands", "expected floating-point tensors but got int64 and int64",
        [f] {
          f(indices({1, 2}, {2}), indices({1, 2}, {2}), 0, kInt64);
        }),
      e(op, "dim out of range", "out of range",
        [f] {
          f(make({2, 3}, 1), make({2, 3}, 2), 2, kFloat64);
        }),
      e(op, "undefined grad_output",
        "got an undefined tensor (a default-constructed Tensor, or one moved from)",
        [f] { f(undefined(), make({2}, 2), 0, kFloat64); })};
}

/// native_layer_norm_backward(g, x, ns, mean, rstd, w) for v = {g, x} or {g, x, w}, with x's
/// statistics over its last dims ns (eps 1e-5, as native_layer_norm's), its outputs flattened and
/// joined (grad_input, grad_weight when there is a weight, grad_bias).
Tensor layer_norm_backward_joined(const V& v, const Shape& ns) {
  const Tensor &g = v[0], &x = v[1];
  const Tensor w = v.size() > 2 ? v[2] : Tensor();
  Shape dims;
  for (auto i = x.dim() - static_cast<std::int64_t>(ns.size()); i < x.dim(); ++i) dims.push_back(i);
  Tensor m = mean(x, dims, true);
  Tensor rstd = rsqrt(mean((x - m) * (x - m), dims, true) + 1e-5);
  auto [gx, gw, gb] =
      native_layer_norm_backward(g, x, ns, m, rstd, w, Tensor(), {true, w.defined(), true});
  std::vector<Tensor> parts{gx.flatten()};
  if (gw.defined()) parts.push_back(gw.flatten());
  parts.push_back(gb.flatten());
  return cat(parts);
}

/// The PyTorch call of layer_norm_backward_joined over the dims `dims` (a Python tuple) of
/// normalized_shape `ns`, with or without a weight (x[2]). PyTorch 1.13 needs a defined bias
/// (unused) for grad_bias, and without a weight it crashes on grad_weight and fails in its double
/// backward: the sample without one is given ones (the same values and gradients).
std::string layer_norm_backward_py(const std::string& ns, const std::string& dims, bool weight) {
  const std::string stats = "x[1].mean(" + dims +
                            ", keepdim=True).detach(), torch.rsqrt(x[1].var(" + dims +
                            ", unbiased=False, keepdim=True) + 1e-5).detach()";
  const std::string like = "(" + ns + ", dtype=x[1].dtype)";
  return "torch.cat([t.flatten() for t in torch.ops.aten.native_layer_norm_backward(x[0], x[1], " +
         ns + ", " + stats + ", " + (weight ? "x[2]" : "torch.ones" + like) + ", torch.zeros" +
         like + ", [True, " + (weight ? "True" : "False") + ", True]) if t is not None])";
}

}  // namespace

void add_backward(std::vector<OpInfo>& t) {
  t.push_back(
      entry(
          "tanh_backward", [](const V& v) { return tanh_backward(v[0], v[1]); },
          binary_samples(arg, arg, tanh_backward), backward_errors("tanh_backward", tanh_backward))
          .py("torch.ops.aten.tanh_backward(x[0], x[1])",
              {{"expanded inside fn", "torch.ops.aten.tanh_backward(x[0].expand(4, 3), x[1])"}})
          .ref("A.tanh_backward(make((2, 3), 1), make((2, 3), 2))",
               [] {
                 return tanh_backward(make({2, 3}, 1), make({2, 3}, 2));
               },
               {2, 3},
               {-1.59332586420004, -1.5747865546176965, -0.27441112597851375, 0.2502829393166335,
                -0.41293428682483474, -1.3875577668191135})
          .ref("A.tanh_backward(make((3,), 3), make((2, 3), 4))",
               [] {
                 return tanh_backward(make({3}, 3), make({2, 3}, 4));
               },
               {2, 3},
               {-0.03133648242702562, 0.4444846910034475, -1.5570285906561139, -2.0351295746650346,
                0.05160783265968572, -0.8749051766935646}));

  t.push_back(
      entry(
          "sigmoid_backward", [](const V& v) { return sigmoid_backward(v[0], v[1]); },
          binary_samples(arg, arg, sigmoid_backward),
          backward_errors("sigmoid_backward", sigmoid_backward))
          .py("torch.ops.aten.sigmoid_backward(x[0], x[1])",
              {{"expanded inside fn", "torch.ops.aten.sigmoid_backward(x[0].expand(4, 3), x[1])"}})
          .ref("A.sigmoid_backward(make((2, 3), 1), make((2, 3), 2))",
               [] {
                 return sigmoid_backward(make({2, 3}, 1), make({2, 3}, 2));
               },
               {2, 3},
               {1.030469283961175, -3.6257769059217346, -0.12664825514928543, -2.8009401165255925,
                -0.26038829548913695, -0.3457474660974331})
          .ref("A.sigmoid_backward(make((2, 3), 3), make((3,), 4))",
               [] {
                 return sigmoid_backward(make({2, 3}, 3), make({3}, 4));
               },
               {2, 3},
               {-3.043781318361189, 0.27447846114705615, -0.3007954490738748, -1.9768676826198108,
                0.7955908614036715, 0.33199342777128427}));

  std::vector<ErrorInput> gelu_errors = backward_errors("gelu_backward", gelu_backward_none);
  gelu_errors.push_back(e("gelu_backward", "unknown approximate",
                          "approximate must be \"none\" or \"tanh\", got \"fast\"",
                          [] { gelu_backward(make({2}, 1), make({2}, 2), "fast"); }));
  t.push_back(entry(
                  "gelu_backward", [](const V& v) { return gelu_backward(v[0], v[1]); },
                  binary_samples(arg, arg, gelu_backward_none), gelu_errors)
                  .py("torch.ops.aten.gelu_backward(*[t.contiguous() for t in "
                      "torch.broadcast_tensors(x[0], x[1])])",
                      {{"expanded inside fn",
                        "torch.ops.aten.gelu_backward(*[t.contiguous() for t in "
                        "torch.broadcast_tensors(x[0].expand(4, 3), x[1])])"}},
                      "PyTorch 1.13's float32 gelu_backward (oneDNN) rejects broadcast operands "
                      "and misreads strided ones; the operands are broadcast and made contiguous "
                      "first (same values)")
                  .ref("A.gelu_backward(make((2, 3), 1), make((2, 3), 2))",
                       [] {
                         return gelu_backward(make({2, 3}, 1), make({2, 3}, 2));
                       },
                       {2, 3},
                       {-0.3809349283643644, -0.08097128931150165, -1.07659323508857,
                        -0.09701762454688682, 0.24053757093808267, -1.1777537528450723}));
  t.push_back(
      entry(
          "gelu_backward_tanh", [](const V& v) { return gelu_backward(v[0], v[1], "tanh"); },
          binary_samples(arg, arg, gelu_backward_tanh))
          .py("torch.ops.aten.gelu_backward(x[0], x[1], approximate='tanh')",
              {{"expanded inside fn",
                "torch.ops.aten.gelu_backward(x[0].expand(4, 3), x[1], approximate='tanh')"}})
          .ref("A.gelu_backward(make((2, 3), 1), make((2, 3), 2), approximate='tanh')",
               [] {
                 return gelu_backward(make({2, 3}, 1), make({2, 3}, 2), "tanh");
               },
               {2, 3},
               {-0.3810622767173808, -0.08148627330633852, -1.0762440053115605,
                -0.09645685116387857, 0.2406686561807512, -1.1776870061787938}));

  t.push_back(
      entry(
          "_softmax_backward_data",
          [](const V& v) { return _softmax_backward_data(v[0], v[1], 1, v[1].dtype()); },
          softmax_backward_samples(_softmax_backward_data),
          softmax_backward_errors("_softmax_backward_data", _softmax_backward_data))
          .py(softmax_backward_py("_softmax_backward_data"),
              softmax_backward_py_by_desc("_softmax_backward_data", true),
              "PyTorch 1.13's _softmax_backward_data gives wrong values for transposed operands "
              "(its result is laid out as if they were contiguous); the non-contiguous sample's "
              "operands are made contiguous first (same values)")
          .ref("A._softmax_backward_data(make((2, 3), 1), make((2, 3), 2), 1, torch.float64)",
               [] {
                 return _softmax_backward_data(make({2, 3}, 1), make({2, 3}, 2), 1, kFloat64);
               },
               {2, 3},
               {0.16790306778809133, -3.8846117369768574, 0.36197898660246197, -2.9378650520161402,
                3.115704246703361, 0.01666921698652726})
          .ref("A._softmax_backward_data(make((2, 3), 1), make((2, 3), 2), 0, torch.float64)",
               [] {
                 return _softmax_backward_data(make({2, 3}, 1), make({2, 3}, 2), 0, kFloat64);
               },
               {2, 3},
               {0.4569256275788544, -2.9746426244906212, 0.31689205708600326, -2.121744504926141,
                1.9756758915580048, -0.05160907744760443}));
  t.push_back(
      entry(
          "_log_softmax_backward_data",
          [](const V& v) { return _log_softmax_backward_data(v[0], v[1], 1, v[1].dtype()); },
          softmax_backward_samples(_log_softmax_backward_data),
          softmax_backward_errors("_log_softmax_backward_data", _log_softmax_backward_data))
          .py(softmax_backward_py("_log_softmax_backward_data"),
              softmax_backward_py_by_desc("_log_softmax_backward_data"))
          .ref("A._log_softmax_backward_data(make((2, 3), 1), make((2, 3), 2), 1, torch.float64)",
               [] {
                 return _log_softmax_backward_data(make({2, 3}, 1), make({2, 3}, 2), 1, kFloat64);
               },
               {2, 3},
               {-0.4140165243687508, 1.1126316626873163, 4.0955675150385735, 1.4920878057074392,
                -1.1475976192398334, -1.9039862590295817})
          .ref("A._log_softmax_backward_data(make((2, 3), 1), make((2, 3), 2), 0, torch.float64)",
               [] {
                 return _log_softmax_backward_data(make({2, 3}, 1), make({2, 3}, 2), 0, kFloat64);
               },
               {2, 3},
               {-1.6860398269574843, 0.5776838768405829, 5.0767468562105, 1.7078814640318682,
                -5.058184385115148, 2.0547440955948684}));
  auto ln_last = [](const V& v) { return layer_norm_backward_joined(v, {3}); };
  auto ln_last_py = layer_norm_backward_py("(3,)", "-1", true);
  t.push_back(
      entry(
          "native_layer_norm_backward", ln_last,
          {s("last dim, weight", {arg({2, 3}, 1), arg({2, 3}, 2), arg({3}, 3)}),
           s("two normalized dims, no weight", {arg({2, 2, 3}, 4), arg({2, 2, 3}, 5)},
             [](const V& v) {
               return layer_norm_backward_joined(v, {2, 3});
             }),
           s("non-contiguous", {arg_t({3, 2}, 6), arg_t({3, 2}, 7), arg({3}, 8)}),
           s("only grad_out requires grad", {arg({2, 3}, 9), make({2, 3}, 10), make({3}, 11)}),
           s("empty", {arg({0, 3}, 12), arg({0, 3}, 13), arg({3}, 14)})},
          {e("native_layer_norm_backward", "normalized_shape does not match",
             "normalized_shape is (4,) but the input has shape (2, 3)",
             [] {
               native_layer_norm_backward(make({2, 3}, 1), make({2, 3}, 2), {4}, make({2, 1}, 3),
                                          make({2, 1}, 4), Tensor(), Tensor(), {true, true, true});
             }),
           e("native_layer_norm_backward", "grad_out of another shape",
             "grad_out has shape (3,) but the input has shape (2, 3)",
             [] {
               native_layer_norm_backward(make({3}, 1), make({2, 3}, 2), {3}, make({2, 1}, 3),
                                          make({2, 1}, 4), Tensor(), Tensor(), {true, true, true});
             }),
           e("native_layer_norm_backward", "statistics of the wrong shape",
             "mean and rstd must have shape (2, 1) (one value per row), got (2,) and (2, 1)",
             [] {
               native_layer_norm_backward(make({2, 3}, 1), make({2, 3}, 2), {3}, make({2}, 3),
                                          make({2, 1}, 4), Tensor(), Tensor(), {true, true, true});
             }),
           e("native_layer_norm_backward", "weight of the wrong shape",
             "weight has shape (2,) but normalized_shape is (3,)",
             [] {
               native_layer_norm_backward(make({2, 3}, 1), make({2, 3}, 2), {3}, make({2, 1}, 3),
                                          make({2, 1}, 4), make({2}, 5), Tensor(),
                                          {true, true, true});
             }),
           e("native_layer_norm_backward", "int64 input", "expected floating-point tensors",
             [] {
               native_layer_norm_backward(make({2, 3}, 1), indices({1, 2, 3, 4, 5, 6}, {2, 3}), {3},
                                          make({2, 1}, 3), make({2, 1}, 4), Tensor(), Tensor(),
                                          {true, true, true});
             }),
           e("native_layer_norm_backward", "undefined rstd",
             "got an undefined tensor (a default-constructed Tensor, or one moved from)",
             [] {
               native_layer_norm_backward(make({2, 3}, 1), make({2, 3}, 2), {3}, make({2, 1}, 3),
                                          Tensor(), Tensor(), Tensor(), {true, true, true});
             })})
          .py(ln_last_py,
              {{"two normalized dims, no weight",
                layer_norm_backward_py("(2, 3)", "(-2, -1)", false)}},
              "mean and rstd are x[1]'s statistics (as native_layer_norm's, eps 1e-5), detached: "
              "PyTorch 1.13 has no derivative for them; the three outputs are flattened and "
              "joined; the "
              "sample without a weight gets ones in PyTorch (its double backward fails without "
              "one)")
          .ref("joined(make((2, 3), 1), make((2, 3), 2), (3,), make((3,), 3)) with joined(g, x, "
               "ns, w) = torch.cat of A.native_layer_norm_backward(g, x, ns, x.mean(d, "
               "keepdim=True), torch.rsqrt(x.var(d, unbiased=False, keepdim=True) + 1e-5), w, "
               "torch.zeros(ns), [True, w is not None, True]), flattened, d the last len(ns) dims",
               [] {
                 return layer_norm_backward_joined({make({2, 3}, 1), make({2, 3}, 2), make({3}, 3)},
                                                   {3});
               },
               {12},
               {-2.2494913360425213, 1.0710776602477785, 1.1784136757947437, -0.4411390907187762,
                -0.40098235585285447, 0.8421214465716309, -1.9900331021168993, -0.6532557751569307,
                -1.185127900581928, -0.2930505534156076, 0.9567941655836358, -2.593361115417122})
          .ref(
              "joined(make((2, 2, 3), 4), make((2, 2, 3), 5), (2, 3), None) (as above)",
              [] {
                return layer_norm_backward_joined({make({2, 2, 3}, 4), make({2, 2, 3}, 5)}, {2, 3});
              },
              {18},
              {-0.5379274147557355, 0.8084119325987591, 1.0461840904517141, -1.2971542718858282,
               0.049185075468665906, -0.06869941187757544, 1.467141821864518, -0.45735602259961294,
               -0.6629982091153339, 0.7320490565551293, 0.5264068700394056, -1.6052435167441057,
               0.9287294723421131, 2.1785741913413568, -0.9715810896593999, -0.12173637066015663,
               0.7281083483390833, -2.422046932661673}));
  // embedding_dense_backward(grad_output, indices, num_weights 4, padding_idx, scale_grad_by_freq)
  auto emb = [](std::int64_t padding_idx, bool scale) {
    return [padding_idx, scale](const V& v) {
      return embedding_dense_backward(v[0], v[1], 4, padding_idx, scale);
    };
  };
  t.push_back(
      entry("embedding_dense_backward", emb(-1, false),
            {s("repeated indices", {arg({3, 2}, 1), indices({1, 3, 1}, {3})}),
             s("2-D indices", {arg({2, 2, 3}, 2), indices({0, 2, 2, 1}, {2, 2})}),
             s("padding_idx 1", {arg({3, 2}, 3), indices({1, 3, 1}, {3})}, emb(1, false)),
             s("scale_grad_by_freq", {arg({4, 2}, 4), indices({1, 3, 1, 1}, {4})}, emb(-1, true)),
             s("non-contiguous grad_output", {arg_t({2, 3}, 5), indices({0, 1, 0}, {3})}),
             s("0-dim index", {arg({2}, 6), indices({2}, {})}),
             s("empty", {arg({0, 2}, 7), indices({}, {0})}, emb(-1, false))},
            {e("embedding_dense_backward", "index out of range",
               "index 4 is out of range for 4 embeddings",
               [] {
                 embedding_dense_backward(make({2, 2}, 1), indices({0, 4}, {2}), 4, -1, false);
               }),
             e("embedding_dense_backward", "padding_idx out of range",
               "padding_idx 4 is out of range for 4 embeddings (expected -1 for none or a value "
               "in [0, 4))",
               [] {
                 embedding_dense_backward(make({2, 2}, 1), indices({0, 1}, {2}), 4, 4, false);
               }),
             e("embedding_dense_backward", "float indices", "expected int64 indices, got float64",
               [] {
                 embedding_dense_backward(make({2, 2}, 1), make({2}, 2), 4, -1, false);
               }),
             e("embedding_dense_backward", "rows do not match the indices",
               "grad_output of shape (3, 2) does not hold one row of 2 per index (2 indices)",
               [] {
                 embedding_dense_backward(make({3, 2}, 1), indices({0, 1}, {2}), 4, -1, false);
               }),
             e("embedding_dense_backward", "integer grad_output",
               "expected a floating-point grad_output, got int64",
               [] {
                 embedding_dense_backward(indices({1, 2}, {1, 2}), indices({0}, {1}), 4, -1, false);
               }),
             e("embedding_backward", "sparse", "sparse gradients are not supported",
               [] {
                 embedding_backward(make({2, 2}, 1), indices({0, 1}, {2}), 4, -1, false, true);
               })})
          .py("torch.ops.aten.embedding_dense_backward(x[0], x[1], 4, -1, False)",
              {{"padding_idx 1",
                "torch.ops.aten.embedding_dense_backward(x[0], x[1], 4, 1, False)"},
               {"scale_grad_by_freq",
                "torch.ops.aten.embedding_dense_backward(x[0] / torch.bincount(x[1], "
                "minlength=4)[x[1]].unsqueeze(-1).to(x[0].dtype), x[1], 4, -1, False)"},
               {"empty", "torch.zeros(4, 2, dtype=x[0].dtype) + x[0].sum()"}},
              "PyTorch 1.13's derivative of embedding_dense_backward leaves out "
              "scale_grad_by_freq's scales; the scale_grad_by_freq sample divides grad_output by "
              "the counts first (the same values, and the derivative of the scaled op); its "
              "derivative fails on empty indices: the empty sample is compared with zeros plus "
              "x[0].sum()")
          .ref("A.embedding_dense_backward(make((2, 2, 3), 2), idx([0, 2, 2, 1], (2, 2)), 4, -1, "
               "False)",
               [] {
                 return embedding_dense_backward(make({2, 2, 3}, 2), indices({0, 2, 2, 1}, {2, 2}),
                                                 4, -1, false);
               },
               {4, 3},
               {-0.3927399914140932, -1.7678176319144716, 0.85710472758515, -1.9684387559175,
                0.6564836035821218, -1.1185940369182568, -2.3611787473315933, 2.88866597166765,
                -0.2614893093331083, 0.0, 0.0, 0.0})
          .ref("A.embedding_dense_backward(make((4, 2), 4), idx([1, 3, 1, 1], (4,)), 4, 3, True)",
               [] {
                 return embedding_dense_backward(make({4, 2}, 4), indices({1, 3, 1, 1}, {4}), 4, 3,
                                                 true);
               },
               {4, 2}, {0.0, 0.0, 0.672672189337597, 0.49759454883721893, 0.0, 0.0, 0.0, 0.0}));
}

}  // namespace minigrad::testing
