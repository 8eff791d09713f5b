#!/usr/bin/env python3
"""PyTorch side of tests/io/test_archive.cpp (Archive.PyTorchLoadsWhatMgSaveWritesAndBack).

    archive_interop.py DIR   torch.load()s what mg::save and OutputArchive wrote in DIR
                             (mg_tensor.pt, mg_list.pt, mg_archive.pt, mg_net.pt, x.pt) and checks
                             them; loads mg_net.pt into the same net with load_state_dict and
                             torch.save()s its forward on x (torch_net_out.pt) and its state_dict
                             times 2 (torch_net_doubled.pt); torch.save()s py_tensor.pt (a float64
                             view), py_list.pt and py_dict.pt for minigrad to read, and an Adam's
                             state_dict after one step (torch_adam.pt), its net's before and
                             after a second step (torch_adam_net.pt, torch_adam_net_after.pt).

Exits 0 and prints "ok" when every check passes; otherwise raises with the reason.
"""
import sys

import torch


class Net(torch.nn.Module):
    """tests/io/test_archive.cpp's Net."""

    def __init__(self):
        super().__init__()
        self.seq = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
        self.head = torch.nn.Linear(2, 1, bias=False)
        self.register_buffer("scale", torch.full((2,), 0.5))

    def forward(self, x):
        return self.head(self.seq(x) * self.scale)


def main(d):
    t = torch.load(f"{d}/mg_tensor.pt")
    assert isinstance(t, torch.Tensor), type(t)
    assert t.dtype == torch.float32 and t.tolist() == [[1, 2, 3], [4, 5, 6]], t

    lst = torch.load(f"{d}/mg_list.pt")
    assert isinstance(lst, list) and len(lst) == 2, lst
    assert lst[0].dtype == torch.int64 and lst[0].tolist() == [0, 1, 2], lst[0]
    assert lst[1].dtype == torch.bool and lst[1].tolist() == [True], lst[1]

    a = torch.load(f"{d}/mg_archive.pt")
    assert list(a.keys()) == ["epoch", "lr", "done", "name", "sub.x"], list(a.keys())
    assert type(a["epoch"]) is int and a["epoch"] == 3, a["epoch"]
    assert type(a["lr"]) is float and a["lr"] == 0.5, a["lr"]
    assert a["done"] is True and a["name"] == "ckpt", a
    assert a["sub.x"].dtype == torch.float64 and a["sub.x"].tolist() == [0.25], a["sub.x"]

    net = Net()
    state = torch.load(f"{d}/mg_net.pt")
    assert list(state.keys()) == list(net.state_dict().keys()), list(state.keys())
    net.load_state_dict(state)  # strict: the same names and shapes as PyTorch's state_dict
    x = torch.load(f"{d}/x.pt")
    with torch.no_grad():
        torch.save(net(x), f"{d}/torch_net_out.pt")
    torch.save({k: v * 2 for k, v in net.state_dict().items()}, f"{d}/torch_net_doubled.pt")

    # An Adam after one step on loss = net(x).pow(2).sum(), its state_dict and the net's, then
    # the net after a second step, for mg::load(optimizer) of PyTorch's own file.
    net2 = Net()
    opt = torch.optim.Adam(net2.parameters(), lr=0.02)
    for step in range(2):
        opt.zero_grad()
        net2(x).pow(2).sum().backward()
        opt.step()
        if step == 0:
            torch.save(opt.state_dict(), f"{d}/torch_adam.pt")
            torch.save(net2.state_dict(), f"{d}/torch_adam_net.pt")
    torch.save(net2.state_dict(), f"{d}/torch_adam_net_after.pt")

    torch.save(torch.arange(12, dtype=torch.float64).reshape(3, 4)[:, 1], f"{d}/py_tensor.pt")
    torch.save([torch.tensor([1, 2]), torch.tensor([[True], [False]])], f"{d}/py_list.pt")
    torch.save({"w": torch.ones(2), "step": 10, "nested": {7: torch.zeros(1)}}, f"{d}/py_dict.pt")
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1])
