// fuzz_files: libFuzzer target that feeds its input, as a file, to every file reader of minigrad:
// load_safetensors, load_npy, load_optimizer_state, load_torch, load_optimizer_state_torch
// (minigrad/io.h) and nn::load into a module, from a .safetensors and from a .pt path.
//
// The only allowed outcomes are a result or a minigrad::Error; nothing else is caught, so any other
// exception, a crash or an ASan/UBSan report fails the run. Invariants checked besides (a violation
// aborts with a message):
// - a tensor that loads can be read back (to_vector) and has numel() elements;
// - what load_safetensors / load_npy / load_torch returns saves again and reloads with the same
//   names, shapes and dtypes (save may throw minigrad::Error, e.g. for a name that is not UTF-8);
// - nn::load that throws leaves the module's parameters unchanged (issue 5, item 8).
//
// optim::load is not fuzzed here: it is load_optimizer_state followed by load_state_dict, and
// optim's header does not compile with clang < 16 (see tests/fuzz/README.md).
// tests/fuzz/gen_corpus.py writes the seed corpus (valid and broken .npy / safetensors files).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "minigrad/io.h"
#include "minigrad/nn/linear.h"
#include "minigrad/nn/module.h"
#include "minigrad/ops.h"
#include "minigrad/tensor.h"

namespace mg = minigrad;
using mg::Tensor;

namespace {

[[noreturn]] void invariant_failed(const std::string& what) {
  std::fprintf(stderr, "fuzz_files: invariant violated: %s\n", what.c_str());
  std::abort();
}

/// Per-process temporary file names (libFuzzer's -fork/-jobs run several processes at once).
const std::string& temp_path(int which) {
  static const std::string base = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/minigrad_fuzz_files." +
           std::to_string(::getpid());
  }();
  // (.pt: nn::load reads a path so named in torch.save's format)
  static const std::string paths[4] = {base + ".in", base + ".out", base + ".in.pt",
                                       base + ".out.pt"};
  static const bool cleanup_registered = [] {
    std::atexit([] {
      for (const std::string& p : paths) std::remove(p.c_str());
    });
    return true;
  }();
  (void)cleanup_registered;
  return paths[which];
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) invariant_failed("cannot write " + path);
  if (size > 0 && std::fwrite(data, 1, size, f) != size) invariant_failed("short write " + path);
  std::fclose(f);
}

void touch(const Tensor& t, const char* reader) {
  if (!t.defined()) invariant_failed(std::string(reader) + " returned an undefined tensor");
  std::vector<double> v = t.to_vector<double>();
  if (static_cast<std::int64_t>(v.size()) != t.numel())
    invariant_failed(std::string(reader) + ": to_vector gave " + std::to_string(v.size()) +
                     " values for shape " + mg::detail::shape_str(t.shape()));
}

void same_layout(const Tensor& a, const Tensor& b, const std::string& what) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    invariant_failed(what + ": saved " + mg::detail::shape_str(a.shape()) + " " +
                     mg::dtype_name(a.dtype()) + ", reloaded " + mg::detail::shape_str(b.shape()) +
                     " " + mg::dtype_name(b.dtype()));
}

void fuzz_safetensors(const std::string& in, const std::string& out) {
  mg::SafetensorsFile f;
  try {
    f = mg::load_safetensors(in);
  } catch (const mg::Error&) {
    return;
  }
  for (const auto& [name, t] : f.tensors) {
    touch(t, "load_safetensors");
    if (!f.contains(name)) invariant_failed("load_safetensors: contains(" + name + ") is false");
  }
  try {
    mg::save_safetensors(out, f.tensors, f.metadata);
  } catch (const mg::Error&) {
    return;
  }
  mg::SafetensorsFile g = mg::load_safetensors(out);  // must not throw: minigrad wrote it
  if (g.tensors.size() != f.tensors.size() || g.metadata != f.metadata)
    invariant_failed("load_safetensors: a re-saved file reloads with other names or metadata");
  for (std::size_t i = 0; i < f.tensors.size(); ++i) {
    if (g.tensors[i].first != f.tensors[i].first)
      invariant_failed("load_safetensors: re-saved names differ: " + f.tensors[i].first + " / " +
                       g.tensors[i].first);
    same_layout(f.tensors[i].second, g.tensors[i].second, "safetensors " + f.tensors[i].first);
  }
}

void fuzz_npy(const std::string& in, const std::string& out) {
  Tensor t;
  try {
    t = mg::load_npy(in);
  } catch (const mg::Error&) {
    return;
  }
  touch(t, "load_npy");
  mg::save_npy(out, t);  // must not throw: any tensor can be saved
  same_layout(t, mg::load_npy(out), "npy");
}

void fuzz_torch(const std::string& in, const std::string& out) {
  mg::NamedTensors f;
  try {
    f = mg::load_torch(in);
  } catch (const mg::Error&) {
    return;
  }
  for (const auto& [name, t] : f) touch(t, "load_torch");
  try {
    mg::save_torch(out, f);
  } catch (const mg::Error&) {
    return;
  }
  const mg::NamedTensors g = mg::load_torch(out);  // must not throw: minigrad wrote it
  if (g.size() != f.size()) invariant_failed("load_torch: a re-saved file reloads other names");
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (g[i].first != f[i].first)
      invariant_failed("load_torch: re-saved names differ: " + f[i].first + " / " + g[i].first);
    same_layout(f[i].second, g[i].second, "torch " + f[i].first);
  }
}

/// load_optimizer_state of a .safetensors path, or of a .pt path (load_optimizer_state_torch).
void fuzz_optimizer_state(const std::string& in) {
  try {
    mg::OptimizerStateDict d = mg::load_optimizer_state(in);
    for (const auto& [position, entries] : d.state)
      for (const auto& [name, t] : entries) touch(t, "load_optimizer_state");
  } catch (const mg::Error&) {
  }
}

/// nn::load into a small module; a failed load must leave the parameters as they were.
void fuzz_module_load(const std::string& in, bool strict) {
  mg::manual_seed(0);
  mg::nn::Linear module(3, 2);
  std::vector<std::vector<double>> before;
  for (const Tensor& p : module->parameters()) before.push_back(p.to_vector<double>());
  try {
    mg::nn::load(module, in, strict);
  } catch (const mg::Error&) {
    std::size_t i = 0;
    for (const Tensor& p : module->parameters()) {
      std::vector<double> now = p.to_vector<double>();
      // Compare bit patterns through ==, with the values drawn by manual_seed(0) (no NaN).
      if (i >= before.size() || now != before[i])
        invariant_failed("nn::load threw but changed parameter " + std::to_string(i));
      ++i;
    }
    return;
  }
  for (const Tensor& p : module->parameters()) touch(p, "nn::load");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& in = temp_path(0);
  const std::string& out = temp_path(1);
  const std::string& in_pt = temp_path(2);
  write_file(in, data, size);
  write_file(in_pt, data, size);
  fuzz_safetensors(in, out);
  fuzz_npy(in, out);
  fuzz_torch(in_pt, temp_path(3));
  fuzz_optimizer_state(in);
  fuzz_optimizer_state(in_pt);
  fuzz_module_load(in, size % 2 == 0);
  fuzz_module_load(in_pt, size % 2 == 0);
  return 0;
}
