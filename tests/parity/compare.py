#!/usr/bin/python3
"""Replays parity_dump's op-table runs in PyTorch and compares values and gradients.

    /usr/bin/python3 tests/parity/compare.py DUMP.jsonl [--verbose]

For every op-table entry and sample in the dump (see parity_dump.cpp for the format), the inputs
are rebuilt as torch tensors from the dumped values, with the dumped strides (a transposed input
is transposed in PyTorch too), the entry's PyTorch call in TORCH_OPS runs forward, and backward
runs with the dumped upstream gradient (make(output.shape, 99)). Output and gradients must match:

    float64 runs: |minigrad - torch| <= 1e-10 * |torch| + 1e-12
    float32 runs: |minigrad - torch| <= 1e-5  * |torch| + 1e-6

The relative difference reported is |minigrad - torch| / max(|torch|, atol / rtol), so a run passes
exactly when that is <= rtol. Shapes and dtypes must be equal too.

Exit status: 0 when everything matched; 1 on any mismatch, on a table entry or a sample with its
own fn that has no PyTorch mapping here (a new op cannot be skipped silently), or on a sample that
minigrad rejected but PyTorch accepts.
"""

import argparse
import json
import math
import sys
import warnings

import torch
import torch.nn.functional as F

RTOL = {"float64": 1e-10, "float32": 1e-5, "float64_nan": 1e-10}
ATOL = {"float64": 1e-12, "float32": 1e-6, "float64_nan": 1e-12}
DTYPES = {"float64": torch.float64, "float32": torch.float32, "int64": torch.int64,
          "bool": torch.bool}


def sample_value(i, seed):
    """op_table.h's make(): element i (row-major) of make(shape, seed)."""
    t = (i + 1) * 0.6180339887498949 + seed * 0.4142135623730951
    t = t - math.floor(t)
    return 3.6 * t - 2.0 if t < 0.5 else 3.6 * t - 1.6


def make(shape, seed, dtype=torch.float64):
    n = math.prod(shape)
    return torch.tensor([sample_value(i, seed) for i in range(n)], dtype=torch.float64).reshape(
        shape).to(dtype)


def weights(shape, seed):
    """op_table.cpp's `weights`: abs(make(shape, seed)), a float64 constant inside the sample."""
    return make(shape, seed).abs()


def weighted(pieces, dim):
    """op_table.cpp's `weighted`: piece i times (i + 1), concatenated again."""
    return torch.cat([p * float(i + 1) for i, p in enumerate(pieces)], dim)


def all_dims(x):
    return tuple(range(x.dim()))


def sdpa(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """PyTorch 2.x's documented reference for F.scaled_dot_product_attention (torch 1.13 has no
    such function): softmax(q k^T * scale + bias) v, a bool mask keeping the True positions."""
    if attn_mask is not None and attn_mask.dtype not in (torch.bool, q.dtype):
        raise RuntimeError("Expected attn_mask dtype to be bool or to match query dtype "
                           "(PyTorch 2.x's check)")
    L, S = q.size(-2), k.size(-2)
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    bias = torch.zeros(L, S, dtype=q.dtype)
    if is_causal:
        bias = bias.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = bias.masked_fill(~attn_mask, float("-inf"))
        else:
            bias = attn_mask + bias
    scores = q @ k.transpose(-2, -1) * scale + bias
    return torch.softmax(scores, -1) @ v


def dropout_minigrad_mask(x, p):
    """nn/src/layers.cpp, Note [Dropout stream]: keep where rand(shape, dtype) >= p, scale
    1 / (1 - p), drawn from the default generator (bit-identical to torch.rand)."""
    with torch.no_grad():
        mask = (torch.rand(x.shape, dtype=x.dtype) >= p).to(x.dtype) * (1.0 / (1.0 - p))
    return x * mask


def dropout_default(x):
    torch.manual_seed(0)
    return dropout_minigrad_mask(x, 0.3)


# ------------------------------------------------------------------------------------------------
# The PyTorch call of every op-table entry: name -> (default, {desc: call}). `default` runs the
# samples without their own fn (the entry's fn); the dict runs the samples that have one, keyed by
# the sample's desc. Each call takes the list of input tensors (x) and returns the output.

def unary(f):
    return (lambda x: f(x[0]), {})


def binary(f):
    return (lambda x: f(x[0], x[1]), {"expanded inside fn": lambda x: f(x[0].expand(4, 3), x[1])})


def softmax_like(f):
    return (lambda x: f(x[0], 1), {
        "dim 0": lambda x: f(x[0], 0),
        "3-D, dim -1": lambda x: f(x[0], -1),
        "3-D, middle dim": lambda x: f(x[0], 1),
        "large logits": lambda x: f(x[0] * 1000, 1),
        "0-dim": lambda x: f(x[0], 0),
    })


def amax_like(f):
    return (lambda x: f(x[0], all_dims(x[0])), {
        "dim 1 keepdim": lambda x: f(x[0], (1,), True),
        "dims 0, 2 of 3-D": lambda x: f(x[0], (0, 2), False),
        "non-contiguous": lambda x: f(x[0], (0,), False),
        "empty kept dim": lambda x: f(x[0], (1,), False),
    })


def tri_like(f):
    return (lambda x: f(x[0]), {
        "diagonal 1, wide": lambda x: f(x[0], 1),
        "diagonal -1, tall": lambda x: f(x[0], -1),
    })


def norm_samples():
    r = {}
    for p, ps in ((1.0, "1"), (2.0, "2"), (3.0, "3"), (math.inf, "inf")):
        r[f"p={ps}, all"] = lambda x, p=p: torch.linalg.vector_norm(x[0], p)
        r[f"p={ps}, dim 1"] = lambda x, p=p: torch.linalg.vector_norm(x[0], p, (1,))
        r[f"p={ps}, non-contiguous dim 0 keepdim"] = (
            lambda x, p=p: torch.linalg.vector_norm(x[0], p, (0,), True))
    r["p=0.5, all"] = lambda x: torch.linalg.vector_norm(x[0], 0.5)
    return r


def pow_scalar():
    return (lambda x: torch.pow(x[0], 2), {
        "exponent 3 (int)": lambda x: torch.pow(x[0], 3),
        "exponent 0.5": lambda x: torch.pow(x[0], 0.5),
        "exponent -1.5": lambda x: torch.pow(x[0], -1.5),
        "exponent 0": lambda x: torch.pow(x[0], 0),
        "exponent 1": lambda x: torch.pow(x[0], 1.0),
    })


def index_select_minigrad(x, dim, index):
    # minigrad accepts negative indices (counted from the end); torch.index_select does not, so
    # they are wrapped first. Same values and gradients for in-range indices.
    size = x.size(dim) if x.dim() > 0 else 1
    return torch.index_select(x, dim, torch.where(index < 0, index + size, index))


def bce_weight_with_grad(x, target, weight, pos_weight):
    # PyTorch 1.13 refuses weight and pos_weight that require grad ("not differentiable with
    # respect to argument"); minigrad differentiates them. The value and the gradients of input
    # and target come from F itself (weights detached); the gradients of weight and pos_weight
    # from PyTorch's own CPU formula, (1 - t) x + (1 + (pw - 1) t) (log1p(exp(-|x|)) + max(-x, 0)),
    # times weight, added as f(w, pw) - f(w.detach(), pw.detach()): exactly 0 in value.
    out = F.binary_cross_entropy_with_logits(x, target, weight=weight.detach(), reduction="sum",
                                             pos_weight=pos_weight.detach())
    xd, td = x.detach(), target.detach()

    def formula(w, pw):
        log_weight = (pw - 1) * td + 1
        return (w * ((1 - td) * xd + log_weight * (torch.log1p(torch.exp(-xd.abs())) +
                                                   torch.clamp(-xd, min=0)))).sum()

    return out + (formula(weight, pos_weight) - formula(weight.detach(), pos_weight.detach()))


def scatter_add(x, dim, index, src):
    # scatter_add reads src only where index has elements (src[i][j] for i, j within index's
    # shape), so src is cut to index's shape first: the same values, and PyTorch 1.13's
    # ScatterAddBackward0, which returns an index-shaped gradient for src, then works when src is
    # larger than index (it raises otherwise).
    return torch.scatter_add(x, dim, index, src[tuple(slice(0, n) for n in index.shape)])


def scatter_reduce(x, dim, index, src, reduce, include_self=True):
    """torch.scatter_reduce with src cut to index's shape first, as scatter_add above (PyTorch's
    backward needs src.shape == index.shape; minigrad gives the unused entries a zero gradient)."""
    return torch.scatter_reduce(x, dim, index, src[tuple(slice(0, n) for n in index.shape)],
                                reduce, include_self=include_self)


def scatter(x, dim, index, src):
    """torch.scatter with src cut to index's shape first, as scatter_add above (the same values;
    PyTorch 1.13's ScatterBackward0 raises for a src larger than index)."""
    return torch.scatter(x, dim, index, src[tuple(slice(0, n) for n in index.shape)])


def setitem(call):
    """op_table.cpp's index_put_ entry: call(y, x) assigns into y, a clone of x[0]."""
    def f(x):
        y = x[0].clone()
        call(y, x)
        return y
    return f


def index_put_second_dim(x, index, values):
    # minigrad's index_put(x, {nullopt, i}, v): ATen's index_put with an undefined first index,
    # which Python writes as x[:, i] = v.
    y = x.clone()
    y[:, index] = values
    return y


def rms_norm(x, normalized_shape, weight=None, eps=None):
    """PyTorch 2.4's F.rms_norm (PyTorch 1.13 has none), by its formula."""
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    dims = tuple(range(-len(normalized_shape), 0))
    y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    return y * weight if weight is not None else y


def inplace(call):
    """An in-place entry of op_table.cpp's add_inplace: call(y, x) writes y, a clone of x[0]."""
    def run(target_of):
        def f(x):
            h = x[0].clone()
            call(target_of(h), x)
            return h
        return f
    return (run(lambda h: h), {
        "on a row view (CopySlices)": run(lambda h: h.narrow(0, 1, 2)),
        "on a transposed view (CopySlices)": run(lambda h: h.t()),
    })


TORCH_OPS = {
    # elementwise
    "add": binary(torch.add),
    "sub": binary(torch.sub),
    "mul": binary(torch.mul),
    "div": binary(torch.div),
    "maximum": binary(torch.maximum),
    "minimum": binary(torch.minimum),
    "pow_tensor": binary(torch.pow),
    "add_scalar": unary(lambda a: (a + 2.5) + 3),
    "sub_scalar": unary(lambda a: (a - 2.5) - 3),
    "mul_scalar": unary(lambda a: (a * 2.5) * -3),
    "div_scalar": unary(lambda a: (a / 2.5) / -3),
    "rsub_scalar": unary(lambda a: 2.5 - a),
    "rdiv_scalar": unary(lambda a: 2.5 / a),
    "neg": unary(torch.neg),
    "exp": unary(torch.exp),
    "log": unary(torch.log),
    "sqrt": unary(torch.sqrt),
    "rsqrt": unary(torch.rsqrt),
    "abs": unary(torch.abs),
    "sign": unary(torch.sign),
    "tanh": unary(torch.tanh),
    "sigmoid": unary(torch.sigmoid),
    "relu": unary(torch.relu),
    "erf": unary(torch.erf),
    "gelu": unary(F.gelu),
    "gelu_tanh": unary(lambda a: F.gelu(a, approximate="tanh")),
    "silu": unary(F.silu),
    "mish": unary(F.mish),
    "clamp": (lambda x: torch.clamp(x[0], -0.5, 0.7), {
        "min only": lambda x: torch.clamp(x[0], min=-0.5),
        "max only": lambda x: torch.clamp(x[0], max=0.7),
        "non-contiguous, min only": lambda x: torch.clamp(x[0], min=0.1),
    }),
    "pow_scalar": pow_scalar(),
    "pow_scalar_base": (lambda x: torch.pow(2.5, x[0]), {
        "base 0.5": lambda x: torch.pow(0.5, x[0]),
    }),
    "where": (lambda x: torch.where(x[0], x[1], x[2]), {
        "scalar b": lambda x: torch.where(x[0], x[1], 0.5),
        "scalar a": lambda x: torch.where(x[0], -1.5, x[1]),
    }),
    "masked_fill": (lambda x: x[0].masked_fill(x[1], -2.5), {
        "-inf fill, then softmax (attention mask)": lambda x: torch.softmax(
            x[0].masked_fill(torch.ones(3, 3).triu(1).bool(), float("-inf")), -1),
    }),
    # reductions
    "sum": (lambda x: torch.sum(x[0]), {
        "dim 1": lambda x: torch.sum(x[0], (1,)),
        "dim 0 keepdim": lambda x: torch.sum(x[0], (0,), True),
        "dims 0, 2 of 3-D": lambda x: torch.sum(x[0], (0, 2)),
        "negative dim": lambda x: torch.sum(x[0], (-2,)),
        "non-contiguous": lambda x: torch.sum(x[0], (1,)),
        "non-contiguous 3-D, dims 0, 2": lambda x: torch.sum(x[0], (0, 2)),
        "0-dim, dim 0": lambda x: torch.sum(x[0], (0,)),
        "all dims keepdim": lambda x: torch.sum(x[0], all_dims(x[0]), True),
        "size-1 dim": lambda x: torch.sum(x[0], (0,)),
        "empty reduced dim": lambda x: torch.sum(x[0], (0,)),
        "empty kept dim": lambda x: torch.sum(x[0], (0,)),
    }),
    "mean": (lambda x: torch.mean(x[0]), {
        "dim 1": lambda x: torch.mean(x[0], (1,)),
        "dim 0 keepdim": lambda x: torch.mean(x[0], (0,), True),
        "dims 0, 2 of 3-D": lambda x: torch.mean(x[0], (0, 2)),
        "non-contiguous": lambda x: torch.mean(x[0], (-1,)),
        "empty kept dim": lambda x: torch.mean(x[0], (0,)),
    }),
    "max": unary(torch.max),
    "min": unary(torch.min),
    "max_dim": (lambda x: torch.max(x[0], 1)[0], {
        "dim 0 keepdim": lambda x: torch.max(x[0], 0, True)[0],
        "negative dim of 3-D": lambda x: torch.max(x[0], -1)[0],
        "0-dim": lambda x: torch.max(x[0], 0)[0],
    }),
    "min_dim": (lambda x: torch.min(x[0], 1)[0], {
        "dim 0 keepdim": lambda x: torch.min(x[0], 0, True)[0],
    }),
    "amax": amax_like(torch.amax),
    "amin": amax_like(torch.amin),
    "var": (lambda x: torch.var(x[0]), {
        "dim 1": lambda x: torch.var(x[0], (1,)),
        "correction 0, keepdim": lambda x: torch.var(x[0], (0,), correction=0, keepdim=True),
        "dims 0, 2 of 3-D": lambda x: torch.var(x[0], (0, 2)),
        "non-contiguous": lambda x: torch.var(x[0], (1,)),
    }),
    "std": (lambda x: torch.std(x[0]), {
        "dim 1": lambda x: torch.std(x[0], (1,)),
        "correction 0, keepdim": lambda x: torch.std(x[0], (0,), correction=0, keepdim=True),
        "non-contiguous": lambda x: torch.std(x[0], (1,)),
    }),
    "logsumexp": (lambda x: torch.logsumexp(x[0], (1,)), {
        "dims 0, 1 keepdim": lambda x: torch.logsumexp(x[0], (0, 1), True),
        "3-D, negative dim": lambda x: torch.logsumexp(x[0], (-1,)),
        "large values": lambda x: torch.logsumexp(x[0] * 300, (1,)),
    }),
    "norm": (lambda x: torch.linalg.vector_norm(x[0]), norm_samples()),
    # linear algebra, softmax
    "matmul": (lambda x: torch.matmul(x[0], x[1]), {
        "q . k^T (batched transposed view)": lambda x: torch.matmul(x[0], x[1].transpose(-2, -1)),
        "permuted batch": lambda x: torch.matmul(x[0].permute(1, 0, 2), x[1]),
        "expanded operand": lambda x: torch.matmul(x[0].unsqueeze(0).expand(2, 3, 2), x[1]),
    }),
    "mm": (lambda x: torch.mm(x[0], x[1]), {}),
    "bmm": (lambda x: torch.bmm(x[0], x[1]), {
        "transposed b": lambda x: torch.bmm(x[0], x[1].transpose(1, 2)),
        "non-contiguous batch": lambda x: torch.bmm(x[0].transpose(0, 1).narrow(0, 0, 2), x[1]),
    }),
    "softmax": softmax_like(torch.softmax),
    "log_softmax": softmax_like(torch.log_softmax),
    # shape
    "transpose": (lambda x: torch.transpose(x[0], 0, 1), {
        "3-D dims 0, 2": lambda x: torch.transpose(x[0], 0, 2),
        "negative dims": lambda x: x[0].transpose(-1, -2),
        "same dim": lambda x: torch.transpose(x[0], 1, 1),
        "0-dim": lambda x: torch.transpose(x[0], 0, -1),
    }),
    "t": unary(lambda a: a.t()),
    "permute": (lambda x: x[0].permute(2, 0, 1), {
        "negative dims": lambda x: x[0].permute(-1, 1, 0),
        "non-contiguous 2-D": lambda x: x[0].permute(1, 0),
    }),
    "expand": (lambda x: x[0].expand(3, 4), {
        "new leading dims": lambda x: x[0].expand(2, 2, 3),
        "-1 keeps a size": lambda x: x[0].expand(4, -1),
        "expand_as": lambda x: x[0].expand_as(x[1]),
        "non-contiguous": lambda x: x[0].expand(3, 2),
        "0-dim": lambda x: x[0].expand(2, 3),
    }),
    "unsqueeze": (lambda x: torch.unsqueeze(x[0], 1), {
        "end (-1)": lambda x: x[0].unsqueeze(-1),
        "0-dim": lambda x: x[0].unsqueeze(0),
    }),
    "squeeze": (lambda x: torch.squeeze(x[0]), {
        "dim 0": lambda x: torch.squeeze(x[0], 0),
        "non-size-1 dim (no-op)": lambda x: x[0].squeeze(1),
        "0-dim": lambda x: torch.squeeze(x[0], 0),
    }),
    "select": (lambda x: x[0].select(0, 1), {
        "dim 1, negative index": lambda x: x[0].select(1, -1),
        "1-D to 0-dim": lambda x: x[0].select(0, 2),
    }),
    "narrow": (lambda x: x[0].narrow(1, 1, 2), {
        "dim 0, length 0": lambda x: x[0].narrow(0, 1, 0),
        "negative start": lambda x: x[0].narrow(0, -2, 2),
    }),
    "reshape": (lambda x: x[0].reshape(3, 2), {
        "-1": lambda x: x[0].reshape(-1, 4),
        "non-contiguous (copies)": lambda x: x[0].reshape(6),
        "to 0-dim": lambda x: x[0].reshape(()),
        "expanded (copies)": lambda x: x[0].expand(3, 2).reshape(6),
        "empty": lambda x: x[0].reshape(3, 0),
    }),
    "view": (lambda x: x[0].view(3, 2), {
        "split a dim": lambda x: x[0].view(2, 2, 3),
        "non-contiguous, compatible": lambda x: x[0].view(2, 3, 1),
    }),
    "flatten": (lambda x: torch.flatten(x[0]), {
        "dims 1..2": lambda x: x[0].flatten(1),
    }),
    "contiguous": unary(lambda a: a.contiguous()),
    "clone": unary(lambda a: a.clone()),
    "to": (lambda x: x[0].to(torch.float32).to(torch.float64), {
        "float64 -> float64 (no-op)": lambda x: x[0].to(torch.float64) * 2,
    }),
    # joining and indexing
    "cat": (lambda x: torch.cat(x, 0), {
        "dim 1, three tensors": lambda x: torch.cat(x, 1),
        "negative dim": lambda x: torch.cat(x, -1),
    }),
    "stack": (lambda x: torch.stack(x, 0), {
        "dim 1": lambda x: torch.stack(x, 1),
        "dim -1, non-contiguous": lambda x: torch.stack(x, -1),
    }),
    "split": (lambda x: weighted(torch.split(x[0], 2, 1), 1), {
        "sizes {1, 3} along dim 0": lambda x: weighted(torch.split(x[0], [1, 3], 0), 0),
        "one piece only": lambda x: x[0].split(2, 1)[1],
    }),
    "chunk": (lambda x: weighted(torch.chunk(x[0], 3, 1), 1), {
        "2 chunks along dim 0": lambda x: weighted(x[0].chunk(2, 0), 0),
    }),
    "index_select": (lambda x: index_select_minigrad(x[0], 0, x[1]), {
        "dim 1, negative index": lambda x: index_select_minigrad(x[0], 1, x[1]),
    }),
    "gather": (lambda x: torch.gather(x[0], 1, x[1]), {
        "dim 0, index smaller than input": lambda x: torch.gather(x[0], 0, x[1]),
        "negative dim": lambda x: torch.gather(x[0], -1, x[1]),
    }),
    "scatter_add": (lambda x: scatter_add(x[0], 1, x[1], x[2]), {
        "dim 0, index smaller than src": lambda x: scatter_add(x[0], 0, x[1], x[2]),
    }),
    "scatter_reduce": (lambda x: scatter_reduce(x[0], 1, x[1], x[2], "sum"), {
        "prod, repeated index": lambda x: scatter_reduce(x[0], 1, x[1], x[2], "prod"),
        "mean without self, dim 0":
            lambda x: scatter_reduce(x[0], 0, x[1], x[2], "mean", include_self=False),
        "amax, repeated index": lambda x: scatter_reduce(x[0], 1, x[1], x[2], "amax"),
        "amin without self":
            lambda x: scatter_reduce(x[0], 1, x[1], x[2], "amin", include_self=False),
        "prod without self, non-contiguous, src larger than index":
            lambda x: scatter_reduce(x[0], 1, x[1], x[2], "prod", include_self=False),
        "mean, only src requires grad": lambda x: scatter_reduce(x[0], 1, x[1], x[2], "mean"),
    }),
    "index_add": (lambda x: torch.index_add(x[0], 0, x[1], x[2]), {
        "dim 1": lambda x: torch.index_add(x[0], 1, x[1], x[2]),
    }),
    # x.index({...}) is x[...]; index_put(x, {i}, v) is torch.index_put(x, (i,), v)
    "slice": (lambda x: x[0][:, 0::2], {
        "negative start, stop past the end": lambda x: x[0][-3:100:2],
        "step 3, non-contiguous": lambda x: x[0][:, 1::3],
        "empty": lambda x: x[0][:, 3:1:2],
    }),
    "index": (lambda x: x[0][x[1]], {
        "two indices broadcast, after a slice": lambda x: x[0][:, x[1], x[2]],
        "index, slice, index (not adjacent)": lambda x: x[0][x[1], :, x[2]],
        "int, stepped slice, None, Ellipsis": lambda x: x[0][1, ::2, None, ...],
        "negative slice ends": lambda x: x[0][-2:, :-1],
        "Ellipsis then an index": lambda x: x[0][..., x[1]],
        "bool scalar": lambda x: x[0][True],
        "non-contiguous": lambda x: x[0][:, x[1]],
        "mask and index broadcast": lambda x: x[0][x[1], x[2]],
    }),
    "index_put": (lambda x: torch.index_put(x[0], (x[1],), x[2]), {
        "accumulate, repeated index":
            lambda x: torch.index_put(x[0], (x[1],), x[2], accumulate=True),
        "second dim": lambda x: index_put_second_dim(x[0], x[1], x[2]),
    }),
    "index_put_": (setitem(lambda y, x: y.__setitem__((slice(None), x[1]), x[2])), {
        "basic indices only (copy_)":
            setitem(lambda y, x: y.__setitem__((slice(None, None, 2), 1), x[1][:2])),
        "a scalar value": setitem(lambda y, x: y.__setitem__(x[1], 2.5)),
        "value with leading size-1 dims":
            setitem(lambda y, x: y.__setitem__((slice(None), x[1]), x[2].reshape(1, 3, 1))),
        "on a row view (CopySlices)":
            setitem(lambda y, x: y[1:3].__setitem__((slice(None), x[1]), x[2])),
        "accumulate (ATen form)":
            setitem(lambda y, x: y.index_put_((x[1],), x[2], accumulate=True)),
    }),
    "masked_select": (lambda x: torch.masked_select(x[0], x[1]), {}),
    "tril": tri_like(torch.tril),
    "triu": tri_like(torch.triu),
    # issue 14's further ops (op_table.cpp's add_more_ops)
    "cumsum": (lambda x: torch.cumsum(x[0], 1), {
        "dim 0 of 3-D": lambda x: torch.cumsum(x[0], 0),
        "negative dim": lambda x: x[0].cumsum(-1),
        "0-dim": lambda x: torch.cumsum(x[0], 0),
    }),
    "flip": (lambda x: torch.flip(x[0], (0,)), {
        "dims 0 and 1, non-contiguous": lambda x: torch.flip(x[0], (0, 1)),
        "negative dim of 3-D": lambda x: x[0].flip(-1),
    }),
    "roll": (lambda x: torch.roll(x[0], 1, 1), {
        "two dims, negative shift": lambda x: torch.roll(x[0], (-1, 5), (0, 1)),
        "flattened": lambda x: x[0].roll(2),
    }),
    "repeat": (lambda x: x[0].repeat(2, 3), {
        "new leading dims": lambda x: x[0].repeat(2, 1, 2),
        "a zero repeat": lambda x: x[0].repeat(0, 2),
    }),
    "repeat_interleave": (lambda x: torch.repeat_interleave(x[0], 2, 1), {
        "flattened": lambda x: x[0].repeat_interleave(3),
        "dim 0, non-contiguous": lambda x: torch.repeat_interleave(x[0], 2, 0),
    }),
    "sort": (lambda x: torch.sort(x[0], stable=True, dim=-1)[0], {
        "descending, dim 0": lambda x: x[0].sort(stable=True, dim=0, descending=True)[0],
    }),
    "topk": (lambda x: torch.topk(x[0], 2, 1)[0], {
        "smallest 3, dim 0": lambda x: x[0].topk(3, 0, largest=False)[0],
        "k 0": lambda x: torch.topk(x[0], 0, 1)[0],
    }),
    "lerp": (lambda x: torch.lerp(x[0], x[1], 0.3), {}),
    "lerp_tensor": (lambda x: torch.lerp(x[0], x[1], x[2]), {
        "method": lambda x: x[0].lerp(x[1], x[2]),
    }),
    "addmm": (lambda x: torch.addmm(x[0], x[1], x[2]), {
        "broadcast input, beta 0.5, alpha 2":
            lambda x: torch.addmm(x[0], x[1], x[2], beta=0.5, alpha=2),
        "method, beta 0": lambda x: x[0].addmm(x[1], x[2], beta=0, alpha=1.5),
    }),
    "view_as": (lambda x: x[0].view_as(x[1]), {
        "method, as 1-D": lambda x: x[0].view_as(x[1]),
    }),
    "var_mean": (lambda x: torch.stack(torch.var_mean(x[0])), {
        "dim 1, biased, keepdim":
            lambda x: torch.stack(torch.var_mean(x[0], (1,), unbiased=False, keepdim=True)),
        "non-contiguous, dim 0": lambda x: torch.stack(torch.var_mean(x[0], (0,))),
    }),
    "std_mean": (lambda x: torch.stack(torch.std_mean(x[0])), {
        "dim 1": lambda x: torch.stack(torch.std_mean(x[0], (1,), unbiased=True)),
        "non-contiguous, biased, keepdim":
            lambda x: torch.stack(torch.std_mean(x[0], (0,), unbiased=False, keepdim=True)),
    }),
    "take_along_dim": (lambda x: torch.take_along_dim(x[0], x[1], 1), {
        "flattened": lambda x: x[0].take_along_dim(x[1]),
    }),
    "scatter": (lambda x: torch.scatter(x[0], 1, x[1], x[2]), {
        "dim 0, src larger than index": lambda x: scatter(x[0], 0, x[1], x[2]),
    }),
    "scatter_value": (lambda x: torch.scatter(x[0], 1, x[1], -2.5), {
        "dim 0, non-contiguous": lambda x: x[0].scatter(0, x[1], -2.5),
    }),
    "masked_scatter": (lambda x: torch.masked_scatter(x[0], x[1], x[2]), {
        "non-contiguous self, method": lambda x: x[0].masked_scatter(x[1], x[2]),
    }),
    "einsum": (lambda x: torch.einsum("ij,jk->ik", *x), {
        "batched matmul": lambda x: torch.einsum("bij,bjk->bik", *x),
        "outer": lambda x: torch.einsum("i,j->ij", *x),
        "transpose": lambda x: torch.einsum("ij->ji", *x),
        "row sums": lambda x: torch.einsum("ij->i", *x),
        "dot": lambda x: torch.einsum("i,i->", *x),
        "implicit output, non-contiguous": lambda x: torch.einsum("ij,jk", *x),
        "a subscript summed in one operand": lambda x: torch.einsum("ijk,jl->il", *x),
    }),
    # nn::functional
    "linear": (lambda x: F.linear(*x), {}),
    "mse_loss": (lambda x: F.mse_loss(x[0], x[1]), {
        "sum": lambda x: F.mse_loss(x[0], x[1], reduction="sum"),
        "none": lambda x: F.mse_loss(x[0], x[1], reduction="none"),
    }),
    "scaled_dot_product_attention": (lambda x: sdpa(x[0], x[1], x[2]), {
        "causal": lambda x: sdpa(x[0], x[1], x[2], is_causal=True),
        "bool mask, broadcast over the batch": lambda x: sdpa(
            x[0], x[1], x[2],
            attn_mask=torch.tensor([1, 0, 1, 1, 1, 0, 0, 1, 1], dtype=torch.bool).reshape(3, 3)),
        "float mask, scale 0.5": lambda x: sdpa(x[0], x[1], x[2], attn_mask=make((3, 4), 13),
                                                scale=0.5),
    }),
    "cross_entropy": (lambda x: F.cross_entropy(x[0], x[1]), {
        "weight, sum": lambda x: F.cross_entropy(x[0], x[1], weight=weights((4,), 3),
                                                 reduction="sum"),
        "label_smoothing 0.2, weight": lambda x: F.cross_entropy(
            x[0], x[1], weight=weights((4,), 6), label_smoothing=0.2),
        "[N, C, d] input, none": lambda x: F.cross_entropy(x[0], x[1], reduction="none"),
    }),
    "nll_loss": (lambda x: F.nll_loss(x[0], x[1]), {
        "weight, ignore_index": lambda x: F.nll_loss(x[0], x[1], weight=weights((4,), 3),
                                                     ignore_index=1),
        "none": lambda x: F.nll_loss(x[0], x[1], reduction="none"),
        "[N, C, d] input, sum": lambda x: F.nll_loss(x[0], x[1], reduction="sum"),
    }),
    "kl_div": (lambda x: F.kl_div(x[0], x[1], reduction="mean"), {
        "batchmean": lambda x: F.kl_div(x[0], x[1], reduction="batchmean"),
        "log_target, sum": lambda x: F.kl_div(x[0], x[1], reduction="sum", log_target=True),
        "none, target without grad": lambda x: F.kl_div(x[0], x[1], reduction="none"),
    }),
    "binary_cross_entropy_with_logits": (
        lambda x: F.binary_cross_entropy_with_logits(x[0], x[1]), {
            "weight and pos_weight, sum": lambda x: bce_weight_with_grad(x[0], x[1], x[2], x[3]),
            "none, non-contiguous": lambda x: F.binary_cross_entropy_with_logits(
                x[0], x[1], reduction="none"),
        }),
    "binary_cross_entropy": (lambda x: F.binary_cross_entropy(x[0], x[1]), {
        "weight, sum": lambda x: F.binary_cross_entropy(x[0], x[1], weight=weights((3,), 5),
                                                        reduction="sum"),
        "none, non-contiguous, target without grad":
            lambda x: F.binary_cross_entropy(x[0], x[1], reduction="none"),
    }),
    "l1_loss": (lambda x: F.l1_loss(x[0], x[1]), {
        "sum": lambda x: F.l1_loss(x[0], x[1], reduction="sum"),
        "none, non-contiguous": lambda x: F.l1_loss(x[0], x[1], reduction="none"),
    }),
    "smooth_l1_loss": (lambda x: F.smooth_l1_loss(x[0], x[1]), {
        "beta 0.5, none": lambda x: F.smooth_l1_loss(x[0], x[1], reduction="none", beta=0.5),
        "beta 0 is l1, sum, non-contiguous":
            lambda x: F.smooth_l1_loss(x[0], x[1], reduction="sum", beta=0.0),
    }),
    "huber_loss": (lambda x: F.huber_loss(x[0], x[1]), {
        "delta 0.5, none": lambda x: F.huber_loss(x[0], x[1], reduction="none", delta=0.5),
        "delta 2, sum, non-contiguous":
            lambda x: F.huber_loss(x[0], x[1], reduction="sum", delta=2.0),
    }),
    "layer_norm": (lambda x: F.layer_norm(x[0], (x[0].size(-1),), *x[1:]), {
        "two normalized dims": lambda x: F.layer_norm(x[0], (2, 3), x[1], x[2]),
        "non-contiguous, eps 0.1": lambda x: F.layer_norm(x[0], (4,), x[1], x[2], eps=0.1),
    }),
    "rms_norm": (lambda x: rms_norm(x[0], (x[0].size(-1),), *x[1:]), {
        "two normalized dims": lambda x: rms_norm(x[0], (2, 3), x[1]),
        "non-contiguous, eps 0.1": lambda x: rms_norm(x[0], (4,), x[1], eps=0.1),
    }),
    "embedding": (lambda x: F.embedding(x[0], x[1]), {}),
    "dropout": (lambda x: dropout_default(x[0]), {
        "p 0 is the identity": lambda x: F.dropout(x[0], 0.0),
        "p 1 zeroes everything": lambda x: F.dropout(x[0], 1.0),
        "eval": lambda x: F.dropout(x[0], 0.5, training=False),
    }),
    # a custom Function: the tutorial's hand-written attention, against PyTorch's own autograd
    "custom_attention": (lambda x: torch.softmax(x[0] @ x[1].transpose(-2, -1) /
                                                 math.sqrt(x[0].shape[-1]), -1) @ x[2], {}),
    # in-place (op_table.cpp's add_inplace)
    "add_": inplace(lambda y, x: y.add_(x[1])),
    "sub_": inplace(lambda y, x: y.sub_(x[1])),
    "mul_": inplace(lambda y, x: y.mul_(x[1])),
    "div_": inplace(lambda y, x: y.div_(x[1])),
    "pow_tensor_": inplace(lambda y, x: y.pow_(x[1])),
    "copy_": inplace(lambda y, x: y.copy_(x[1])),
    "add_scalar_": inplace(lambda y, x: y.add_(2.5, alpha=-2)),
    "sub_scalar_": inplace(lambda y, x: y.sub_(2.5)),
    "mul_scalar_": inplace(lambda y, x: y.mul_(-3)),
    "div_scalar_": inplace(lambda y, x: y.div_(2.5)),
    "pow_": inplace(lambda y, x: y.pow_(3)),
    "neg_": inplace(lambda y, x: y.neg_()),
    "exp_": inplace(lambda y, x: y.exp_()),
    "log_": inplace(lambda y, x: y.log_()),
    "sqrt_": inplace(lambda y, x: y.sqrt_()),
    "abs_": inplace(lambda y, x: y.abs_()),
    "relu_": inplace(lambda y, x: y.relu_()),
    "sigmoid_": inplace(lambda y, x: y.sigmoid_()),
    "tanh_": inplace(lambda y, x: y.tanh_()),
    "clamp_": inplace(lambda y, x: y.clamp_(-0.5, 0.8)),
    "fill_": inplace(lambda y, x: y.fill_(2.5)),
    "zero_": inplace(lambda y, x: y.zero_()),
    "masked_fill_": inplace(lambda y, x: y.masked_fill_(x[1], -2.5)),
}

# Samples compared against a reconstruction of minigrad's documented convention rather than the
# PyTorch function itself, and why. Printed in the summary.
CONVENTIONS = {
    "dropout":
        "p in (0, 1): minigrad's mask is rand(shape) >= p (Note [Dropout stream]), PyTorch's "
        "F.dropout draws bernoulli_(1 - p), another stream; compared with "
        "x * ((torch.rand(shape) >= p) / (1 - p)) after manual_seed(0), which checks the draws "
        "bit for bit, not against F.dropout's mask (p 0, p 1 and eval: F.dropout itself)",
    "rms_norm":
        "torch 1.13 has no F.rms_norm; compared with PyTorch 2.4's formula "
        "(x * rsqrt(mean(x^2) + eps) * weight, eps = finfo(dtype).eps by default) in torch ops",
    "scaled_dot_product_attention":
        "torch 1.13 has no F.scaled_dot_product_attention; compared with PyTorch 2.x's "
        "documented reference (softmax(q k^T * scale + mask) v) in torch ops",
    "scatter_add":
        "PyTorch 1.13's scatter_add backward fails when src is larger than index; src is cut to "
        "index's shape first (same values)",
    "scatter":
        "PyTorch 1.13's scatter backward fails when src is larger than index; src is cut to "
        "index's shape first (same values)",
    "binary_cross_entropy_with_logits":
        "PyTorch 1.13 does not differentiate weight and pos_weight; the value and the gradients "
        "of input and target come from F.binary_cross_entropy_with_logits, those of weight and "
        "pos_weight from PyTorch's formula written in torch ops",
    "index_select":
        "torch.index_select rejects negative indices; minigrad counts them from the end; "
        "compared with the wrapped indices",
}


# ------------------------------------------------------------------------------------------------

def decode(v):
    return float(v) if isinstance(v, str) else v


def to_torch(desc):
    """An input tensor from its dumped dtype, shape, strides and row-major values."""
    dtype = DTYPES[desc["dtype"]]
    shape = desc["shape"]
    values = torch.tensor([decode(v) for v in desc["values"]], dtype=torch.float64)
    values = values.reshape(shape).to(dtype)
    strides = desc.get("strides")
    if strides is not None and all(s > 0 for s in strides) and math.prod(shape) > 0:
        t = torch.empty_strided(shape, strides, dtype=dtype)
        t.copy_(values)
    else:
        t = values.clone()
    if desc.get("requires_grad"):
        t.requires_grad_()
    return t


class Diff:
    """The worst difference seen, and where."""

    def __init__(self):
        self.rel = 0.0
        self.where = ""
        self.values = (0.0, 0.0)
        self.compared = 0
        self.identical = 0

    def update(self, rel, where, mg, pt):
        if rel > self.rel or not self.where:
            self.rel, self.where, self.values = rel, where, (mg, pt)


def compare_values(mg_desc, pt, run, what, worst, problems):
    """Compares a dumped tensor with a torch tensor; returns whether they match."""
    if pt is None:
        problems.append(f"{what}: minigrad has a tensor, PyTorch has none")
        return False
    pt = pt.detach()
    if list(pt.shape) != mg_desc["shape"]:
        problems.append(f"{what}: shape {tuple(mg_desc['shape'])} in minigrad, "
                        f"{tuple(pt.shape)} in PyTorch")
        return False
    pt_dtype = str(pt.dtype).replace("torch.", "")
    if pt_dtype != mg_desc["dtype"]:
        problems.append(f"{what}: dtype {mg_desc['dtype']} in minigrad, {pt_dtype} in PyTorch")
        return False
    rtol, atol = RTOL[run], ATOL[run]
    ok = True
    mg_values = [decode(v) for v in mg_desc["values"]]
    pt_values = pt.to(torch.float64).reshape(-1).tolist()
    for i, (a, b) in enumerate(zip(mg_values, pt_values)):
        worst.compared += 1
        if a == b or (math.isnan(a) and math.isnan(b)):
            rel = 0.0
            worst.identical += 1
        elif math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
            rel = math.inf
        else:
            rel = abs(a - b) / max(abs(b), atol / rtol)
        worst.update(rel, f"{what}[{i}]", a, b)
        if not rel <= rtol:
            if ok:
                problems.append(f"{what}[{i}]: minigrad {a!r}, PyTorch {b!r} "
                                f"(relative difference {rel:.3g} > {rtol:g})")
            ok = False
    return ok


def replay(rec, worst, problems, notes):
    """Replays one dumped run; returns True (match), False (mismatch)."""
    op, desc, run = rec["op"], rec["desc"], rec["run"]
    where = f"{op} [{rec['sample']}: {desc}] {run}"
    if op not in TORCH_OPS:
        problems.append(f"{where}: no PyTorch mapping for this op in compare.py")
        return False
    default, by_desc = TORCH_OPS[op]
    if rec["has_fn"]:
        if desc not in by_desc:
            problems.append(f"{where}: the sample has its own fn and compare.py has no PyTorch "
                            f"call for its desc")
            return False
        call = by_desc[desc]
    else:
        call = default
    inputs = [to_torch(d) for d in rec["inputs"]]
    try:
        out = call(inputs)
    except Exception as e:  # noqa: BLE001 - report whatever PyTorch raised
        if "error" in rec:
            notes.append(f"{where}: both reject it (minigrad: {rec['error']}; PyTorch: {e})")
            return True
        problems.append(f"{where}: PyTorch raised {type(e).__name__}: {e}")
        return False
    if "error" in rec:
        problems.append(f"{where}: minigrad threw '{rec['error']}', PyTorch returned "
                        f"{tuple(out.shape)} {out.dtype}")
        return False
    ok = compare_values(rec["output"], out, run, f"{where} output", worst, problems)
    if not ok:
        return False
    if out.requires_grad:
        upstream = torch.tensor([decode(v) for v in rec["upstream"]], dtype=torch.float64)
        try:
            out.backward(upstream.reshape(out.shape).to(out.dtype))
        except Exception as e:  # noqa: BLE001
            problems.append(f"{where}: PyTorch's backward raised {type(e).__name__}: {e}")
            return False
    for i, (t, g) in enumerate(zip(inputs, rec["grads"])):
        if not t.requires_grad:
            continue
        what = f"{where} grad of input {i}"
        if g is None and t.grad is None:
            continue
        if g is None:
            g = {"dtype": rec["inputs"][i]["dtype"], "shape": list(t.shape),
                 "values": [0.0] * t.numel()}
        pt_grad = t.grad if t.grad is not None else torch.zeros_like(t)
        ok &= compare_values(g, pt_grad, run, what, worst, problems)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump", help="parity_dump's output (JSON lines)")
    parser.add_argument("--verbose", action="store_true", help="print every sample")
    args = parser.parse_args()
    torch.set_num_threads(1)
    # kl_div's reduction "mean" is the op table's default, as minigrad's; PyTorch warns about it.
    warnings.filterwarnings("ignore", message="reduction: 'mean' divides the total loss")

    with open(args.dump) as f:
        header = json.loads(f.readline())["header"]
        records = [json.loads(line) for line in f if line.strip()]

    entries = header["entries"]
    unmapped = [name for name in entries if name not in TORCH_OPS]
    # The PyTorch calls are keyed by desc: two samples of an entry with their own fn and the same
    # desc would silently share one call.
    seen, duplicates = {}, set()
    for rec in records:
        if rec["has_fn"]:
            key = (rec["op"], rec["desc"])
            if seen.setdefault(key, rec["sample"]) != rec["sample"]:
                duplicates.add(key)
    worst = {run: Diff() for run in RTOL}
    per_op = {}
    problems_all, notes = [], []
    counts = {run: 0 for run in RTOL}
    for rec in records:
        problems = []
        ok = replay(rec, worst[rec["run"]], problems, notes)
        counts[rec["run"]] += 1
        stats = per_op.setdefault(rec["op"], {"runs": 0, "failed": 0, "samples": set()})
        stats["runs"] += 1
        stats["samples"].add(rec["sample"])
        if not ok:
            stats["failed"] += 1
            problems_all.extend(problems)
        if args.verbose:
            print(f"  {'ok  ' if ok else 'FAIL'} {rec['op']} [{rec['sample']}: {rec['desc']}] "
                  f"{rec['run']}")

    print(f"{'op':34s} {'samples':>7s} {'runs':>5s}  result")
    for name in entries:
        s = per_op.get(name)
        if s is None:
            print(f"{name:34s} {0:7d} {0:5d}  NO SAMPLES")
            continue
        result = "ok" if s["failed"] == 0 else f"FAILED {s['failed']} run(s)"
        if name in unmapped:
            result = "NO PYTORCH MAPPING"
        print(f"{name:34s} {len(s['samples']):7d} {s['runs']:5d}  {result}")

    n_samples = sum(len(s["samples"]) for s in per_op.values())
    print()
    print(f"compared {len(per_op)} ops, {n_samples} samples: {counts['float64']} float64 runs "
          f"(rtol {RTOL['float64']:g}, atol {ATOL['float64']:g}) and {counts['float32']} float32 "
          f"runs (rtol {RTOL['float32']:g}, atol {ATOL['float32']:g}), values and gradients; "
          f"{counts['float64_nan']} float64 runs with a NaN in the first floating input "
          f"(NaN must meet NaN)")
    for run in RTOL:
        w = worst[run]
        print(f"{run}: {w.compared} values compared, {w.identical} bit-identical; worst relative "
              f"difference {w.rel:.3g} at {w.where} (minigrad {w.values[0]!r}, "
              f"PyTorch {w.values[1]!r})")
    print("compared with a documented convention instead of the PyTorch function itself:")
    for op, why in CONVENTIONS.items():
        if op in per_op:
            print(f"  {op}: {why}")
    if notes:
        print("rejected by both (nothing to compare):")
        for n in notes:
            print(f"  {n}")

    failed = False
    missing = [name for name in entries if name not in per_op]
    if unmapped:
        print(f"\nFAIL: {len(unmapped)} op-table entries have no PyTorch mapping in compare.py: "
              f"{', '.join(unmapped)}")
        failed = True
    if missing:
        print(f"\nFAIL: entries without any sample in the dump: {', '.join(missing)}")
        failed = True
    if duplicates:
        print("\nFAIL: samples with their own fn share a desc (compare.py keys its calls by desc): " +
              ", ".join(f"{op} '{desc}'" for op, desc in sorted(duplicates)))
        failed = True
    if problems_all:
        print(f"\nFAIL: {len(problems_all)} mismatch(es):")
        for p in problems_all:
            print(f"  {p}")
        failed = True
    print("\nop-table parity with PyTorch " + torch.__version__ + ": " +
          ("FAILED" if failed else "passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
