// matmul with torch.matmul's rules, mm and bmm: checks, output and the backward here, the GEMM
// in kernels/gemm.cpp (Note [GEMM without copies], Note [GEMM on threads]).
#include <algorithm>
#include <map>
#include <string>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "minigrad/indexing.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/reduce.h"
#include "parallel.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using Grads = std::vector<Tensor>;

namespace {

using detail::blas_layout;
using detail::BlasLayout;

bool matrices_blas_ready(const Tensor& t) {
  const Shape &sh = t.shape(), &st = t.strides();
  const std::size_t n = sh.size();
  return blas_layout(sh[n - 2], sh[n - 1], st[n - 2], st[n - 1]).ok;
}

// Note [Gradients in the operand's layout]
// The gradient of a matrix operand is computed in that operand's memory layout, as PyTorch's
// mm_mat1_backward / mm_mat2_backward: for a column-major operand (a transposed view, such as a
// Linear's weight.t()) as (other^T g)^T = (g^T other)^T, one GEMM into a contiguous buffer then a
// transposed view of it. The gradient that reaches the weight through TBackward0 is then
// contiguous [out, in]: computed row-major, it arrived transposed and AccumulateGrad copied it into
// the parameter's layout, a strided copy that was a quarter of a GPT-2 small step. Batched
// operands the same way, matrix by matrix: attention's k.transpose(-2, -1) gets its gradient as
// (g^T q)^T, so TransposeBackward0 hands k a contiguous [B, T, d_k] gradient, which the view
// back to a Linear's rows takes as it is (computed as q^T g, it was cloned there: 20 MB a step
// of the large attention benchmark, tests/core/test_linear.cpp).
bool column_major(const Tensor& t) {
  const Shape &sh = t.shape(), &st = t.strides();
  const std::size_t n = sh.size();
  return n >= 2 && sh[n - 2] > 1 && sh[n - 1] > 1 && st[n - 2] == 1 && st[n - 1] == sh[n - 2];
}

// Note [Two gradients at once]
// The backward of a product (AddmmBackward0, a Linear's; MmBackward0) computes two independent
// products, grad_mat1 = g mat2^T and grad_mat2 = mat1^T g, with the same number of multiply-adds.
// They run as one parallel region of two tasks, each product whole on one thread: no product is
// split, so every element has the bits of one thread, and a weight gradient with few rows (a
// [64, 64] weight's, k = 768) no longer splits 48 : 16 at OpenBLAS's 48-row blocks (Note [GEMM on
// threads] in kernels/gemm.cpp), which left the worker waiting. On one thread the two run one
// after the other. Each result is then recorded as a product (MmBackward0), so
// create_graph runs the same code. Only for float32 / float64 operands BLAS takes as they are,
// with no empty dim.

Tensor matmul_nd(const Tensor& a_in, const Tensor& b_in, const char* node);
void record_product(const char* node, Tensor& out, const Tensor& a_in, const Tensor& b_in);

/// x = a1 b1 and y = a2 b2 (2-D) as two tasks (Note [Two gradients at once]), each recorded as a
/// product (MmBackward0) for create_graph; false, computing nothing, when an operand does not
/// qualify.
bool two_products(const Tensor& a1, const Tensor& b1, Tensor& x, const Tensor& a2, const Tensor& b2,
                  Tensor& y) {
  const Tensor* ops[] = {&a1, &b1, &a2, &b2};
  const Dtype dt = a1.dtype();
  if (dt != kFloat32 && dt != kFloat64) return false;
  for (const Tensor* t : ops)
    if (t->dtype() != dt || t->dim() != 2 || t->numel() == 0 || !matrices_blas_ready(*t))
      return false;
  x = detail::make_tensor({a1.size(0), b1.size(1)}, dt);
  y = detail::make_tensor({a2.size(0), b2.size(1)}, dt);
  const Tensor* as[] = {&a1, &a2};
  const Tensor* bs[] = {&b1, &b2};
  Tensor* outs[] = {&x, &y};
  if (profiler::detail::is_on())
    for (int i = 0; i < 2; ++i)
      profiler::detail::add_flops(2 * as[i]->size(0) * as[i]->size(1) * bs[i]->size(1));
  detail::dispatch_floating(dt, "mm", [&]<typename T>() {
    detail::parallel_for(0, 2, 1, [&](std::int64_t t0, std::int64_t t1) {
      for (std::int64_t t = t0; t < t1; ++t) {
        const Tensor &a = *as[t], &b = *bs[t];
        const std::int64_t m = a.size(0), k = a.size(1), n = b.size(1);
        BlasLayout la = blas_layout(m, k, a.strides()[0], a.strides()[1]);
        BlasLayout lb = blas_layout(k, n, b.strides()[0], b.strides()[1]);
        detail::gemm<T>(la.trans, lb.trans, m, n, k, a.impl()->data<T>(), la.ld,
                        b.impl()->data<T>(), lb.ld, outs[t]->impl()->data<T>(), n);
      }
    });
  });
  record_product("MmBackward0", x, a1, b1);
  record_product("MmBackward0", y, a2, b2);
  return true;
}

/// The gradients of mat1 [M, K] and mat2 [K, N] of a product mat1 mat2 (2-D) for g [M, N], in
/// the operands' layouts (Note [Gradients in the operand's layout]; cols1 / cols2: the operand is
/// column-major), as two tasks when they qualify (Note [Two gradients at once]); false otherwise.
bool product_grads(const Tensor& g, const Tensor& mat1, const Tensor& mat2, bool cols1, bool cols2,
                   Tensor& grad1, Tensor& grad2) {
  const Tensor gt = g.t();
  Tensor x, y;
  const bool ok = two_products(cols1 ? mat2 : g, cols1 ? gt : mat2.t(), x, cols2 ? gt : mat1.t(),
                               cols2 ? mat1 : g, y);
  if (!ok) return false;
  grad1 = cols1 ? x.t() : x;
  grad2 = cols2 ? y.t() : y;
  return true;
}

/// a [..., M, K] x b [..., K, N] with broadcast batch dims; both at least 2-D, checked by callers.
Tensor matmul_nd(const Tensor& a_in, const Tensor& b_in, const char* node) {
  Tensor a = matrices_blas_ready(a_in) ? a_in : a_in.detach().contiguous();
  Tensor b = matrices_blas_ready(b_in) ? b_in : b_in.detach().contiguous();
  const Shape &ash = a.shape(), &bsh = b.shape(), &ast = a.strides(), &bst = b.strides();
  const std::size_t na = ash.size(), nb = bsh.size();
  std::int64_t M = ash[na - 2], K = ash[na - 1], N = bsh[nb - 1];
  // Two matrices (mm, a Linear's product): no batch to broadcast (dear on a 4 x 4 product).
  Shape batch, sa, sb, out_shape{M, N};
  if (na > 2 || nb > 2) {
    batch = detail::broadcast_shapes(Shape(ash.begin(), ash.end() - 2),
                                     Shape(bsh.begin(), bsh.end() - 2), "matmul");
    out_shape.assign(batch.begin(), batch.end());
    out_shape.push_back(M);
    out_shape.push_back(N);
    // Batch strides of a and b as if broadcast to `batch` (0 on broadcast dims).
    auto batch_strides = [&](const Shape& shape, const Shape& strides) {
      Shape s(batch.size(), 0);
      const std::size_t n = shape.size() - 2, lead = batch.size() - n;
      for (std::size_t i = 0; i < n; ++i) s[lead + i] = shape[i] == 1 ? 0 : strides[i];
      return s;
    };
    sa = batch_strides(ash, ast);
    sb = batch_strides(bsh, bst);
  }
  Tensor out = detail::make_tensor(out_shape, a.dtype());
  BlasLayout la = blas_layout(M, K, ast[na - 2], ast[na - 1]);
  BlasLayout lb = blas_layout(K, N, bst[nb - 2], bst[nb - 1]);
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

  record_product(node, out, a_in, b_in);
  return out;
}

/// Records out = a_in b_in (matmul's rules, both at least 2-D) under `node` (MmBackward0,
/// BmmBackward0, ...): its backward is the two products of Note [Two gradients at once] when both
/// operands need one, else one product each.
void record_product(const char* node, Tensor& out, const Tensor& a_in, const Tensor& b_in) {
  using detail::needs_grad;
  const bool a_cols = column_major(a_in), b_cols = column_major(b_in);
  detail::record(node, out, {&a_in, &b_in},
                 {needs_grad(a_in) ? &b_in : nullptr, needs_grad(b_in) ? &a_in : nullptr},
                 [a_cols, b_cols](const Tensor& g, FunctionNode& n) {
                   // grad [..., M, N] . b^T [..., N, K] -> grad_a [..., M, K]  (the engine sums
                   // broadcast batches); a^T [..., K, M] . grad [..., M, N] -> grad_b [..., K, N].
                   // A column-major 2-D operand gets its gradient in its own layout (Note
                   // [Gradients in the operand's layout]).
                   Grads r(2);
                   if (n.needs_input_grad(0) && n.needs_input_grad(1) && g.dim() == 2 &&
                       product_grads(g, n.saved(1), n.saved(0), a_cols, b_cols, r[0], r[1]))
                     return r;
                   const Tensor gt = g.transpose(-1, -2);
                   if (n.needs_input_grad(0)) {
                     r[0] = a_cols ? matmul_nd(n.saved(0), gt, "BmmBackward0").transpose(-1, -2)
                                   : matmul_nd(g, n.saved(0).transpose(-1, -2), "BmmBackward0");
                   }
                   if (n.needs_input_grad(1)) {
                     r[1] = b_cols ? matmul_nd(gt, n.saved(1), "BmmBackward0").transpose(-1, -2)
                                   : matmul_nd(n.saved(1).transpose(-1, -2), g, "BmmBackward0");
                   }
                   return r;
                 });
}

void check_operands(const Tensor& a, const Tensor& b, const char* op) {
  MG_CHECK(a.defined() && b.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  const Shape &sa = a.shape(), &sb = b.shape();
  MG_CHECK(!sa.empty() && !sb.empty(), op,
           "both arguments need to be at least 1-D, but they have shapes ", sa, " and ", sb);
  const Dtype da = a.dtype(), db = b.dtype();
  MG_CHECK(da == db, op, "expected both operands to have the same dtype, but a is ", dtype_name(da),
           " and b is ", dtype_name(db));
  MG_CHECK(da != kBool, op, "bool tensors are not supported");
  std::int64_t k_a = sa.back();
  std::int64_t k_b = sb.size() == 1 ? sb[0] : sb[sb.size() - 2];
  MG_CHECK(k_a == k_b, op, "a has shape ", sa, " and b has shape ", sb, ": a.shape[-1] (", k_a,
           ") must equal b.shape[", sb.size() == 1 ? "0" : "-2", "] (", k_b, ")");
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("matmul");
  check_operands(a, b, "matmul");
  const std::int64_t da = a.dim(), db = b.dim();
  if (da == 2 && db == 2) return matmul_nd(a, b, "MmBackward0");
  if (da == 1 && db == 1)
    return matmul_nd(a.unsqueeze(0), b.unsqueeze(1), "DotBackward0").reshape({});
  if (da == 1) return matmul_nd(a.unsqueeze(0), b, "MmBackward0").squeeze(-2);
  if (db == 1) return matmul_nd(a, b.unsqueeze(1), "MvBackward0").squeeze(-1);
  // Note [Folded matmul]
  // a [..., M, K] times a matrix b [K, N] runs as one GEMM [B*M, K] x [K, N], as torch.matmul
  // does: one BLAS call instead of one per batch, and in backward b's gradient is one GEMM a^T g
  // over all B*M rows instead of B products that the engine then sums (the Linear weight's case).
  // A contiguous a is viewed as its rows; any other is copied first (PyTorch 1.13's
  // expect_contiguous, a CloneBackward0 node): nn::MultiheadAttention's in-projection of a
  // batch-first input, a transposed [L, N, E] view, ran as L products [N, E] x [E, 3E] with a
  // broadcast weight, and its backward as L more whose [L, 3E, E] weight gradients were then
  // summed (a third of tiny_lm's attention time).
  if (db == 2 && da > 2 && a.numel() > 0) {
    Shape out_shape = a.shape();
    out_shape.back() = b.shape()[1];
    const Tensor rows = a.contiguous().reshape({-1, a.shape().back()});
    return matmul_nd(rows, b, "MmBackward0").reshape(out_shape);
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

// ---------------------------------------------------------------- addmm

// Note [Fused addmm]
// addmm (and so Linear with a bias: F::linear) is one GEMM: the output is filled with input
// broadcast to [n, p] and BLAS computes alpha mat1 mat2 + beta out in place, so the bias costs no
// pass of its own, as PyTorch's addmm. beta 0 leaves the output unread (BLAS's rule), so a NaN in
// input does not propagate. Backward: mat1's and mat2's gradients are GEMMs, as mm's; a bias's
// (input [p] or [1, p]) is the column sums of the gradient, one pass by sum_leading_rows (split
// by columns, so the same bits on any number of threads, and the same as sum()'s), not a
// broadcast gradient that the engine reduces through sum(). The same code runs under create_graph:
// the products record MmBackward0 and the column sums are sum()'s, so they differentiate again.
// Mixed dtypes and int64 keep the composed form (mm, then mul and add with their promotion).

namespace {

/// addmm of tensors already checked, as mm then mul and add (mixed dtypes, int64).
Tensor addmm_composed(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta,
                      Scalar alpha) {
  Tensor p = mm(mat1, mat2);
  if (alpha.to_double() != 1) p = p * alpha;
  // NOTE: beta 0 ignores input entirely (a NaN in it does not propagate), as PyTorch.
  if (beta.to_double() == 0) return p;
  return beta.to_double() == 1 ? p + input : p + input * beta;
}

/// The gradient of addmm's input from the output's gradient g [n, p] (Note [Fused addmm]).
Tensor addmm_input_grad(const Tensor& g, const Shape& in_shape, double beta) {
  const std::int64_t p = g.shape()[1];
  const bool bias =
      (in_shape.size() == 1 || (in_shape.size() == 2 && in_shape[0] == 1)) && in_shape.back() == p;
  // A bias's gradient is g's column sums (sum_leading_rows, inside sum()); otherwise the engine
  // sums g to in_shape.
  Tensor r = bias ? sum(g, {0}, /*keepdim=*/in_shape.size() == 2) : g;
  return beta == 1 ? r : r * beta;
}

}  // namespace

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
  const Dtype dt = mat1.dtype();
  if ((dt != kFloat32 && dt != kFloat64) || mat2.dtype() != dt || input.dtype() != dt)
    return addmm_composed(input, mat1, mat2, beta, alpha);

  const std::int64_t M = out_shape[0], N = out_shape[1], K = mat1.shape()[1];
  const double b = beta.to_double(), a = alpha.to_double();
  Tensor m1 = matrices_blas_ready(mat1) ? mat1 : mat1.detach().contiguous();
  Tensor m2 = matrices_blas_ready(mat2) ? mat2 : mat2.detach().contiguous();
  BlasLayout l1 = blas_layout(M, K, m1.strides()[0], m1.strides()[1]);
  BlasLayout l2 = blas_layout(K, N, m2.strides()[0], m2.strides()[1]);
  Tensor out = detail::make_tensor(out_shape, dt);
  if (profiler::detail::is_on()) profiler::detail::add_flops(2 * M * N * K);
  detail::dispatch(dt, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* po = out.impl()->data<T>();
      if (b != 0) {
        // The output starts as input broadcast to [M, N]: strides 0 on broadcast dims.
        const T* pi = input.impl()->data<T>();
        const std::int64_t d = input.dim();
        const std::int64_t s0 = d == 2 && input.shape()[0] != 1 ? input.strides()[0] : 0;
        const std::int64_t s1 = d >= 1 && input.shape()[d - 1] != 1 ? input.strides()[d - 1] : 0;
        detail::parallel_for(
            0, M, std::max<std::int64_t>(1, detail::kGrainSize / std::max<std::int64_t>(N, 1)),
            [&](std::int64_t r0, std::int64_t r1) {
              for (std::int64_t i = r0; i < r1; ++i) {
                if (s1 == 1)
                  std::copy(pi + i * s0, pi + i * s0 + N, po + i * N);
                else
                  for (std::int64_t j = 0; j < N; ++j) po[i * N + j] = pi[i * s0 + j * s1];
              }
            });
      }
      if (M * N != 0)
        detail::gemm_threaded<T>(l1.trans, l2.trans, M, N, K, m1.impl()->data<T>(), l1.ld,
                                 m2.impl()->data<T>(), l2.ld, po, N, static_cast<T>(a),
                                 static_cast<T>(b));
    }
  });

  using detail::needs_grad;
  Shape in_shape = input.shape();
  const bool cols1 = column_major(mat1), cols2 = column_major(mat2);
  detail::record("AddmmBackward0", out, {&input, &mat1, &mat2},
                 {needs_grad(mat1) ? &mat2 : nullptr, needs_grad(mat2) ? &mat1 : nullptr},
                 [in_shape, a, b, cols1, cols2](const Tensor& g, FunctionNode& n) {
                   Grads r(3);
                   // beta 0: input took no part (its gradient stays undefined, as the composed
                   // form's).
                   if (n.needs_input_grad(0) && b != 0) r[0] = addmm_input_grad(g, in_shape, b);
                   if (a == 1 && n.needs_input_grad(1) && n.needs_input_grad(2) &&
                       product_grads(g, n.saved(1), n.saved(0), cols1, cols2, r[1], r[2]))
                     return r;
                   // Note [Gradients in the operand's layout]: a Linear's mat2 is weight.t().
                   if (n.needs_input_grad(1))
                     r[1] = cols1 ? mm(n.saved(0), g.t()).t() : mm(g, n.saved(0).t());
                   if (n.needs_input_grad(2))
                     r[2] = cols2 ? mm(g.t(), n.saved(1)).t() : mm(n.saved(1).t(), g);
                   for (std::size_t i = 1; i < 3; ++i)
                     if (a != 1 && r[i].defined()) r[i] = r[i] * a;
                   return r;
                 });
  return out;
}

// ---------------------------------------------------------------- einsum
// Composed of mm/matmul and views, so its gradients (and second gradients) come from those ops'
// nodes.

// Note [einsum's plan]
// The equation is rewritten into one string of labels per operand: '...' becomes one label per
// ellipsis dim (chars 1, 2, ... below 'A', right-aligned as broadcasting aligns dims, so the
// implicit output lists them first, as PyTorch). Then, per operand: a repeated label takes the
// diagonal (the dims moved to the front and indexed with arange(n) twice: a copy, differentiable
// through index, and a NaN off the diagonal stays out); a size-1 dim whose label has another size
// elsewhere is dropped (broadcasting: summing or keeping a size-1 dim is the same); a label no
// other operand and not the output has is summed. Operands are then contracted left to right,
// each pair as one batched matmul (batch, a-only, contracted) @ (batch, contracted, b-only).
Tensor einsum(const std::string& equation, const std::vector<Tensor>& tensors) {
  MG_PROFILE_OP("einsum");
  const char* op = "einsum";
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
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
  auto is_label = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  // Checks the '.'s of a term and returns where its ellipsis starts (npos without one).
  auto find_ellipsis = [&](const std::string& term, const std::string& where) {
    std::size_t at = std::string::npos;
    for (std::size_t k = 0; k < term.size(); ++k) {
      char c = term[k];
      if (c == '.') {
        MG_CHECK(term.compare(k, 3, "...") == 0, op, "equation \"", equation, "\": a '.' in ",
                 where, " that is not part of an ellipsis (...)");
        MG_CHECK(at == std::string::npos, op, "equation \"", equation,
                 "\": more than one ellipsis (...) in ", where);
        at = k;
        k += 2;
      } else {
        MG_CHECK(is_label(c), op, "equation \"", equation, "\": invalid subscript '", c, "'");
      }
    }
    return at;
  };
  std::vector<std::size_t> ellipsis(terms.size());
  std::int64_t ell_dims = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const Tensor& t = tensors[i];
    MG_CHECK(t.defined(), op, "operand ", i, " is undefined");
    ellipsis[i] = find_ellipsis(terms[i], "operand " + std::to_string(i));
    auto named = static_cast<std::int64_t>(terms[i].size());
    if (ellipsis[i] == std::string::npos) {
      MG_CHECK(named == t.dim(), op, "equation \"", equation, "\": operand ", i, " has ", t.dim(),
               " dims (shape ", t.shape(), ") but subscripts \"", terms[i], "\"");
    } else {
      named -= 3;
      MG_CHECK(named <= t.dim(), op, "equation \"", equation, "\": operand ", i, " has ", t.dim(),
               " dims (shape ", t.shape(), ") but subscripts \"", terms[i], "\" name ", named);
      ell_dims = std::max(ell_dims, t.dim() - named);
    }
  }
  MG_CHECK(ell_dims < 'A', op, "equation \"", equation, "\": too many dims under the ellipsis");
  // The labels of the last n ellipsis dims.
  auto ell_labels = [&](std::int64_t n) {
    std::string labels;
    for (std::int64_t d = ell_dims - n; d < ell_dims; ++d) labels += static_cast<char>(1 + d);
    return labels;
  };
  for (std::size_t i = 0; i < terms.size(); ++i)
    if (ellipsis[i] != std::string::npos) {
      std::int64_t n = tensors[i].dim() - static_cast<std::int64_t>(terms[i].size() - 3);
      terms[i].replace(ellipsis[i], 3, ell_labels(n));
    }
  auto describe = [&](char c) {
    return is_label(c) ? std::string("subscript '") + c + "'"
                       : "ellipsis dim " + std::to_string(c - 1);
  };
  std::map<char, std::int64_t> size, count;
  std::vector<Tensor> ops = tensors;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    Tensor& t = ops[i];
    for (std::size_t k = 0; k < terms[i].size(); ++k) {
      char c = terms[i][k];
      ++count[c];
      std::size_t first = terms[i].find(c);
      if (first == k) continue;
      auto d0 = static_cast<std::int64_t>(first), d1 = static_cast<std::int64_t>(k);
      MG_CHECK(t.shape()[d0] == t.shape()[d1], op, "equation \"", equation, "\": ", describe(c),
               " repeats in operand ", i, " with sizes ", t.shape()[d0], " and ", t.shape()[d1],
               " (shape ", t.shape(), ")");
    }
    // Diagonals: while a label repeats, move its first two dims to the front and index them.
    for (std::size_t k = 0; k < terms[i].size(); ++k) {
      char c = terms[i][k];
      std::size_t again = terms[i].find(c, k + 1);
      if (again == std::string::npos) continue;
      Shape perm{static_cast<std::int64_t>(k), static_cast<std::int64_t>(again)};
      std::string order{c};
      for (std::size_t j = 0; j < terms[i].size(); ++j)
        if (j != k && j != again) {
          perm.push_back(static_cast<std::int64_t>(j));
          order += terms[i][j];
        }
      Tensor ar = arange(t.shape()[static_cast<std::int64_t>(k)]);
      t = index(t.permute(perm), {ar, ar});
      terms[i] = order;
      k = static_cast<std::size_t>(-1);  // restart: the term changed
    }
  }
  for (std::size_t i = 0; i < terms.size(); ++i)
    for (std::size_t k = 0; k < terms[i].size(); ++k) {
      char c = terms[i][k];
      std::int64_t n = ops[i].shape()[static_cast<std::int64_t>(k)];
      auto [it, fresh] = size.emplace(c, n);
      // NOTE: sizes broadcast as PyTorch's: 1 gives way to any size (0 included).
      if (fresh || n == it->second || n == 1) continue;
      MG_CHECK(it->second == 1, op, "equation \"", equation, "\": ", describe(c), " has size ",
               it->second, " and size ", n, " (operand ", i, " has shape ", tensors[i].shape(),
               ")");
      it->second = n;
    }
  std::string rhs;
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dims, then the subscripts seen once in alphabetical order
    // (uppercase first).
    rhs = ell_labels(ell_dims);
    for (auto [c, n] : count)
      if (n == 1 && is_label(c)) rhs += c;
  } else {
    std::string given = eq.substr(arrow + 2);
    std::size_t at = find_ellipsis(given, "the output");
    for (std::size_t k = 0; k < given.size(); ++k) {
      if (k == at) {
        rhs += ell_labels(ell_dims);
        k += 2;
        continue;
      }
      char c = given[k];
      MG_CHECK(size.count(c), op, "equation \"", equation, "\": output subscript '", c,
               "' does not appear in any operand");
      MG_CHECK(rhs.find(c) == std::string::npos, op, "equation \"", equation,
               "\": output subscript '", c, "' repeats");
      rhs += c;
    }
  }
  auto has = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  // Broadcast size-1 dims are dropped first (in every operand), ...
  for (std::size_t i = 0; i < terms.size(); ++i) {
    Shape kept_shape;
    std::string kept;
    for (std::size_t k = 0; k < terms[i].size(); ++k) {
      std::int64_t n = ops[i].shape()[static_cast<std::int64_t>(k)];
      if (n == 1 && size[terms[i][k]] != 1) continue;
      kept += terms[i][k];
      kept_shape.push_back(n);
    }
    if (kept.size() == terms[i].size()) continue;
    ops[i] = ops[i].reshape(kept_shape);
    terms[i] = kept;
  }
  // ... then the labels that only one operand has (and the output lacks) are summed.
  for (std::size_t i = 0; i < terms.size(); ++i) {
    Shape dims;
    std::string kept;
    for (std::size_t k = 0; k < terms[i].size(); ++k) {
      char c = terms[i][k];
      bool elsewhere = has(rhs, c);
      for (std::size_t j = 0; j < terms.size(); ++j) elsewhere |= j != i && has(terms[j], c);
      if (elsewhere)
        kept += c;
      else
        dims.push_back(static_cast<std::int64_t>(k));
    }
    if (dims.empty()) continue;
    ops[i] = sum(ops[i], dims);
    terms[i] = kept;
  }
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
  Tensor result = ops[0];
  std::string term = terms[0];
  for (std::size_t next = 1; next < terms.size(); ++next) {
    // The labels still needed after this pair: the output's and the later operands'.
    std::string keep = rhs;
    for (std::size_t j = next + 1; j < terms.size(); ++j) keep += terms[j];
    const std::string &ta = term, &tb = terms[next];
    std::string batch, a_only, b_only, contracted;
    for (char c : ta) (has(tb, c) ? (has(keep, c) ? batch : contracted) : a_only) += c;
    for (char c : tb)
      if (!has(ta, c)) b_only += c;
    Tensor a = arrange(result, ta, batch + a_only + contracted,
                       {extent(batch), extent(a_only), extent(contracted)});
    Tensor b = arrange(ops[next], tb, batch + contracted + b_only,
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
