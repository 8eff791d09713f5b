#!/usr/bin/env python3
"""PyTorch side of tests/io/test_io.cpp (TorchInterop.*): minigrad checkpoints into torch and back.

Debian has no `safetensors` Python package, so this reads and writes the format with json and
numpy: an 8-byte little-endian header length N, N bytes of JSON
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the data.

    torch_interop.py model DIR   reads DIR/minigrad_model.safetensors and DIR/input.npy (written by
                                 minigrad), loads them into the equivalent torch module, and writes
                                 DIR/torch_output.npy (forward on the input), DIR/torch_same.safetensors
                                 (torch's state_dict, unchanged), DIR/torch_doubled.safetensors
                                 (every tensor times 2) and DIR/torch_doubled_output.npy
    torch_interop.py dtypes DIR  reads DIR/minigrad_dtypes.safetensors, checks its values, writes
                                 DIR/torch_dtypes.safetensors (numbers + 1, bools negated)
    torch_interop.py pt DIR      the torch.save format (.pt), both ways:
                                 torch.load()s DIR/minigrad_model.pt (written by nn::save) into Net,
                                 writes DIR/torch_output.npy (forward on DIR/input.npy), torch.save()s
                                 DIR/torch_doubled.pt (the state_dict times 2) and DIR/torch_layouts.pt
                                 (views, shared storages, every dtype, a Parameter), checks
                                 DIR/minigrad_dtypes.pt; then torch.load()s DIR/minigrad_trained.pt and
                                 DIR/minigrad_adam.pt (an Adam with two groups after 2 steps) into Net
                                 and torch.optim.Adam, takes 3 more steps on DIR/loss_input.npy and
                                 torch.save()s DIR/torch_model_after.pt and DIR/torch_adam_after.pt;
                                 loads DIR/minigrad_sgd.pt into torch.optim.SGD; torch.save()s
                                 DIR/torch_sgd.pt (no momentum) and DIR/torch_adamw.pt (with a scheduler's
                                 initial_lr) after a step

Exits 0 and prints "ok" when every check passes; otherwise raises with the reason.
"""
import collections
import io
import json
import struct
import sys

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "BOOL": np.bool_}
NAMES = {np.dtype(v): k for k, v in DTYPES.items()}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    assert 8 + n <= len(data), f"{path}: header length {n} exceeds file size {len(data)}"
    header = json.loads(data[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    body = data[8 + n:]
    tensors, end = {}, 0
    for name, info in header.items():
        begin, stop = info["data_offsets"]
        dtype = np.dtype(DTYPES[info["dtype"]])
        count = int(np.prod(info["shape"], dtype=np.int64))
        assert stop - begin == count * dtype.itemsize, f"{name}: offsets {begin, stop} vs shape"
        arr = np.frombuffer(body[begin:stop], dtype=dtype).reshape(info["shape"])
        tensors[name] = arr.copy()
        end = max(end, stop)
    assert end == len(body), f"{path}: data section has {len(body)} bytes, tensors cover {end}"
    return tensors, metadata


def write_safetensors(path, tensors, metadata=None):
    # The reference writer's order: larger dtypes first, then by name (not the state_dict order).
    items = sorted(tensors.items(), key=lambda kv: (-kv[1].dtype.itemsize, kv[0]))
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, arr in items:
        raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": NAMES[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


class Net(torch.nn.Module):
    """The module tests/io/test_io.cpp builds as `Net` (same registration order)."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 3)
        self.register_buffer("scale", torch.zeros(3))
        self.fc2 = torch.nn.Linear(3, 2)
        self.alpha = torch.nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x) * self.scale)) * self.alpha


def check_npy_bytes(path):
    """minigrad's .npy writer must produce numpy's bytes exactly."""
    with open(path, "rb") as f:
        ours = f.read()
    buf = io.BytesIO()
    np.save(buf, np.load(path))
    assert buf.getvalue() == ours, f"{path}: minigrad's .npy bytes differ from np.save's"


def model(d):
    tensors, metadata = read_safetensors(f"{d}/minigrad_model.safetensors")
    assert metadata == {"written_by": "minigrad"}, metadata
    net = Net()
    expected = list(net.state_dict().keys())
    assert list(tensors.keys()) == expected, f"key order {list(tensors)} != torch's {expected}"
    net.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True)
    check_npy_bytes(f"{d}/input.npy")
    x = torch.from_numpy(np.load(f"{d}/input.npy"))
    with torch.no_grad():
        np.save(f"{d}/torch_output.npy", net(x).numpy())
        write_safetensors(f"{d}/torch_same.safetensors",
                          {k: v.numpy() for k, v in net.state_dict().items()},
                          {"written_by": "torch " + torch.__version__})
        for t in net.state_dict().values():
            t.mul_(2)
        write_safetensors(f"{d}/torch_doubled.safetensors",
                          {k: v.numpy() for k, v in net.state_dict().items()})
        np.save(f"{d}/torch_doubled_output.npy", net(x).numpy())


def dtypes(d):
    tensors, _ = read_safetensors(f"{d}/minigrad_dtypes.safetensors")
    want = {
        "f32": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
        "f64": np.array([0.1, -2.5, 1e300], dtype=np.float64),
        "i64": np.array([[-(2**62), 7]], dtype=np.int64),
        "bool": np.array([True, False, True]),
        "scalar": np.array(3.5, dtype=np.float32),
        "empty": np.zeros((0, 4), dtype=np.float64),
        "transposed": (np.arange(6, dtype=np.float32).reshape(2, 3).T).copy(),
    }
    assert list(tensors) == list(want), f"keys {list(tensors)}"
    for k, v in want.items():
        got = tensors[k]
        assert got.dtype == v.dtype and got.shape == v.shape, f"{k}: {got.dtype} {got.shape}"
        assert np.array_equal(got, v), f"{k}: {got} != {v}"
    # (astype: numpy 1.24 promotes a 0-dim float32 plus 1 to float64)
    out = {k: (~v if v.dtype == np.bool_ else (v + 1).astype(v.dtype)) for k, v in tensors.items()}
    write_safetensors(f"{d}/torch_dtypes.safetensors", out)


def pt_layouts():
    """What torch.save writes for views, shared storages and every dtype minigrad reads."""
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    sd = collections.OrderedDict()
    sd["base"] = base
    sd["narrowed"] = base[1:3, 2:5]  # offset 8, strides (6, 1), shares base's storage
    sd["transposed"] = base.t()
    sd["column"] = base[:, 3]
    sd["f64"] = torch.tensor([0.1, -2.5, 1e300], dtype=torch.float64)
    sd["i64"] = torch.tensor([[-(2**62), 7]], dtype=torch.int64)
    sd["bool"] = torch.tensor([True, False, True])
    sd["scalar"] = torch.tensor(3.5)
    sd["empty"] = torch.zeros(0, 4, dtype=torch.float64)
    sd["param"] = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    return sd


def pt_model(d):
    net = Net()
    sd = torch.load(f"{d}/minigrad_model.pt")
    assert isinstance(sd, collections.OrderedDict), type(sd)
    expected = list(net.state_dict().keys())
    assert list(sd.keys()) == expected, f"key order {list(sd)} != torch's {expected}"
    net.load_state_dict(sd, strict=True)
    x = torch.from_numpy(np.load(f"{d}/input.npy"))
    with torch.no_grad():
        np.save(f"{d}/torch_output.npy", net(x).numpy())
        torch.save(collections.OrderedDict((k, v * 2) for k, v in net.state_dict().items()),
                   f"{d}/torch_doubled.pt")
    torch.save(pt_layouts(), f"{d}/torch_layouts.pt")
    got = torch.load(f"{d}/minigrad_dtypes.pt")
    for k, v in pt_layouts().items():
        assert got[k].dtype == v.dtype and got[k].shape == v.shape, f"{k}: {got[k]} != {v}"
        assert torch.equal(got[k], v.detach()), f"{k}: {got[k]} != {v}"


def loss_of(net, x):
    y = torch.tensor([0.5, -1.0]).unsqueeze(0).expand(8, 2)
    return (net(x) - y).pow(2).mean()


def pt_optim(d):
    net = Net()
    net.load_state_dict(torch.load(f"{d}/minigrad_trained.pt"))
    opt = torch.optim.Adam([{"params": [net.fc1.weight, net.fc1.bias, net.alpha], "lr": 1.0},
                            {"params": [net.fc2.weight, net.fc2.bias]}], lr=1.0)
    saved = torch.load(f"{d}/minigrad_adam.pt")
    opt.load_state_dict(saved)
    groups = opt.state_dict()["param_groups"]
    assert [g["lr"] for g in groups] == [0.01, 0.02], groups
    assert groups[1]["betas"] == (0.8, 0.99) and groups[0]["amsgrad"], groups
    assert opt.state_dict()["state"][0]["step"].item() == 2.0, opt.state_dict()["state"][0]
    x = torch.from_numpy(np.load(f"{d}/loss_input.npy"))
    for _ in range(3):
        opt.zero_grad()
        loss_of(net, x).backward()
        opt.step()
    torch.save(net.state_dict(), f"{d}/torch_model_after.pt")
    torch.save(opt.state_dict(), f"{d}/torch_adam_after.pt")
    # minigrad's SGD (two groups, momentum) into torch's; torch's SGD and AdamW saved for minigrad.
    sgd = torch.optim.SGD([{"params": [net.fc1.weight, net.fc1.bias, net.alpha]},
                           {"params": [net.fc2.weight, net.fc2.bias]}], lr=1.0)
    sgd.load_state_dict(torch.load(f"{d}/minigrad_sgd.pt"))
    groups = sgd.state_dict()["param_groups"]
    assert groups[0]["nesterov"] and groups[1]["dampening"] == 0.1, groups
    assert sgd.state_dict()["state"][4]["momentum_buffer"].shape == net.fc2.bias.shape
    adamw = torch.optim.AdamW(net.parameters(), lr=0.25)
    torch.optim.lr_scheduler.LambdaLR(adamw, lambda epoch: 1.0)  # adds initial_lr to the group
    for o in (torch.optim.SGD(net.parameters(), lr=0.125), adamw):
        o.zero_grad()
        loss_of(net, x).backward()
        o.step()
        torch.save(o.state_dict(), f"{d}/torch_{type(o).__name__.lower()}.pt")
    assert "initial_lr" in adamw.state_dict()["param_groups"][0]


if __name__ == "__main__":
    {"model": model, "dtypes": dtypes,
     "pt": lambda d: (pt_model(d), pt_optim(d))}[sys.argv[1]](sys.argv[2])
    print("ok")
