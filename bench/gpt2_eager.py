#!/usr/bin/python3
"""GPT-2 small trained for a few steps in PyTorch eager: the reference of the GPT-2 rows (issue 15).

nanoGPT's model (model.py: GPT, Block, CausalSelfAttention, MLP; parameter names as nanoGPT's),
with GELU tanh as GPT-2, no dropout, tied embeddings, and its AdamW setup (lr 6e-4, betas
(0.9, 0.95), weight decay 0.1 on the tensors of dim >= 2, none on biases and LayerNorm weights),
foreach=True, no gradient clipping, a constant learning rate.

  gpt2_eager.py --init DIR [--tiny] [--seed S]   writes DIR/gpt2_init.safetensors (the weights,
        nanoGPT's init: normal(0, 0.02), c_proj weights normal(0, 0.02 / sqrt(2 n_layer)), biases 0,
        LayerNorm 1 and 0) and DIR/gpt2_tokens.safetensors (a fixed random token sequence)
  gpt2_eager.py --dir DIR [--steps 3] [--threads 1]   trains from them and prints, per step, the
        loss and the ms of forward, backward, optimizer and the whole step, then ms/step (median of
        the steps after the first), tokens/s and peak RSS; bench/gpt2_mg.cpp and bench/gpt2_torch.cpp
        print the same lines, bench/gpt2_compare.py compares them. Each phase is printed as wall
        time and as the process's CPU time (all threads): on a loaded machine wall time also counts
        the time other processes hold the core.

The config (layers, heads, d, vocab, block size, B, T) travels in the weights file's metadata, so all
three programs train the same model; --tiny writes a 2-layer toy for smoke tests.
"""
import argparse
import json
import math
import os
import resource
import statistics
import struct
import sys
import time

GPT2 = dict(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, block_size=1024, batch=4, seq=64)
TINY = dict(n_layer=2, n_head=4, n_embd=64, vocab_size=512, block_size=64, batch=2, seq=16)
TOKENS = 1 << 16  # the length of the token sequence; step s reads windows s*B .. s*B+B-1 of T+1


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--init", metavar="DIR", help="write the weights and tokens into DIR and exit")
    p.add_argument("--tiny", action="store_true", help="with --init: the 2-layer toy config")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--dir", default=".", help="where gpt2_init/gpt2_tokens.safetensors are")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    return p.parse_args()


ARGS = parse()
# OpenBLAS and OpenMP read their thread counts when the library loads: before `import torch`.
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


# ---------------------------------------------------------------- safetensors (no package here)

DTYPES = {torch.float32: "F32", torch.int64: "I64"}


def save_safetensors(path, tensors, metadata):
    header, offset, blobs = {"__metadata__": metadata}, 0, []
    for name, t in tensors.items():
        b = t.detach().contiguous().cpu().numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    dt = {"F32": torch.float32, "I64": torch.int64}
    out = {}
    for name, h in header.items():
        a, b = h["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[a:b]), dtype=dt[h["dtype"]]).reshape(h["shape"])
    return out, meta


# ---------------------------------------------------------------- nanoGPT's model


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"])
        self.c_proj = nn.Linear(c["n_embd"], c["n_embd"])
        self.n_head, self.n_embd = c["n_head"], c["n_embd"]
        bs = c["block_size"]
        self.register_buffer("bias", torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs),
                             persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        # torch 1.13 has no scaled_dot_product_attention: nanoGPT's "slow attention" path.
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"])
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"])

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c["n_embd"])
        self.attn = CausalSelfAttention(c)
        self.ln_2 = nn.LayerNorm(c["n_embd"])
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab_size"], c["n_embd"]),
            wpe=nn.Embedding(c["block_size"], c["n_embd"]),
            h=nn.ModuleList([Block(c) for _ in range(c["n_layer"])]),
            ln_f=nn.LayerNorm(c["n_embd"]),
        ))
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c["n_layer"]))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets):
        T = idx.size(1)
        pos = torch.arange(0, T, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        params = [p for p in self.parameters()]  # parameters() lists the tied weight once
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, foreach=True)


def config_from_meta(meta):
    return {k: int(meta[k]) for k in GPT2}


def init(dir_, tiny, seed):
    c = TINY if tiny else GPT2
    os.makedirs(dir_, exist_ok=True)
    torch.manual_seed(seed)
    model = GPT(c)
    sd = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}  # tied: wte
    meta = {k: str(v) for k, v in c.items()}
    meta["seed"] = str(seed)
    save_safetensors(os.path.join(dir_, "gpt2_init.safetensors"), sd, meta)
    g = torch.Generator().manual_seed(seed + 1)
    tokens = torch.randint(0, c["vocab_size"], (TOKENS,), generator=g, dtype=torch.int64)
    save_safetensors(os.path.join(dir_, "gpt2_tokens.safetensors"), {"tokens": tokens}, meta)
    n = sum(p.numel() for p in model.parameters())
    print(f"wrote {dir_}/gpt2_init.safetensors ({n} parameters) and gpt2_tokens.safetensors")


def batch(tokens, step, B, T):
    """Windows step*B .. step*B+B-1 of T+1 tokens (wrapping): x [B, T], y [B, T]."""
    windows = tokens.numel() // (T + 1)
    rows = [tokens[((step * B + b) % windows) * (T + 1):][:T + 1] for b in range(B)]
    w = torch.stack(rows)
    return w[:, :T].contiguous(), w[:, 1:].contiguous()


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def train(dir_, steps, threads):
    torch.set_num_threads(threads)
    weights, meta = load_safetensors(os.path.join(dir_, "gpt2_init.safetensors"))
    tokens = load_safetensors(os.path.join(dir_, "gpt2_tokens.safetensors"))[0]["tokens"]
    c = config_from_meta(meta)
    model = GPT(c)  # its random init is overwritten below
    weights["lm_head.weight"] = weights["transformer.wte.weight"]
    model.load_state_dict(weights, strict=True)
    del weights
    model.train()
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95))
    B, T = c["batch"], c["seq"]
    n_params = sum(p.numel() for p in model.parameters())
    print(f"gpt2 pytorch-eager {torch.__version__}: {n_params} parameters, B={B} T={T} "
          f"layers={c['n_layer']} d={c['n_embd']} vocab={c['vocab_size']}, threads={threads}")
    step_ms = []
    for s in range(steps):
        x, y = batch(tokens, s, B, T)
        t0 = time.perf_counter()
        c0 = time.process_time()
        loss = model(x, y)
        t1 = time.perf_counter()
        c1 = time.process_time()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        t2 = time.perf_counter()
        c2 = time.process_time()
        opt.step()
        t3 = time.perf_counter()
        c3 = time.process_time()
        ms = [(t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t3 - t0) * 1e3,
              (c1 - c0) * 1e3, (c2 - c1) * 1e3, (c3 - c2) * 1e3, (c3 - c0) * 1e3]
        step_ms.append(ms)
        print(f"step {s} loss {loss.item():.6f} forward {ms[0]:.1f} ms backward {ms[1]:.1f} ms "
              f"optimizer {ms[2]:.1f} ms step {ms[3]:.1f} ms | cpu forward {ms[4]:.1f} ms backward "
              f"{ms[5]:.1f} ms optimizer {ms[6]:.1f} ms step {ms[7]:.1f} ms", flush=True)
    summarize(step_ms, B * T)


def summarize(step_ms, tokens_per_step):
    later = step_ms[1:] if len(step_ms) > 1 else step_ms
    med = [statistics.median(m[i] for m in later) for i in range(8)]
    print(f"median of steps 1..{len(step_ms) - 1}: forward {med[0]:.1f} ms backward {med[1]:.1f} ms "
          f"optimizer {med[2]:.1f} ms | cpu forward {med[4]:.1f} ms backward {med[5]:.1f} ms "
          f"optimizer {med[6]:.1f} ms step {med[7]:.1f} ms")
    print(f"ms/step {med[3]:.1f} tokens/s {tokens_per_step / med[3] * 1e3:.1f} "
          f"peak RSS {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    if ARGS.init:
        init(ARGS.init, ARGS.tiny, ARGS.seed)
    else:
        train(ARGS.dir, ARGS.steps, ARGS.threads)
    sys.stdout.flush()
