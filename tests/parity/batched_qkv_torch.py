#!/usr/bin/python3
"""examples/batched_qkv.cpp in PyTorch: prints the same four lines, character for character.

    /usr/bin/python3 tests/parity/batched_qkv_torch.py

run_parity.sh compares this output with the C++ program's: equal text means equal random
numbers (randn, then nn.Linear's kaiming_uniform_ in creation order) and equal printing (the
out[0, 0] repr with its grad_fn suffix), and values that round to the same 4 decimals.
"""

import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.manual_seed(0)
B, T, d_model, d_k = 2, 5, 16, 8
x = torch.randn(B, T, d_model)
W_q = nn.Linear(d_model, d_k, bias=False)
W_k = nn.Linear(d_model, d_k, bias=False)
W_v = nn.Linear(d_model, d_k, bias=False)
q, k, v = W_q(x), W_k(x), W_v(x)
scores = q @ k.transpose(-2, -1)
weights = torch.softmax(scores, -1)
out = weights @ v


def shape(t):
    return "(" + ", ".join(str(s) for s in t.shape) + ")"


print(f"q, k, v: {shape(q)}   scores: {shape(scores)}   out: {shape(out)}")
rows_sum_to_1 = torch.allclose(weights.sum(-1), torch.ones(B, T))
print("rows sum to 1: " + ("true" if rows_sum_to_1 else "false"))
print(f"parameters in the three projections: {3 * d_model * d_k}")
print(f"out[0, 0] = {out[0, 0]}")
