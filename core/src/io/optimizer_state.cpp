// Optimizer checkpoints in a safetensors file. Layout (docs/api.md, "Checkpoints"):
//   tensors   "state.<position>.<name>"   e.g. "state.0.exp_avg", "state.0.step"
//   metadata  "format": "minigrad.optimizer", "optimizer": "Adam",
//             "param_groups": JSON text, PyTorch's layout:
//             [{"lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-08, ..., "params": [0, 1]}]
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "io/file_io.h"
#include "minigrad/io.h"

namespace minigrad {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kSave = "save_optimizer_state";
constexpr const char* kLoad = "load_optimizer_state";
constexpr const char* kFormat = "minigrad.optimizer";

// Note [Bounded optimizer metadata]
// "param_groups" comes from a file: a hostile one may nest 100,000 arrays (nlohmann's recursive
// dump() and destructor overflow the stack), hold a number such as 1e400 (out_of_range, not a
// parse_error) or a 10 MB value. So its nesting is measured first, without recursion, and refused
// beyond PyTorch's layout ([{"betas": [0.9, 0.999]}] is 3 levels); every nlohmann exception
// becomes a minigrad::Error; and an error quotes at most kQuote bytes of any value or name.
constexpr int kMaxDepth = 3;
constexpr std::size_t kQuote = 200;

std::string quote(const std::string& text) {
  if (text.size() <= kQuote) return text;
  return text.substr(0, kQuote) + "... (" + std::to_string(text.size()) + " bytes)";
}
std::string quote_json(const Json& value) { return quote(value.dump()); }

Json number(double v, const std::string& path, const std::string& name) {
  // JSON has no inf or NaN: refuse them rather than write null.
  MG_CHECK(std::isfinite(v), kSave, path, ": option \"", name, "\" is ", v,
           ", which JSON cannot store");
  return v;
}

}  // namespace

void save_optimizer_state(const std::string& path, const OptimizerStateDict& state) {
  if (is_torch_path(path)) return save_optimizer_state_torch(path, state);
  NamedTensors tensors;
  for (const auto& [index, param_state] : state.state) {
    MG_CHECK(index >= 0, kSave, path, ": parameter position ", index, " is negative");
    for (const auto& [name, t] : param_state)
      tensors.emplace_back("state." + std::to_string(index) + "." + name, t);
  }
  Json groups = Json::array();
  for (const ParamGroupState& g : state.param_groups) {
    Json group = Json::object();
    for (const auto& [name, value] : g.options) {
      MG_CHECK(name != "params", kSave, path, ": \"params\" cannot be an option name");
      if (const bool* b = std::get_if<bool>(&value)) {
        group[name] = *b;
      } else if (const double* d = std::get_if<double>(&value)) {
        group[name] = number(*d, path, name);
      } else {
        Json list = Json::array();
        for (double v : std::get<std::vector<double>>(value)) list.push_back(number(v, path, name));
        group[name] = std::move(list);
      }
    }
    group["params"] = g.params;
    groups.push_back(std::move(group));
  }
  save_safetensors(
      path, tensors,
      {{"format", kFormat}, {"optimizer", state.optimizer}, {"param_groups", groups.dump()}});
}

OptimizerStateDict load_optimizer_state(const std::string& path) {
  if (is_torch_path(path)) return load_optimizer_state_torch(path);
  SafetensorsFile file = load_safetensors(path);
  auto meta = [&](const char* key) -> const std::string& {
    auto it = file.metadata.find(key);
    MG_CHECK(it != file.metadata.end(), kLoad, path, ": metadata \"", key,
             "\" is missing (not an optimizer checkpoint?)");
    return it->second;
  };
  MG_CHECK(meta("format") == kFormat, kLoad, path, ": metadata \"format\" is \"",
           quote(meta("format")), "\", expected \"", kFormat, "\"");
  OptimizerStateDict out;
  out.optimizer = meta("optimizer");
  MG_CHECK(out.optimizer.size() <= kQuote, kLoad, path, ": metadata \"optimizer\" is \"",
           quote(out.optimizer), "\", not an optimizer's name");

  const std::string& text = meta("param_groups");
  MG_CHECK(detail::scan_json(text).depth <= kMaxDepth, kLoad, path,
           ": metadata \"param_groups\" nests arrays and objects more than ", kMaxDepth,
           " levels deep; PyTorch's layout has ", kMaxDepth,
           " ([{\"lr\": 0.001, \"betas\": [0.9, 0.999], \"params\": [0]}])");
  Json groups;
  try {
    groups = Json::parse(text);
  } catch (const Json::exception& e) {
    MG_ERROR(kLoad, path,
             ": metadata \"param_groups\" is not valid JSON: ", quote(std::string(e.what())));
  }
  MG_CHECK(groups.is_array(), kLoad, path, ": param_groups must be a JSON list");
  for (const Json& group : groups) {
    MG_CHECK(group.is_object(), kLoad, path, ": each param group must be a JSON object, got ",
             quote_json(group));
    ParamGroupState g;
    bool has_params = false;
    for (const auto& [name, value] : group.items()) {
      MG_CHECK(name.size() <= 64, kLoad, path, ": option name \"", quote(name),
               "\" is longer than 64 bytes, not an optimizer option");
      if (name == "params") {
        MG_CHECK(value.is_array(), kLoad, path, ": \"params\" must be a list of positions");
        for (const Json& p : value) {
          MG_CHECK(p.is_number_integer() && p.get<std::int64_t>() >= 0, kLoad, path,
                   ": \"params\" must hold non-negative integers, got ", quote_json(value));
          g.params.push_back(p.get<std::int64_t>());
        }
        has_params = true;
      } else if (value.is_boolean()) {
        g.options.emplace_back(name, value.get<bool>());
      } else if (value.is_number()) {
        g.options.emplace_back(name, value.get<double>());
      } else if (value.is_array()) {
        std::vector<double> list;
        for (const Json& v : value) {
          MG_CHECK(v.is_number(), kLoad, path, ": option \"", quote(name),
                   "\" must be a list of numbers, got ", quote_json(value));
          list.push_back(v.get<double>());
        }
        g.options.emplace_back(name, std::move(list));
      } else {
        MG_ERROR(kLoad, path, ": option \"", quote(name),
                 "\" must be a number, a bool or a list of numbers, got ", quote_json(value));
      }
    }
    MG_CHECK(has_params, kLoad, path, ": a param group has no \"params\"");
    out.param_groups.push_back(std::move(g));
  }

  for (auto& [key, t] : file.tensors) {
    // "state.<position>.<name>"
    const std::string prefix = "state.";
    const std::size_t dot = key.find('.', prefix.size());
    const std::string digits = key.rfind(prefix, 0) == 0 && dot != std::string::npos
                                   ? key.substr(prefix.size(), dot - prefix.size())
                                   : std::string();
    const bool ok = !digits.empty() && digits.size() <= 18 &&
                    digits.find_first_not_of("0123456789") == std::string::npos &&
                    dot + 1 < key.size();
    MG_CHECK(ok, kLoad, path, ": tensor \"", quote(key),
             "\" is not named state.<position>.<name>, e.g. state.0.exp_avg");
    out.state[std::stoll(digits)][key.substr(dot + 1)] = t;
  }
  return out;
}

}  // namespace minigrad
