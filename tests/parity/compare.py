#!/usr/bin/python3
"""Replays parity_dump's op-table runs in PyTorch and compares values and gradients.

    /usr/bin/python3 tests/parity/compare.py DUMP.jsonl [--verbose]

For every op-table entry and sample in the dump (see parity_dump.cpp for the format), the inputs
are rebuilt as torch tensors from the dumped values, with the dumped strides (a transposed input
is transposed in PyTorch too), the sample's PyTorch call runs forward, and backward runs with the
dumped upstream gradient (make(output.shape, 99)). Output and gradients must match:

    float64 runs: |minigrad - torch| <= 1e-10 * |torch| + 1e-12
    float32 runs: |minigrad - torch| <= 1e-5  * |torch| + 1e-6

The relative difference reported is |minigrad - torch| / max(|torch|, atol / rtol), so a run passes
exactly when that is <= rtol. Shapes and dtypes must be equal too.

The PyTorch calls come from the op table itself (OpInfo::torch and Sample::torch in
tests/core/op_table.h), written into the dump by parity_dump: each is a Python expression over x,
the list of input tensors, evaluated here with torch, F, math and the helpers below in scope. This
file holds no list of ops.

Exit status: 0 when everything matched; 1 on any mismatch, on a run without a PyTorch call (a new
op cannot be skipped silently), or on a sample that minigrad rejected but PyTorch accepts.
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


def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """PyTorch 2.x's documented reference for F.scaled_dot_product_attention (torch 1.13 has no
    such function): softmax(q k^T * scale + bias) v, a bool mask keeping the True positions, the
    weights dropped with torch.dropout(weights, dropout_p, train=True) (PyTorch 2's math path)."""
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
    return torch.dropout(torch.softmax(scores, -1), dropout_p, True) @ v


def sdpa_dropout(q, k, v, dropout_p):
    """sdpa with dropout_p after torch.manual_seed(0), as the op table's sample (Note [SDPA
    dropout]: minigrad draws torch 1.13's CPU dropout mask)."""
    torch.manual_seed(0)
    return sdpa(q, k, v, dropout_p=dropout_p)


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
# Helpers the op table's PyTorch calls use (OpInfo::torch in tests/core/op_table.h).

def on_clone(x, call, view=None):
    """An in-place entry: call(y) writes y, a clone of x[0] (or the view of it that view(clone)
    returns: CopySlices); returns the whole clone."""
    h = x[0].clone()
    call(view(h) if view is not None else h)
    return h


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


_CALLS = {}


def torch_call(expr):
    """The op table's PyTorch call (a Python expression over x) as a function of x."""
    if expr not in _CALLS:
        _CALLS[expr] = eval("lambda x: " + expr, globals())  # noqa: S307 - the repo's own table
    return _CALLS[expr]


def replay(rec, worst, problems, notes):
    """Replays one dumped run; returns True (match), False (mismatch)."""
    op, desc, run = rec["op"], rec["desc"], rec["run"]
    where = f"{op} [{rec['sample']}: {desc}] {run}"
    if not rec.get("torch"):
        problems.append(f"{where}: the op table gives no PyTorch call for this sample")
        return False
    try:
        call = torch_call(rec["torch"])
    except SyntaxError as e:
        problems.append(f"{where}: the PyTorch call {rec['torch']!r} is not Python: {e}")
        return False
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
    conventions = header.get("notes", {})
    unmapped = sorted({rec["op"] for rec in records if not rec.get("torch")})
    # The op table sets a sample's PyTorch call by its desc: two samples of an entry with their
    # own fn and the same desc would share one call.
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
            result = "NO PYTORCH CALL"
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
    for op, why in conventions.items():
        if op in per_op:
            print(f"  {op}: {why}")
    if notes:
        print("rejected by both (nothing to compare):")
        for n in notes:
            print(f"  {n}")

    failed = False
    missing = [name for name in entries if name not in per_op]
    if unmapped:
        print(f"\nFAIL: {len(unmapped)} op-table entries have a sample without a PyTorch call "
              f"(OpInfo::torch / Sample::torch in tests/core/op_table.cpp): {', '.join(unmapped)}")
        failed = True
    if missing:
        print(f"\nFAIL: entries without any sample in the dump: {', '.join(missing)}")
        failed = True
    if duplicates:
        print("\nFAIL: samples with their own fn share a desc (OpInfo::py sets calls by desc): " +
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
