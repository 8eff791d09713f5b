#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets: tests/fuzz/corpus/fuzz_ops and corpus/fuzz_files.

    python3 tests/fuzz/gen_corpus.py          # rewrites both directories

fuzz_ops seeds are small programs in fuzz_ops.cpp's byte format: one per op family (with valid
arguments, so that the fuzzer starts from code paths that get past the checks) plus a few classic
shapes (attention, a loss on class indices, batched matmul). fuzz_files seeds are valid and broken
.npy files, safetensors files, a module checkpoint of nn::Linear(3, 2), an optimizer checkpoint,
and torch.save-format (.pt) files: their pickles are written opcode by opcode as torch.save writes
them (protocol 2), in a zip of stored entries. Needs only the standard library.
"""
import json
import os
import shutil
import struct
import sys
import zipfile
import io

HERE = os.path.dirname(os.path.abspath(__file__))
F32, F64, I64, BOOL = 0, 1, 2, 3


# ---------------------------------------------------------------- fuzz_ops programs


def tensor_spec(shape, dtype=F32, fill=2, seed=1, view=0, a=0, b=0, requires_grad=True):
    """Bytes of one input for make_input(): rank, sizes, dtype, fill, seed, view, a, b, flag."""
    return bytes([len(shape), *shape, dtype, fill, seed, view, a, b, 1 if requires_grad else 0])


def program(inputs, ops, finish=(0,)):
    """header (inputs, op count), the inputs, the ops (opcode, operand a, operand b, args...)."""
    assert 1 <= len(inputs) <= 4 and len(ops) <= 16
    out = bytes([(len(ops) * 4 + len(inputs) - 1) & 0xFF])
    for spec in inputs:
        out += spec
    for op in ops:
        out += bytes(op)
    return out + bytes(finish)


def ops_seeds():
    seeds = {}
    x23 = tensor_spec([2, 3])
    y23t = tensor_spec([2, 3], F64, view=1, a=0, b=1)  # transposed view, float64
    z3 = tensor_spec([3], fill=0, seed=5, view=2, a=1)  # expanded view
    i2 = tensor_spec([2], I64, fill=0, seed=3, requires_grad=False)
    m33 = tensor_spec([3, 3], fill=2, seed=9, view=3, a=0, b=4)  # narrowed view
    # Args after (opcode, a, b): dims are (byte % 13) - 6, so 6 is dim 0, 7 dim 1, 5 dim -1;
    # sizes are (byte % 8) - 1, so 3 is size 2; flags are the low bit.
    families = {
        "add": [0, 0, 1], "sub": [1, 0, 2], "mul": [2, 0, 1], "div": [3, 1, 0],
        "maximum": [4, 0, 1], "minimum": [5, 0, 2], "pow": [6, 0, 1], "mix": [7, 0, 1],
        "compare": [8, 0, 1, 2], "scalar": [9, 0, 0, 3, 4, 2], "inplace": [10, 2, 1, 0],
        "neg": [11, 0, 0], "exp": [12, 0, 0], "log": [13, 0, 0], "sqrt": [14, 0, 0],
        "rsqrt": [15, 1, 0], "abs": [16, 0, 0], "sign": [17, 0, 0], "tanh": [18, 0, 0],
        "sigmoid": [19, 0, 0], "relu": [20, 0, 0], "erf": [21, 0, 0], "gelu": [22, 0, 0, 1],
        "not": [23, 3, 0, 1], "clamp": [24, 0, 0, 1, 2, 1, 4], "pow_scalar": [25, 0, 0, 3, 4],
        "scalar_pow": [26, 0, 0, 3, 3], "convert": [27, 0, 0, 2, 1], "sum": [28, 0, 0, 1, 7, 1],
        "mean": [29, 0, 0, 1, 5, 0], "amax": [30, 0, 0, 1, 6, 1], "amin": [31, 0, 0, 0, 0],
        "var": [32, 0, 0, 1, 7, 1, 0, 1], "logsumexp": [33, 0, 0, 1, 5, 0],
        "norm": [34, 0, 0, 4, 1, 7, 0], "max": [35, 0, 0, 1], "max_dim": [36, 0, 0, 7, 1, 1],
        "argmax": [37, 0, 0, 1, 7, 0, 1], "matmul": [38, 0, 4, 0], "mm": [39, 0, 4, 1],
        "softmax": [40, 0, 0, 5], "log_softmax": [41, 0, 0, 6], "reshape": [42, 0, 0, 2, 2, 1],
        "view": [43, 0, 0, 0], "permute": [44, 0, 0, 1, 1], "transpose": [45, 0, 0, 6, 7],
        "expand": [46, 2, 0, 1, 1, 1, 3, 0], "squeeze": [47, 0, 0, 2, 6],
        "narrow": [48, 0, 0, 7, 8, 3], "select": [49, 0, 0, 6, 8], "flatten": [50, 0, 0, 6, 5],
        "cat": [51, 0, 0, 2, 0, 1, 0, 6], "stack": [52, 0, 0, 2, 0, 0, 0, 7],
        "split": [53, 0, 0, 7, 0, 3], "index_select": [54, 0, 3, 6, 1],
        "gather": [55, 0, 0, 7, 0, 2, 2, 3, 0, 1], "scatter_add": [56, 0, 0, 6, 2, 2, 3, 0, 1, 0],
        "index_add": [57, 0, 0, 6, 1, 2, 0, 1, 2],
        "where": [58, 0, 1, 2, 0], "masked_fill": [59, 0, 2, 1], "tril": [60, 4, 0, 1, 8],
        "make_index": [61, 0, 0, 2, 2, 3, 0, 5], "new_input": [62, 0, 0, 3, 2, 2, 2, 1, 2, 7, 1],
        "creation": [63, 0, 0, 2, 3, 4, 1, 0], "arange": [64, 0, 0, 0, 6, 1, 0, 1],
        "randint": [65, 0, 0, 7, 12, 1, 1, 1, 3, 3, 1], "item": [66, 0, 0, 0],
        "data_ptr": [67, 0, 0, 1], "print": [68, 0, 0], "allclose": [69, 0, 1, 0, 1, 1],
        "fill": [70, 0, 0, 1, 1, 1], "requires_grad": [71, 0, 0, 0], "hook": [72, 0, 0, 1],
        "no_grad": [73, 0, 1], "backward_mid": [74, 0, 0, 1], "linear": [75, 0, 4, 0],
        "mse_loss": [76, 0, 1, 0], "sdpa": [77, 0, 0, 0, 0, 1, 0], "cross_entropy":
        [78, 0, 0, 1, 0, 2, 0, 1, 0, 1], "nll_loss": [79, 0, 0, 1, 0, 2, 1, 0, 1, 0],
        "kl_div": [80, 0, 1, 0, 1], "bce_logits": [81, 0, 1, 0, 0, 0],
        "embedding": [82, 0, 0, 0, 2, 2, 3, 0, 1], "layer_norm": [83, 0, 0, 1, 0, 0, 0, 1],
        "dropout": [84, 0, 0, 1, 1], "functional": [85, 0, 0, 1, 5],
        "mha": [86, 0, 0, 3, 3, 1, 1, 1, 0, 0, 1, 0, 1], "grad_of_grad": [87, 0, 0, 0],
        "views_of_views": [88, 0, 0, 6, 1],
    }
    for name, op in families.items():
        seeds["op_" + name] = program([x23, y23t, z3, m33], [op, [28, 4, 0, 0, 0]], finish=(0,))
    seeds["attention"] = program(
        [tensor_spec([2, 4, 3], seed=2), tensor_spec([2, 5, 3], seed=3, view=1, a=1, b=1),
         tensor_spec([2, 5, 2], F32, seed=4)],
        [[77, 0, 1, 1, 0, 1, 0], [28, 3, 0, 0, 0]], finish=(3, 1))
    seeds["cross_entropy_indices"] = program(
        [tensor_spec([4, 5], seed=7), i2], [[78, 0, 0, 1, 1, 1, 1, 0, 0, 1], [28, 2, 0, 0]],
        finish=(1,))
    seeds["bmm_transposed"] = program(
        [tensor_spec([2, 3, 4], seed=2, view=1, a=1, b=2), tensor_spec([2, 4, 2], F32, seed=3)],
        [[39, 0, 1, 2]], finish=(2, 1, 1, 3, 1))
    seeds["softmax_backward_gradient"] = program(
        [tensor_spec([3, 4], F64, fill=1, seed=11)], [[40, 0, 0, 5]], finish=(2, 1, 1, 4, 0))
    seeds["chain"] = program(
        [x23, y23t], [[0, 0, 1], [12, 2, 0], [18, 3, 0], [2, 4, 0], [28, 5, 0, 1, 6, 0]],
        finish=(5, 1, 1))
    seeds["int_bool_mix"] = program(
        [tensor_spec([2, 2], I64, fill=0), tensor_spec([2], BOOL, fill=0, view=2, a=0)],
        [[0, 0, 1], [8, 0, 1, 4], [23, 2, 0, 0], [58, 3, 0, 1, 0]], finish=(0,))
    seeds["empty_and_scalar"] = program(
        [tensor_spec([0, 3]), tensor_spec([]), tensor_spec([3, 0], F64)],
        [[0, 0, 1], [28, 3, 0, 0], [38, 0, 2, 0], [40, 2, 0, 5]], finish=(0,))
    return seeds


# ---------------------------------------------------------------- fuzz_files files

NPY_DESCR = {"f4": ("<f4", "f"), "f8": ("<f8", "d"), "i8": ("<i8", "q"), "b1": ("|b1", "?")}


def npy(kind, shape, values, fortran=False, version=1, header=None):
    descr, fmt = NPY_DESCR[kind]
    shape_text = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    text = header or ("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }"
                      % (descr, "True" if fortran else "False", shape_text))
    len_size = 2 if version == 1 else 4
    total = 6 + 2 + len_size + len(text) + 1
    text = text + " " * ((64 - total % 64) % 64) + "\n"
    head = b"\x93NUMPY" + bytes([version, 0])
    head += struct.pack("<H" if version == 1 else "<I", len(text)) + text.encode("latin1")
    return head + struct.pack("<%d%s" % (len(values), fmt), *values)


def safetensors(tensors, metadata=None, raw_header=None):
    """tensors: list of (name, dtype, shape, bytes)."""
    header, data, offset = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, blob in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        data += blob
        offset += len(blob)
    text = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":"))
    text = text.encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


# torch.save's format: a zip of stored entries m/data.pkl, m/data/<key>, m/version.

def pk_str(text):
    raw = text.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def pk_int(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if -2**31 <= v < 2**31:
        return b"J" + struct.pack("<i", v)
    return b"\x8a\x08" + struct.pack("<q", v)


PK_ORDERED_DICT = b"ccollections\nOrderedDict\n)R"


def pk_tuple(values):
    return b"(" + b"".join(pk_int(v) for v in values) + b"t"


def pk_tensor(storage, key, numel, offset, size, stride, parameter=False):
    """_rebuild_tensor_v2(('storage', torch.<storage>, key, 'cpu', numel), offset, size, ...)."""
    out = (b"ctorch._utils\n_rebuild_tensor_v2\n((" + pk_str("storage") + b"ctorch\n" +
           storage.encode() + b"\n" + pk_str(key) + pk_str("cpu") + pk_int(numel) + b"tQ" +
           pk_int(offset) + pk_tuple(size) + pk_tuple(stride) + b"\x89" + PK_ORDERED_DICT + b"tR")
    if parameter:
        out = b"ctorch._utils\n_rebuild_parameter\n(" + out + b"\x88" + PK_ORDERED_DICT + b"tR"
    return out


def pk_state_dict(entries):
    """entries: (name, pickled tensor) pairs."""
    body = b"".join(pk_str(name) + t for name, t in entries)
    return b"\x80\x02" + PK_ORDERED_DICT + b"(" + body + b"u."


def pt(pickle, records):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("m/data.pkl", pickle)
        for key, data in records.items():
            z.writestr(f"m/data/{key}", data)
        z.writestr("m/version", "3\n")
    return buf.getvalue()


def torch_seeds(w, b):
    s = {}
    s["pt_linear.pt"] = pt(pk_state_dict(
        [("weight", pk_tensor("FloatStorage", "0", 6, 0, [2, 3], [3, 1])),
         ("bias", pk_tensor("FloatStorage", "1", 2, 0, [2], [1]))]), {"0": w, "1": b})
    # One storage shared by both (offset 6 for the bias), a transposed view, every dtype, a
    # Parameter.
    s["pt_shared_views.pt"] = pt(pk_state_dict(
        [("weight", pk_tensor("FloatStorage", "0", 8, 0, [2, 3], [3, 1])),
         ("bias", pk_tensor("FloatStorage", "0", 8, 6, [2], [1])),
         ("t", pk_tensor("FloatStorage", "0", 8, 0, [3, 2], [1, 3], parameter=True)),
         ("d", pk_tensor("DoubleStorage", "1", 2, 0, [2], [1])),
         ("i", pk_tensor("LongStorage", "2", 1, 0, [], [])),
         ("m", pk_tensor("BoolStorage", "3", 2, 0, [2], [1]))]),
        {"0": w + b, "1": struct.pack("<2d", 1.5, -2), "2": struct.pack("<q", 7),
         "3": b"\x01\x00"})
    groups = (b"]}(" + pk_str("lr") + b"G" + struct.pack(">d", 0.001) + pk_str("betas") + b"G" +
              struct.pack(">d", 0.9) + b"G" + struct.pack(">d", 0.999) + b"\x86" +
              pk_str("foreach") + b"N" + pk_str("amsgrad") + b"\x89" + pk_str("params") +
              b"](" + pk_int(0) + pk_int(1) + b"eua")
    state = (b"}(" + pk_int(0) + b"}(" + pk_str("step") +
             pk_tensor("FloatStorage", "0", 1, 0, [], []) + pk_str("exp_avg") +
             pk_tensor("FloatStorage", "1", 6, 0, [2, 3], [3, 1]) + b"uu")
    s["pt_optim_adam.pt"] = pt(b"\x80\x02}(" + pk_str("state") + state + pk_str("param_groups") +
                               groups + b"u.", {"0": struct.pack("<f", 3), "1": w})
    s["pt_os_system.pt"] = pt(b"\x80\x02cos\nsystem\n" + pk_str("ls") + b"\x85R.", {})
    s["pt_truncated.pt"] = s["pt_linear.pt"][:-30]
    return s


def files_seeds():
    s = {}
    s["npy_f4_2x3.npy"] = npy("f4", [2, 3], [1, 2, 3, 4, 5, 6])
    s["npy_f8_vec.npy"] = npy("f8", [4], [0.5, -1.0, float("inf"), float("nan")])
    s["npy_i8_scalar.npy"] = npy("i8", [], [42])
    s["npy_b1_2x2.npy"] = npy("b1", [2, 2], [True, False, False, True])
    s["npy_f4_empty.npy"] = npy("f4", [0, 3], [])
    s["npy_f8_fortran.npy"] = npy("f8", [2, 3], [1, 2, 3, 4, 5, 6], fortran=True)
    s["npy_v2.npy"] = npy("f4", [3], [1, 2, 3], version=2)
    s["npy_v3.npy"] = npy("i8", [2], [1, 2], version=3)
    s["npy_truncated.npy"] = npy("f8", [2, 3], [1, 2, 3, 4, 5, 6])[:-5]
    s["npy_huge_shape.npy"] = npy("f4", [1 << 40, 1 << 30], [])
    s["npy_bad_descr.npy"] = npy("f4", [2], [1, 2], header="{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }")
    s["npy_bad_header_len.npy"] = b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'"
    s["npy_negative_shape.npy"] = npy("f4", [2], [1, 2], header="{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }")
    w = f32(0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
    b = f32(1.0, -1.0)
    s["st_linear.safetensors"] = safetensors(
        [("weight", "F32", [2, 3], w), ("bias", "F32", [2], b)], {"format": "pt"})
    s["st_linear_wrong_shape.safetensors"] = safetensors(
        [("weight", "F32", [3, 2], w), ("bias", "F32", [2], b)])
    s["st_linear_f64.safetensors"] = safetensors(
        [("weight", "F64", [2, 3], struct.pack("<6d", *range(6))),
         ("bias", "F64", [2], struct.pack("<2d", 1, 2))])
    s["st_mixed.safetensors"] = safetensors(
        [("a", "I64", [3], struct.pack("<3q", 1, -2, 3)), ("b", "BOOL", [2, 1], b"\x01\x00"),
         ("c", "F64", [], struct.pack("<d", 2.5)), ("d", "F32", [0, 4], b"")], {"k": "v"})
    s["st_f16.safetensors"] = safetensors([("h", "F16", [2], b"\x00\x3c\x00\x3c")])
    s["st_overlap.safetensors"] = safetensors(
        [], raw_header='{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                       '"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}') + w
    s["st_huge_header.safetensors"] = struct.pack("<Q", 1 << 40) + b"{}"
    s["st_truncated.safetensors"] = s["st_linear.safetensors"][:-3]
    s["st_empty.safetensors"] = safetensors([])
    s["st_bad_json.safetensors"] = safetensors([], raw_header='{"a":{"dtype":"F32",')
    s["st_shape_overflow.safetensors"] = safetensors(
        [], raw_header='{"a":{"dtype":"F32","shape":[4294967296,4294967296],'
                       '"data_offsets":[0,0]}}')
    groups = json.dumps([{"lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0,
                          "amsgrad": False, "params": [0, 1]}])
    s["optim_adam.safetensors"] = safetensors(
        [("state.0.step", "F32", [], f32(3.0)), ("state.0.exp_avg", "F32", [2, 3], w),
         ("state.0.exp_avg_sq", "F32", [2, 3], w), ("state.1.step", "F32", [], f32(3.0)),
         ("state.1.exp_avg", "F32", [2], b), ("state.1.exp_avg_sq", "F32", [2], b)],
        {"format": "minigrad.optimizer", "optimizer": "Adam", "param_groups": groups})
    s["optim_sgd_bad_groups.safetensors"] = safetensors(
        [("state.0.momentum_buffer", "F32", [2], b)],
        {"format": "minigrad.optimizer", "optimizer": "SGD", "param_groups": '[{"lr": "x"}'})
    # Hostile headers (issue 18): nesting just over the 64-level limit, a number that overflows a
    # double, many tensors (zero-size, so the file stays small), a shape over 64 dims.
    s["st_deep_nesting.safetensors"] = safetensors(
        [], raw_header='{"a":' + "[" * 70 + "]" * 70 + "}")
    s["st_deep_metadata.safetensors"] = safetensors(
        [], raw_header='{"__metadata__":{"k":' + '{"k":' * 40 + '"v"' + "}" * 40 + "}}")
    s["st_number_1e400.safetensors"] = safetensors(
        [], raw_header='{"a":{"dtype":"F32","shape":[1e400],"data_offsets":[0,0]}}')
    s["st_number_huge_offsets.safetensors"] = safetensors(
        [], raw_header='{"a":{"dtype":"F32","shape":[1],'
                       '"data_offsets":[18446744073709551615,3]}}')
    s["st_many_tensors.safetensors"] = safetensors(
        [(f"t{i}", "F32", [0], b"") for i in range(2000)])
    s["npy_65_dims.npy"] = npy("f4", [1] * 65, [1.0])
    s["empty_file"] = b""
    s.update(torch_seeds(w, b))
    return s


def write(directory, files):
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.makedirs(directory)
    for name, data in sorted(files.items()):
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    print(f"{directory}: {len(files)} files")


def main():
    write(os.path.join(HERE, "corpus", "fuzz_ops"), ops_seeds())
    write(os.path.join(HERE, "corpus", "fuzz_files"), files_seeds())
    return 0


if __name__ == "__main__":
    sys.exit(main())
