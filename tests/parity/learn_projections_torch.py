#!/usr/bin/python3
"""examples/learn_projections.cpp in PyTorch, line for line, for the training parity check.

    /usr/bin/python3 tests/parity/learn_projections_torch.py [--seed 0] [--optimizer sgd|adam]
        [--steps 1000] [--lr LR]
        prints "step loss" for every step (the C++ program's --loss-log format, "%d %.9g")

    /usr/bin/python3 tests/parity/learn_projections_torch.py --check BINARY [--seeds 0-9]
        runs BINARY (learn_projections) with --loss-log for every seed and both optimizers and
        compares its losses with this script's, step by step (rtol 1e-5), and the step counts

Same model (W_q, W_k = nn.Linear(3, 3, bias=False), created in that order after
torch.manual_seed(seed)), data, loss -(target * log_softmax(q k^T)).sum(-1).mean(), optimizer
(SGD lr 2 or Adam lr 0.1 by default), update order (zero_grad, backward, step) and stopping rule
(the attention table reaches the target, or `steps` updates were made).
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn

RTOL = 1e-5
ATOL = 1e-7


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.W_q = nn.Linear(3, 3, bias=False)
        self.W_k = nn.Linear(3, 3, bias=False)

    def scores(self, X):
        return self.W_q(X) @ self.W_k(X).transpose(-2, -1)


def reached(table):
    """The C++ reached(): warm splits over the nouns, the other rows are even (to 0.02)."""
    v = [x for row in table.tolist() for x in row]
    warm = v[1] >= 0.45 and v[3] >= 0.45 and v[0] <= 0.05
    even = all(math.fabs(v[i] - 0.25) <= 0.02 for i in range(4, 16))
    return warm and even


def train(seed, optimizer="sgd", steps=1000, lr=0.0):
    """Returns [(step, loss)] for every step, as learn_projections --loss-log writes them."""
    if lr == 0:
        lr = 0.1 if optimizer == "adam" else 2.0
    torch.manual_seed(seed)
    X = torch.tensor([[1.0, 0.0, 0.0],   # warm   adjective
                      [0.0, 1.0, 0.0],   # jacket noun
                      [0.0, 0.0, 1.0],   # for    neither
                      [0.0, 1.0, 0.0]])  # winter noun
    target = torch.tensor([[0.0, 0.5, 0.0, 0.5],
                           [0.25, 0.25, 0.25, 0.25],
                           [0.25, 0.25, 0.25, 0.25],
                           [0.25, 0.25, 0.25, 0.25]])
    model = Attention()
    if optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr)
    log = []
    step = 0
    while True:
        logp = torch.log_softmax(model.scores(X), -1)
        loss = -(target * logp).sum(-1).mean()
        table = logp.detach().exp()
        done = reached(table) or step == steps
        log.append((step, loss.item()))
        if done:
            break
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
    return log


def read_log(path):
    with open(path) as f:
        return [(int(a), float(b)) for a, b in (line.split() for line in f if line.strip())]


def parse_seeds(text):
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def check(binary, seeds):
    failed = False
    worst = (0.0, "")
    total_steps = 0
    with tempfile.TemporaryDirectory() as tmp:
        for optimizer in ("sgd", "adam"):
            for seed in seeds:
                path = os.path.join(tmp, f"{optimizer}_{seed}.txt")
                cmd = [binary, "--seed", str(seed), "--optimizer", optimizer, "--loss-log", path,
                       "--picture", ""]
                proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True)
                if not os.path.exists(path):
                    print(f"FAIL {optimizer} seed {seed}: {' '.join(cmd)} wrote no loss log "
                          f"(exit {proc.returncode}):\n{proc.stdout}")
                    failed = True
                    continue
                mg = read_log(path)
                pt = train(seed, optimizer)
                bad = []
                run_worst = 0.0
                for (s1, a), (s2, b) in zip(mg, pt):
                    rel = abs(a - b) / max(abs(b), ATOL / RTOL)
                    run_worst = max(run_worst, rel)
                    if rel > worst[0]:
                        worst = (rel, f"{optimizer} seed {seed} step {s1} "
                                      f"(minigrad {a!r}, PyTorch {b!r})")
                    if s1 != s2 or not rel <= RTOL:
                        bad.append(f"step {s1}: minigrad {a!r}, PyTorch {b!r} (relative {rel:.3g})")
                same_steps = len(mg) == len(pt)
                total_steps += len(mg)
                status = "ok" if same_steps and not bad else "FAIL"
                print(f"{status:4s} {optimizer:4s} seed {seed}: {len(mg) - 1} steps in minigrad, "
                      f"{len(pt) - 1} in PyTorch; final loss {mg[-1][1]:.9g} vs {pt[-1][1]:.9g}; "
                      f"worst relative difference {run_worst:.3g}")
                if not same_steps:
                    print(f"     different number of steps: {len(mg) - 1} vs {len(pt) - 1}")
                for b in bad[:5]:
                    print(f"     {b}")
                failed |= status != "ok"
    print(f"learn_projections: {len(seeds)} seeds x 2 optimizers, {total_steps} losses compared "
          f"(rtol {RTOL:g}); worst relative difference {worst[0]:.3g} at {worst[1]}")
    print("training parity with PyTorch " + torch.__version__ + ": " +
          ("FAILED" if failed else "passed"))
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--lr", type=float, default=0.0)
    parser.add_argument("--check", metavar="BINARY", help="compare with learn_projections")
    parser.add_argument("--seeds", default="0-9", help="seeds for --check: 0-9 or 0,3,7")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.check:
        return check(args.check, parse_seeds(args.seeds))
    for step, loss in train(args.seed, args.optimizer, args.steps, args.lr):
        print(f"{step} {loss:.9g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
