# Generates tests/data/torch_generator_states.txt: PyTorch 1.13's CPU generator state bytes
# (torch.get_rng_state / Generator.get_state, 5056 bytes) in several situations, and the draws
# that follow. Run with /usr/bin/python3.
import torch
def hexs(t): return t.numpy().tobytes().hex()
lines = []
torch.manual_seed(5); lines.append(("seed5", hexs(torch.get_rng_state())))
torch.manual_seed(5); torch.rand(1); lines.append(("seed5_rand1", hexs(torch.get_rng_state())))
torch.manual_seed(5); torch.randn(1); lines.append(("seed5_randn1", hexs(torch.get_rng_state())))
torch.manual_seed(5); torch.randn(20, dtype=torch.float64); lines.append(("seed5_randn20_f64", hexs(torch.get_rng_state())))
g = torch.Generator(); lines.append(("new_generator", hexs(g.get_state())))
# After loading seed5_randn1 (a cached normal is pending): the next draws.
torch.manual_seed(5); torch.randn(1); after = torch.randn(3, dtype=torch.float64).tolist() + torch.rand(2, dtype=torch.float64).tolist()
with open("torch_generator_states.txt", "w") as f:
    f.write("# PyTorch 1.13 CPU generator states (hex of get_rng_state()), from tests/data/gen_generator_states.py\n")
    for name, h in lines: f.write(f"{name} {h}\n")
    f.write("after_seed5_randn1 " + " ".join(repr(x) for x in after) + "\n")
