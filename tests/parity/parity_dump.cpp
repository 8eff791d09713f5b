// parity_dump: runs every sample of the op table (tests/core/op_table.h) forward and backward and
// writes what went in and what came out as JSON lines, for compare.py to replay in PyTorch.
//
//   parity_dump [FILE]        (default: standard output)
//
// Line 1 is a header: {"header": {"entries": [names in table order], "notes": {name: the entry's
// torch_note, for the entries compared with a documented convention}, "upstream_seed": 99, ...}}.
// Every other line is one run of one sample:
//   {"op", "sample" (index), "desc", "has_fn" (the sample has its own fn), "torch" (its PyTorch
//    call from the op table: the sample's, or the entry's when it has no fn of its own), "run"
//    ("float64", "float32" or "float64_nan"), "inputs": [{"dtype", "shape", "strides",
//    "requires_grad", "values"}],
//    "output": {"dtype", "shape", "values"}, "upstream": [...], "grads": [{...} or null]}
// or, when minigrad threw, {"op", "sample", "desc", "has_fn", "run", "inputs", "error": message}.
//
// Values are row-major (logical order, whatever the strides). Finite values are JSON numbers in
// nlohmann's shortest round-trip form (as exact as %.17g); inf and NaN are the strings "inf",
// "-inf" and "nan". The upstream gradient of a run is make(output.shape, 99) (op_table.h's
// deterministic values) in the output's dtype, and is written out as "upstream" too.
//
// The float64 run uses the sample's own inputs (fresh leaves sharing their data and strides). The
// float32 run casts every floating input to float32, keeping its layout when it is a permutation
// of a contiguous tensor (a transposed input stays transposed); int64 and bool inputs are kept.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/op_table.h"

namespace mg = minigrad;
using json = nlohmann::json;

namespace {

constexpr std::int64_t kUpstreamSeed = 99;

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json describe(const mg::Tensor& t, bool with_layout) {
  json j;
  j["dtype"] = mg::dtype_name(t.dtype());
  j["shape"] = t.shape();
  if (with_layout) {
    j["strides"] = t.strides();
    j["requires_grad"] = t.requires_grad();
  }
  json values = json::array();
  for (double v : t.to_vector<double>()) values.push_back(number(v));
  j["values"] = std::move(values);
  return j;
}

/// x's data as `dtype`, with x's dim order in memory when x is a permutation of a contiguous
/// tensor (otherwise contiguous).
mg::Tensor cast_keeping_layout(const mg::Tensor& x, mg::Dtype dtype) {
  const auto& strides = x.strides();
  const auto& shape = x.shape();
  mg::Shape order(shape.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  // Dims from the largest stride to the smallest (size-1 dims last: their stride is arbitrary).
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    auto key = [&](std::int64_t d) { return shape[d] == 1 ? -1 : strides[d]; };
    return key(a) > key(b);
  });
  mg::Tensor y = x.permute(order).to(dtype).contiguous();
  mg::Shape inverse(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<std::int64_t>(i);
  return y.permute(inverse);
}

enum class Run { kFloat64, kFloat32, kNan };

const char* run_name(Run run) {
  return run == Run::kFloat64 ? "float64" : run == Run::kFloat32 ? "float32" : "float64_nan";
}

/// Fresh leaves for one run: the sample's tensors (float64 run), float32 casts of them, or
/// (nan run) float64 copies with a NaN at the middle element of the first floating input.
std::vector<mg::Tensor> prepare(const std::vector<mg::Tensor>& inputs, Run run) {
  std::vector<mg::Tensor> r;
  bool nan_placed = run != Run::kNan;
  for (const mg::Tensor& t : inputs) {
    mg::Tensor x = t.detach();
    if (run == Run::kFloat32 && x.is_floating_point()) x = cast_keeping_layout(x, mg::kFloat32);
    if (!nan_placed && x.is_floating_point() && x.numel() > 0) {
      x = x.clone();
      x.reshape({-1})[x.numel() / 2].fill_(std::nan(""));
      nan_placed = true;
    }
    if (t.requires_grad()) x.requires_grad_();
    r.push_back(x);
  }
  return r;
}

json run_sample(const mg::testing::OpInfo& op, std::size_t index, Run run) {
  const mg::testing::Sample& smp = op.samples[index];
  json j;
  j["op"] = op.name;
  j["sample"] = index;
  j["desc"] = smp.desc;
  j["has_fn"] = static_cast<bool>(smp.fn);
  j["torch"] = smp.fn ? smp.torch : op.torch;
  j["run"] = run_name(run);
  std::vector<mg::Tensor> inputs = prepare(smp.inputs, run);
  json jin = json::array();
  for (const mg::Tensor& t : inputs) jin.push_back(describe(t, true));
  j["inputs"] = std::move(jin);
  try {
    mg::Tensor out = smp.fn ? smp.fn(inputs) : op.fn(inputs);
    j["output"] = describe(out, false);
    mg::Tensor upstream = mg::testing::make(out.shape(), kUpstreamSeed).to(out.dtype());
    json up = json::array();
    for (double v : upstream.to_vector<double>()) up.push_back(number(v));
    j["upstream"] = std::move(up);
    if (out.requires_grad()) out.backward(upstream);
    json grads = json::array();
    for (const mg::Tensor& t : inputs) {
      if (t.requires_grad() && t.grad().defined())
        grads.push_back(describe(t.grad(), false));
      else
        grads.push_back(nullptr);
    }
    j["grads"] = std::move(grads);
  } catch (const std::exception& e) {
    j.erase("output");
    j.erase("upstream");
    j["error"] = e.what();
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  std::ofstream file;
  if (argc > 1) {
    file.open(argv[1]);
    if (!file) {
      std::fprintf(stderr, "parity_dump: cannot write %s\n", argv[1]);
      return 2;
    }
  }
  std::ostream& out = argc > 1 ? file : std::cout;
  const auto& table = mg::testing::op_table();
  json header;
  json names = json::array();
  json notes = json::object();
  std::size_t samples = 0;
  for (const auto& op : table) {
    names.push_back(op.name);
    if (!op.torch_note.empty()) notes[op.name] = op.torch_note;
    samples += op.samples.size();
  }
  header["entries"] = std::move(names);
  header["notes"] = std::move(notes);
  header["samples"] = samples;
  header["upstream_seed"] = kUpstreamSeed;
  header["runs"] = {"float64", "float32", "float64_nan"};
  out << json{{"header", header}}.dump() << "\n";
  for (const auto& op : table) {
    for (std::size_t i = 0; i < op.samples.size(); ++i) {
      for (Run run : {Run::kFloat64, Run::kFloat32, Run::kNan})
        out << run_sample(op, i, run).dump() << "\n";
    }
  }
  out.flush();
  if (!out) {
    std::fprintf(stderr, "parity_dump: write failed\n");
    return 2;
  }
  return 0;
}
