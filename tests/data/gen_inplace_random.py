# Generates tests/data/torch_inplace_random.txt: the results of PyTorch 1.13's in-place random
# fills (Tensor.uniform_, normal_, random_) on contiguous tensors and on views, as the hex of the
# tensor's bytes in row-major order. Each case starts from torch.manual_seed(SEED) and its ops
# share the generator. tests/core/test_generator.cpp runs the same ops. Run with /usr/bin/python3.
import torch

def hexs(t):
    return t.contiguous().numpy().tobytes().hex() if t.dtype != torch.bool else \
        t.to(torch.uint8).contiguous().numpy().tobytes().hex()

f32, f64, i64 = torch.float32, torch.float64, torch.int64
cases = []

def case(name, seed, fn):
    torch.manual_seed(seed)
    for i, t in enumerate(fn()):
        cases.append((f"{name}.{i}", hexs(t)))

case("uniform_contiguous", 0, lambda: [torch.empty(3, 7).uniform_(-0.37, 0.41),
                                       torch.empty(5, dtype=f64).uniform_(-0.37, 0.41)])
# A transposed view is filled in memory order, so the view's row-major values are a permutation.
case("uniform_transposed", 1, lambda: [torch.empty(5, 4).t().uniform_(-1, 2)])
case("uniform_permuted_f64", 2, lambda: [torch.empty(2, 3, 4, dtype=f64).permute(2, 0, 1).uniform_(0.5, 3)])
case("uniform_narrow_f64", 11, lambda: [torch.empty(4, 5, dtype=f64).narrow(1, 1, 2).uniform_(0.5, 3)])
case("uniform_default", 3, lambda: [torch.empty(6).uniform_()])
# normal_: >= 16 contiguous elements take the fill path (float32: vectorised Cephes math) ...
case("normal_fill", 4, lambda: [torch.empty(40).normal_(0.3, 1.7),
                                torch.empty(17, dtype=f64).normal_(-1, 0.5)])
# ... fewer than 16, or any non-contiguous tensor, the per-element path with its cached spare.
case("normal_small_then_strided", 5, lambda: [torch.empty(5).normal_(0.3, 1.7),
                                              torch.empty(8, 6).t().normal_(),
                                              torch.empty(6, 8, dtype=f64).t().normal_(2, 3),
                                              torch.empty(6, 8, dtype=f64).narrow(1, 2, 5).normal_(),
                                              torch.empty(3).normal_()])
case("random_full_range", 6, lambda: [torch.empty(6).random_(),
                                      torch.empty(4, dtype=f64).random_(),
                                      torch.empty(4, dtype=i64).random_(),
                                      torch.empty(9, dtype=torch.bool).random_()])
case("random_to", 7, lambda: [torch.empty(10, dtype=i64).random_(10),
                              torch.empty(3, 4).random_(100),
                              torch.empty(2, 3, dtype=i64).t().random_(1000)])
case("random_from_to", 8, lambda: [torch.empty(7).random_(-5, 7),
                                   torch.empty(5, dtype=i64).random_(-3, 2**40),
                                   torch.empty(5, dtype=f64).random_(-3, 2**40),
                                   torch.empty(4, dtype=torch.bool).random_(0, 2)])

def with_generator():
    g = torch.Generator().manual_seed(9)
    return [torch.empty(20).normal_(generator=g), torch.empty(3).uniform_(1, 2, generator=g),
            torch.empty(4, dtype=i64).random_(0, 50, generator=g),
            torch.empty(4).uniform_()]  # the default generator, untouched by g's draws
case("generator", 10, with_generator)

with open("torch_inplace_random.txt", "w") as f:
    f.write("# PyTorch 1.13 in-place random fills (hex of row-major bytes), from "
            "tests/data/gen_inplace_random.py\n")
    for name, h in cases:
        f.write(f"{name} {h}\n")
