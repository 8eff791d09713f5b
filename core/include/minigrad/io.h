#pragma once
// Checkpoint files: safetensors (named tensors, what state_dict() saves) and .npy (one tensor).
//
//   mg::save_safetensors("model.safetensors", {{"W_q.weight", w}}, {{"epoch", "3"}});
//   mg::SafetensorsFile f = mg::load_safetensors("model.safetensors");
//   mg::Tensor w2 = f.at("W_q.weight");
//
// Writing is atomic: the file is written to a new, uniquely named `path.tmp.<pid>.<random>`,
// flushed with fsync and renamed over `path`, so a crash, or another thread or process saving to
// the same path, leaves either the old file or a new one, never half of one. Reading checks
// every length, offset, shape and dtype of the header against the file's size before allocating
// anything; a bad file throws minigrad::Error naming the reader, the file and the problem:
// "[load_safetensors] model.safetensors: header length 4294967296 exceeds file size 100".
// Module and optimizer checkpoints are in nn/module.h (nn::save, nn::load) and
// optim/optimizer.h (optim::save, optim::load); docs/api.md describes the layouts. Archives
// (libtorch's serialize::OutputArchive / InputArchive, mg::save / mg::load) are in
// minigrad/serialize.h.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "minigrad/serialize.h"
#include "minigrad/tensor.h"

namespace minigrad {

/// Named tensors in order, as a state_dict(): {{"W_q.weight", w}, {"W_q.bias", b}}.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
/// A safetensors file's "__metadata__": string keys, string values.
using Metadata = std::map<std::string, std::string>;

/// What load_safetensors returns: the tensors in the order the file's header lists them, and the
/// metadata.
struct SafetensorsFile {
  NamedTensors tensors;
  Metadata metadata;

  /// The tensor called name; throws "[SafetensorsFile.at] no tensor named ..." if there is none.
  const Tensor& at(const std::string& name) const;
  /// Whether a tensor called name is in the file.
  bool contains(const std::string& name) const;
};

/// Writes tensors (float32 "F32", float64 "F64", int64 "I64", bool "BOOL"; any strides, 0-dim and
/// empty ones included) and metadata to path in the safetensors format, atomically. Throws for an
/// undefined tensor, an empty or repeated name, the name "__metadata__", text that is not UTF-8,
/// or a file that cannot be written.
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const Metadata& metadata = {});
/// Reads a safetensors file written by minigrad, PyTorch's safetensors or any other writer. Each
/// tensor gets its own contiguous storage. Throws for a missing, truncated or corrupt file, an
/// unsupported dtype (F16, BF16, ...) or inconsistent offsets, before allocating any tensor.
SafetensorsFile load_safetensors(const std::string& path);

/// Writes one tensor as a NumPy .npy file (format 1.0, or 2.0 for a header over 64 KiB; C order;
/// '<f4', '<f8', '<i8' or '|b1'), atomically.
void save_npy(const std::string& path, const Tensor& tensor);
/// Reads a .npy file (format 1.0, 2.0 or 3.0) of dtype '<f4', '<f8', '<i8' or '|b1'; a Fortran-
/// order array is returned in C order with the same shape and values. Throws for a truncated or
/// corrupt file or another dtype, before allocating.
Tensor load_npy(const std::string& path);

// ---- PyTorch's torch.save format (.pt, .pth) ----

/// Whether path ends in ".pt" or ".pth" (any case): nn::save, nn::load, optim::save and
/// optim::load write and read such a path in PyTorch's torch.save format, any other path as
/// safetensors.
bool is_torch_path(const std::string& path);
/// Writes tensors as torch.save(state_dict) does (a zip archive: a protocol 2 pickle of an
/// OrderedDict of tensors, one stored record per tensor, 64-byte aligned), atomically, so that
/// torch.load(path) returns the state_dict in PyTorch 1.13 and later. Each tensor is written in
/// C order with its own storage.
void save_torch(const std::string& path, const NamedTensors& tensors);
/// Reads what torch.save(model.state_dict(), path) writes (float32, float64, int64 and bool
/// tensors; views with offsets and strides, storages shared between tensors, saved on any
/// device), each tensor into its own contiguous storage. The file is never executed: only the
/// pickle opcodes and globals a state_dict needs are accepted (Note [Reading torch.save files]),
/// every size is bounded and checked, every record's CRC-32 verified; anything else throws
/// minigrad::Error naming the file and the offending value, before any tensor is returned.
NamedTensors load_torch(const std::string& path);

// ---- optimizer checkpoints (the file format side of optim::Optimizer::state_dict()) ----

/// A parameter group's option in an optimizer checkpoint: a number (lr), a flag (nesterov) or a
/// list of numbers (betas).
using OptionValue = std::variant<bool, double, std::vector<double>>;

/// One entry of PyTorch's `optimizer.state_dict()["param_groups"]`: the options by PyTorch's names
/// and the positions of the group's parameters.
struct ParamGroupState {
  std::vector<std::pair<std::string, OptionValue>> options;
  std::vector<std::int64_t> params;
};

/// An optimizer's state_dict(), laid out as PyTorch's: per-parameter state ("step", "exp_avg",
/// "momentum_buffer", ...) keyed by the parameter's position, counted through the groups in order,
/// and the groups with their options.
struct OptimizerStateDict {
  /// "SGD", "Adam", "AdamW" (checked on load; empty skips the check).
  std::string optimizer;
  std::map<std::int64_t, std::map<std::string, Tensor>> state;
  std::vector<ParamGroupState> param_groups;
};

/// Writes an optimizer's state to a safetensors file: tensors "state.<position>.<name>", and the
/// metadata "optimizer" (its name) and "param_groups" (the groups as JSON text, PyTorch's layout:
/// `[{"lr": 0.001, "betas": [0.9, 0.999], ..., "params": [0, 1]}]`). Atomic, as save_safetensors.
/// A path for which is_torch_path() holds is written as torch.save(optimizer.state_dict()) writes
/// it instead (state tensors, and the groups' options as Python floats, bools and tuples).
void save_optimizer_state(const std::string& path, const OptimizerStateDict& state);
/// Reads what save_optimizer_state wrote; throws for a corrupt file or a malformed layout. A .pt
/// or .pth path is read as torch.save(optimizer.state_dict()) writes it (Adam, AdamW, SGD, ...):
/// options PyTorch has and minigrad has not are dropped when None or False (foreach,
/// capturable, differentiable, fused), as is a scheduler's initial_lr; a state that is None
/// (SGD's momentum_buffer without momentum) is skipped; `optimizer` is left empty (the file does
/// not name it).
OptimizerStateDict load_optimizer_state(const std::string& path);
/// The torch.save format's side of save_optimizer_state and load_optimizer_state.
void save_optimizer_state_torch(const std::string& path, const OptimizerStateDict& state);
OptimizerStateDict load_optimizer_state_torch(const std::string& path);

}  // namespace minigrad
