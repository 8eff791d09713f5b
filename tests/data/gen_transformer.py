# Generates tests/data/transformer_<case>.safetensors for tests/nn/test_transformer.cpp: PyTorch
# 1.13's Transformer modules (float64, tiny d_model), each built after torch.manual_seed(SEED),
# with their inputs, masks, the output in eval mode, and the gradients of
# loss = (output * w).sum() with respect to every parameter. Keys:
#   param.<name>   the state_dict (load it into the minigrad module)
#   in.<name>      src / tgt / memory / masks / w
#   out            the module's output
#   grad.<name>    d loss / d parameter
# and the metadata holds the module's configuration. Run with /usr/bin/python3 from the repo root:
#   /usr/bin/python3 tests/data/gen_transformer.py
# (Debian has no safetensors package: the format is written with json and struct, as
# tests/io/torch_interop.py does.)
import json
import os
import struct

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = {np.dtype(np.float64): "F64", np.dtype(np.bool_): "BOOL", np.dtype(np.int64): "I64"}


def write_safetensors(path, tensors, metadata):
    # Unlike tests/io/torch_interop.py's writer (the reference writer's order), this keeps the
    # insertion order: the test checks the state_dict's keys in PyTorch's order.
    header, chunks, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        arr = t.detach().contiguous().numpy()
        raw = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": NAMES[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def causal_bool(n):
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)


def case(name, seed, make_module, inputs, call, config):
    """inputs: a function returning {name: tensor} drawn after the module (same seed)."""
    torch.manual_seed(seed)
    m = make_module().double()
    m.eval()  # dropout off
    ins = inputs()
    out = call(m, ins)
    w = torch.randn(out.shape, dtype=torch.float64)
    (out * w).sum().backward()
    tensors = {f"param.{k}": v for k, v in m.state_dict().items()}
    tensors.update({f"in.{k}": v for k, v in ins.items()})
    tensors["in.w"] = w
    tensors["out"] = out
    tensors.update({f"grad.{k}": p.grad for k, p in m.named_parameters()})
    write_safetensors(os.path.join(HERE, f"transformer_{name}.safetensors"), tensors,
                      {k: str(v) for k, v in config.items()})


def rnd(*shape):
    return torch.randn(*shape, dtype=torch.float64)


E, H, FF = 4, 2, 6

# 1. Encoder layer, post-norm, sequence-first, relu; bool causal mask and bool padding mask.
case("encoder_layer", 1,
     lambda: nn.TransformerEncoderLayer(E, H, FF, dropout=0.1),
     lambda: {"src": rnd(3, 2, E), "src_mask": causal_bool(3),
              "src_key_padding_mask": torch.tensor([[False, False, True], [False, False, False]])},
     lambda m, x: m(x["src"], x["src_mask"], x["src_key_padding_mask"]),
     {"d_model": E, "nhead": H, "dim_feedforward": FF, "activation": "relu",
      "layer_norm_eps": 1e-5, "batch_first": 0, "norm_first": 0})

# 2. Encoder layer, pre-norm, batch-first, gelu, eps 1e-3; float mask and bool padding mask.
case("encoder_layer_norm_first", 2,
     lambda: nn.TransformerEncoderLayer(E, H, FF, dropout=0.2, activation="gelu",
                                        layer_norm_eps=1e-3, batch_first=True, norm_first=True),
     lambda: {"src": rnd(2, 3, E), "src_mask": rnd(3, 3),
              "src_key_padding_mask": torch.tensor([[False, True, False], [False, False, False]])},
     lambda m, x: m(x["src"], x["src_mask"], x["src_key_padding_mask"]),
     {"d_model": E, "nhead": H, "dim_feedforward": FF, "activation": "gelu",
      "layer_norm_eps": 1e-3, "batch_first": 1, "norm_first": 1})

# 3. Encoder layer, unbatched input [S, E], no masks.
case("encoder_layer_unbatched", 3,
     lambda: nn.TransformerEncoderLayer(E, H, FF),
     lambda: {"src": rnd(3, E)},
     lambda m, x: m(x["src"]),
     {"d_model": E, "nhead": H, "dim_feedforward": FF, "activation": "relu",
      "layer_norm_eps": 1e-5, "batch_first": 0, "norm_first": 0})

# 4. Decoder layer, post-norm, sequence-first; the float causal mask of
#    Transformer.generate_square_subsequent_mask and a bool memory padding mask.
case("decoder_layer", 4,
     lambda: nn.TransformerDecoderLayer(E, H, FF),
     lambda: {"tgt": rnd(2, 2, E), "memory": rnd(3, 2, E),
              "tgt_mask": nn.Transformer.generate_square_subsequent_mask(2).double(),
              "memory_key_padding_mask": torch.tensor([[False, False, True], [True, False, False]])},
     lambda m, x: m(x["tgt"], x["memory"], tgt_mask=x["tgt_mask"],
                    memory_key_padding_mask=x["memory_key_padding_mask"]),
     {"d_model": E, "nhead": H, "dim_feedforward": FF, "activation": "relu",
      "layer_norm_eps": 1e-5, "batch_first": 0, "norm_first": 0})

# 5. Decoder layer, pre-norm, batch-first, a function as activation (tanh); bool memory mask,
#    bool tgt padding mask.
case("decoder_layer_norm_first", 5,
     lambda: nn.TransformerDecoderLayer(E, H, FF, activation=torch.tanh, batch_first=True,
                                        norm_first=True),
     lambda: {"tgt": rnd(2, 2, E), "memory": rnd(2, 3, E),
              "memory_mask": torch.tensor([[False, True, False], [False, False, True]]),
              "tgt_key_padding_mask": torch.tensor([[False, False], [False, True]])},
     lambda m, x: m(x["tgt"], x["memory"], memory_mask=x["memory_mask"],
                    tgt_key_padding_mask=x["tgt_key_padding_mask"]),
     {"d_model": E, "nhead": H, "dim_feedforward": FF, "activation": "tanh",
      "layer_norm_eps": 1e-5, "batch_first": 1, "norm_first": 1})

# 6. TransformerEncoder of 2 layers with a final LayerNorm, padding mask.
case("encoder", 6,
     lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, FF), 2, nn.LayerNorm(E)),
     lambda: {"src": rnd(3, 2, E),
              "src_key_padding_mask": torch.tensor([[False, False, True], [False, False, False]])},
     lambda m, x: m(x["src"], src_key_padding_mask=x["src_key_padding_mask"]),
     {"d_model": E, "nhead": H, "dim_feedforward": FF, "num_layers": 2})

# 7. TransformerDecoder of 2 layers with a final LayerNorm, causal bool tgt mask.
case("decoder", 7,
     lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, FF), 2, nn.LayerNorm(E)),
     lambda: {"tgt": rnd(3, 2, E), "memory": rnd(4, 2, E), "tgt_mask": causal_bool(3)},
     lambda m, x: m(x["tgt"], x["memory"], tgt_mask=x["tgt_mask"]),
     {"d_model": E, "nhead": H, "dim_feedforward": FF, "num_layers": 2})

# 8. Transformer, 2 encoder and 1 decoder layers, batch-first; every kind of mask.
case("transformer", 8,
     lambda: nn.Transformer(E, H, 2, 1, FF, batch_first=True),
     lambda: {"src": rnd(2, 3, E), "tgt": rnd(2, 2, E), "src_mask": causal_bool(3),
              "tgt_mask": nn.Transformer.generate_square_subsequent_mask(2).double(),
              "memory_mask": rnd(2, 3),
              "src_key_padding_mask": torch.tensor([[False, True, False], [False, False, False]]),
              "tgt_key_padding_mask": torch.tensor([[False, False], [False, True]]),
              "memory_key_padding_mask": torch.tensor([[False, False, True], [False, False, False]])},
     lambda m, x: m(x["src"], x["tgt"], x["src_mask"], x["tgt_mask"], x["memory_mask"],
                    x["src_key_padding_mask"], x["tgt_key_padding_mask"],
                    x["memory_key_padding_mask"]),
     {"d_model": E, "nhead": H, "num_encoder_layers": 2, "num_decoder_layers": 1,
      "dim_feedforward": FF, "batch_first": 1, "norm_first": 0})

# 9. Transformer, pre-norm, sequence-first, gelu, no masks.
case("transformer_norm_first", 9,
     lambda: nn.Transformer(E, H, 1, 2, FF, activation="gelu", norm_first=True),
     lambda: {"src": rnd(3, 2, E), "tgt": rnd(2, 2, E)},
     lambda m, x: m(x["src"], x["tgt"]),
     {"d_model": E, "nhead": H, "num_encoder_layers": 1, "num_decoder_layers": 2,
      "dim_feedforward": FF, "batch_first": 0, "norm_first": 1})

# 10. Initial values: nn.Transformer(8, 2, 1, 1, 16) after manual_seed(0), in float32.
torch.manual_seed(0)
init = nn.Transformer(8, 2, 1, 1, 16)
write_safetensors(os.path.join(HERE, "transformer_init.safetensors"),
                  {k: v.double() for k, v in init.state_dict().items()}, {"seed": "0"})
