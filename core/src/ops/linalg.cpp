// matmul with torch.matmul's rules, mm and bmm: checks, output and the backward here, the GEMM
// in kernels/gemm.cpp (Note [GEMM without copies], Note [GEMM on threads]).
#include <algorithm>
#include <map>
#include <string>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/reduce.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using Grads = std::vector<Tensor>;

namespace {

using detail::blas_layout;
using detail::BlasLayout;

bool matrices_blas_ready(const Tensor& t) {
  auto n = t.dim();
  return blas_layout(t.shape()[n - 2], t.shape()[n - 1], t.strides()[n - 2], t.strides()[n - 1]).ok;
}

/// a [..., M, K] x b [..., K, N] with broadcast batch dims; both at least 2-D, checked by callers.
Tensor matmul_nd(const Tensor& a_in, const Tensor& b_in, const char* node) {
  Tensor a = matrices_blas_ready(a_in) ? a_in : a_in.detach().contiguous();
  Tensor b = matrices_blas_ready(b_in) ? b_in : b_in.detach().contiguous();
  auto na = a.dim(), nb = b.dim();
  std::int64_t M = a.shape()[na - 2], K = a.shape()[na - 1], N = b.shape()[nb - 1];
  Shape batch_a(a.shape().begin(), a.shape().end() - 2);
  Shape batch_b(b.shape().begin(), b.shape().end() - 2);
  Shape batch = detail::broadcast_shapes(batch_a, batch_b, "matmul");
  Shape out_shape;
  out_shape.reserve(batch.size() + 2);
  out_shape.assign(batch.begin(), batch.end());
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = detail::make_tensor(out_shape, a.dtype());

  // Batch strides of a and b as if broadcast to `batch` (0 on broadcast dims).
  auto batch_strides = [&](const Tensor& t) {
    Shape s(batch.size(), 0);
    auto n = static_cast<std::size_t>(t.dim()) - 2;
    std::size_t lead = batch.size() - n;
    for (std::size_t i = 0; i < n; ++i) s[lead + i] = t.shape()[i] == 1 ? 0 : t.strides()[i];
    return s;
  };
  Shape sa = batch_strides(a), sb = batch_strides(b);
  BlasLayout la = blas_layout(M, K, a.strides()[na - 2], a.strides()[na - 1]);
  BlasLayout lb = blas_layout(K, N, b.strides()[nb - 2], b.strides()[nb - 1]);
  std::int64_t n_batch = detail::shape_numel(batch);
  if (profiler::detail::is_on()) profiler::detail::add_flops(2 * n_batch * M * N * K);

  detail::dispatch(a.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      MG_ERROR("matmul", "bool tensors are not supported");
    } else {
      detail::gemm_batched<T>(batch, M, N, K, a.impl()->data<T>(), sa, la, b.impl()->data<T>(), sb,
                              lb, out.impl()->data<T>());
    }
  });

  using detail::needs_grad;
  detail::record(node, out, {&a_in, &b_in},
                 {needs_grad(a_in) ? &b_in : nullptr, needs_grad(b_in) ? &a_in : nullptr},
                 [](const Tensor& g, FunctionNode& n) {
                   // grad [..., M, N] . b^T [..., N, K] -> grad_a [..., M, K]  (the engine sums
                   // broadcast batches); a^T [..., K, M] . grad [..., M, N] -> grad_b [..., K, N]
                   Grads r(2);
                   if (n.needs_input_grad(0))
                     r[0] = matmul_nd(g, n.saved(0).transpose(-1, -2), "BmmBackward0");
                   if (n.needs_input_grad(1))
                     r[1] = matmul_nd(n.saved(1).transpose(-1, -2), g, "BmmBackward0");
                   return r;
                 });
  return out;
}

void check_operands(const Tensor& a, const Tensor& b, const char* op) {
  MG_CHECK(a.defined() && b.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(a.dim() >= 1 && b.dim() >= 1, op,
           "both arguments need to be at least 1-D, but they have shapes ", a.shape(), " and ",
           b.shape());
  MG_CHECK(a.dtype() == b.dtype(), op, "expected both operands to have the same dtype, but a is ",
           dtype_name(a.dtype()), " and b is ", dtype_name(b.dtype()));
  MG_CHECK(a.dtype() != kBool, op, "bool tensors are not supported");
  std::int64_t k_a = a.shape().back();
  std::int64_t k_b = b.dim() == 1 ? b.shape()[0] : b.shape()[b.dim() - 2];
  MG_CHECK(k_a == k_b, op, "a has shape ", a.shape(), " and b has shape ", b.shape(),
           ": a.shape[-1] (", k_a, ") must equal b.shape[", b.dim() == 1 ? "0" : "-2", "] (", k_b,
           ")");
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("matmul");
  check_operands(a, b, "matmul");
  if (a.dim() == 1 && b.dim() == 1)
    return matmul_nd(a.unsqueeze(0), b.unsqueeze(1), "DotBackward0").reshape({});
  if (a.dim() == 1) return matmul_nd(a.unsqueeze(0), b, "MmBackward0").squeeze(-2);
  if (b.dim() == 1) return matmul_nd(a, b.unsqueeze(1), "MvBackward0").squeeze(-1);
  if (a.dim() == 2 && b.dim() == 2) return matmul_nd(a, b, "MmBackward0");
  // Note [Folded matmul]
  // A contiguous a [..., M, K] times a matrix b [K, N] runs as one GEMM [B*M, K] x [K, N], as
  // torch.matmul does: one BLAS call instead of one per batch, and in backward b's gradient is one
  // GEMM a^T g over all B*M rows instead of B products that the engine then sums (the Linear
  // weight's case). a's reshape is a view, so nothing is copied.
  if (b.dim() == 2 && a.dim() > 2 && a.is_contiguous() && a.numel() > 0) {
    Shape out_shape = a.shape();
    out_shape.back() = b.shape()[1];
    return matmul_nd(a.reshape({-1, a.shape().back()}), b, "MmBackward0").reshape(out_shape);
  }
  // Broadcast batch dims must agree; matmul_nd reports a mismatch.
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  if (!ba.empty() && !bb.empty()) {
    bool ok = true;
    for (std::size_t i = 0; i < std::min(ba.size(), bb.size()); ++i) {
      std::int64_t x = ba[ba.size() - 1 - i], y = bb[bb.size() - 1 - i];
      ok &= x == y || x == 1 || y == 1;
    }
    MG_CHECK(ok, "matmul", "a has shape ", a.shape(), " and b has shape ", b.shape(),
             ": the batch dims ", ba, " and ", bb, " cannot be broadcast");
  }
  return matmul_nd(a, b, "BmmBackward0");
}

Tensor mm(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("mm");
  MG_CHECK(a.defined() && b.defined(), "mm",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(a.dim() == 2 && b.dim() == 2, "mm", "expected 2-D tensors, got shapes ", a.shape(),
           " and ", b.shape());
  check_operands(a, b, "mm");
  return matmul_nd(a, b, "MmBackward0");
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("bmm");
  MG_CHECK(a.defined() && b.defined(), "bmm",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(a.dim() == 3 && b.dim() == 3, "bmm", "expected 3-D tensors, got shapes ", a.shape(),
           " and ", b.shape());
  MG_CHECK(a.shape()[0] == b.shape()[0], "bmm", "batch sizes differ: a has shape ", a.shape(),
           " and b has shape ", b.shape());
  check_operands(a, b, "bmm");
  return matmul_nd(a, b, "BmmBackward0");
}

// ---------------------------------------------------------------- addmm, einsum
// Both are composed of mm/matmul and views, so their gradients (and second gradients) come from
// those ops' nodes.

Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta,
             Scalar alpha) {
  MG_PROFILE_OP("addmm");
  MG_CHECK(input.defined() && mat1.defined() && mat2.defined(), "addmm",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "addmm", "mat1 and mat2 must be 2-D, got shapes ",
           mat1.shape(), " and ", mat2.shape());
  MG_CHECK(mat1.shape()[1] == mat2.shape()[0], "addmm", "mat1 has shape ", mat1.shape(),
           " and mat2 has shape ", mat2.shape(), ": mat1.shape[1] (", mat1.shape()[1],
           ") must equal mat2.shape[0] (", mat2.shape()[0], ")");
  Shape out_shape{mat1.shape()[0], mat2.shape()[1]};
  MG_CHECK(detail::broadcast_shapes(input.shape(), out_shape, "addmm") == out_shape, "addmm",
           "input of shape ", input.shape(), " does not broadcast to the product's shape ",
           out_shape);
  Tensor p = mm(mat1, mat2);
  if (alpha.to_double() != 1) p = p * alpha;
  // NOTE: beta 0 ignores input entirely (a NaN in it does not propagate), as PyTorch.
  if (beta.to_double() == 0) return p;
  return beta.to_double() == 1 ? p + input : p + input * beta;
}

Tensor einsum(const std::string& equation, const std::vector<Tensor>& tensors) {
  MG_PROFILE_OP("einsum");
  const char* op = "einsum";
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  MG_CHECK(eq.find('.') == std::string::npos, op, "equation \"", equation,
           "\": ellipsis (...) is not supported");
  std::size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms{""};
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back() += c;
  }
  MG_CHECK(terms.size() == tensors.size(), op, "equation \"", equation, "\" has ", terms.size(),
           " operands but ", tensors.size(), " tensors were given");
  MG_CHECK(terms.size() <= 2, op, "equation \"", equation,
           "\": at most two operands are supported, got ", terms.size());
  auto is_label = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  std::map<char, std::int64_t> size, count;
  for (std::size_t i = 0; i < terms.size(); ++i)
    for (char c : terms[i])
      MG_CHECK(is_label(c), op, "equation \"", equation, "\": invalid subscript '", c, "'");
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const Tensor& t = tensors[i];
    MG_CHECK(t.defined(), op, "operand ", i, " is undefined");
    MG_CHECK(static_cast<std::int64_t>(terms[i].size()) == t.dim(), op, "equation \"", equation,
             "\": operand ", i, " has ", t.dim(), " dims (shape ", t.shape(), ") but subscripts \"",
             terms[i], "\"");
    for (std::size_t k = 0; k < terms[i].size(); ++k) {
      char c = terms[i][k];
      MG_CHECK(terms[i].find(c) == k, op, "equation \"", equation, "\": subscript '", c,
               "' repeats in operand ", i, " (diagonals are not supported)");
      auto [it, fresh] = size.emplace(c, t.shape()[static_cast<std::int64_t>(k)]);
      MG_CHECK(fresh || it->second == t.shape()[static_cast<std::int64_t>(k)], op, "equation \"",
               equation, "\": subscript '", c, "' has size ", it->second, " and size ",
               t.shape()[static_cast<std::int64_t>(k)], " (operand ", i, " has shape ", t.shape(),
               ")");
      ++count[c];
    }
  }
  std::string rhs;
  if (arrow == std::string::npos) {
    // Implicit output: the subscripts seen once, in alphabetical order (uppercase first).
    for (auto [c, n] : count)
      if (n == 1) rhs += c;
  } else {
    rhs = eq.substr(arrow + 2);
    for (std::size_t k = 0; k < rhs.size(); ++k) {
      MG_CHECK(is_label(rhs[k]) && size.count(rhs[k]), op, "equation \"", equation,
               "\": output subscript '", rhs[k], "' does not appear in any operand");
      MG_CHECK(rhs.find(rhs[k]) == k, op, "equation \"", equation, "\": output subscript '", rhs[k],
               "' repeats");
    }
  }
  auto has = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  // Sum first the subscripts that only one operand has and the output lacks.
  std::vector<Tensor> ops = tensors;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    Shape dims;
    std::string kept;
    for (std::size_t k = 0; k < terms[i].size(); ++k) {
      char c = terms[i][k];
      if (has(rhs, c) || (terms.size() == 2 && has(terms[1 - i], c)))
        kept += c;
      else
        dims.push_back(static_cast<std::int64_t>(k));
    }
    if (!dims.empty()) {
      ops[i] = sum(ops[i], dims);
      terms[i] = kept;
    }
  }
  Tensor result = ops[0];
  std::string term = terms[0];
  if (terms.size() == 2) {
    // A [batch, a-only, contracted] as (B, M, K) @ B [batch, contracted, b-only] as (B, K, N).
    const std::string &ta = terms[0], &tb = terms[1];
    std::string batch, a_only, b_only, contracted;
    for (char c : ta) (has(tb, c) ? (has(rhs, c) ? batch : contracted) : a_only) += c;
    for (char c : tb)
      if (!has(ta, c)) b_only += c;
    auto extent = [&](const std::string& s) {
      std::int64_t n = 1;
      for (char c : s) n *= size[c];
      return n;
    };
    auto arrange = [&](const Tensor& t, const std::string& from, const std::string& order,
                       Shape shape) {
      Shape perm;
      for (char c : order) perm.push_back(static_cast<std::int64_t>(from.find(c)));
      return (perm.empty() ? t : t.permute(perm)).reshape(shape);
    };
    Tensor a = arrange(ops[0], ta, batch + a_only + contracted,
                       {extent(batch), extent(a_only), extent(contracted)});
    Tensor b = arrange(ops[1], tb, batch + contracted + b_only,
                       {extent(batch), extent(contracted), extent(b_only)});
    term = batch + a_only + b_only;
    Shape out_shape;
    for (char c : term) out_shape.push_back(size[c]);
    result = matmul(a, b).reshape(out_shape);
  }
  Shape perm;
  bool identity = true;
  for (std::size_t j = 0; j < rhs.size(); ++j) {
    perm.push_back(static_cast<std::int64_t>(term.find(rhs[j])));
    identity &= perm.back() == static_cast<std::int64_t>(j);
  }
  return identity ? result : result.permute(perm);
}

}  // namespace minigrad
