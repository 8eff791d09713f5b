// Optimizer::save / load: an optimizer's state_dict() in a serialization archive
// (minigrad/serialize.h), in the layout optimizer.h describes.
#include <algorithm>
#include <charconv>
#include <string>
#include <variant>
#include <vector>

#include "minigrad/optim/optimizer.h"

namespace minigrad::optim {
namespace {

constexpr const char* kOp = "Optimizer.load";

std::int64_t position(const std::string& text, const std::string& what) {
  std::int64_t v = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  MG_CHECK(ec == std::errc() && end == text.data() + text.size() && v >= 0, kOp, what, " '", text,
           "' is not a non-negative integer");
  return v;
}

// The part of key before its first '.', and the rest ("" if none).
std::pair<std::string, std::string> split(const std::string& key) {
  const std::size_t dot = key.find('.');
  if (dot == std::string::npos) return {key, ""};
  return {key.substr(0, dot), key.substr(dot + 1)};
}

}  // namespace

void Optimizer::save(serialize::OutputArchive& archive) const {
  const OptimizerStateDict dict = state_dict();
  archive.write("optimizer", dict.optimizer);
  for (const auto& [pos, state] : dict.state)
    for (const auto& [name, t] : state)
      archive.write("state." + std::to_string(pos) + "." + name, t);
  for (std::size_t g = 0; g < dict.param_groups.size(); ++g) {
    const std::string group = "param_groups." + std::to_string(g) + ".";
    for (const auto& [name, value] : dict.param_groups[g].options) {
      if (const bool* b = std::get_if<bool>(&value)) {
        archive.write(group + name, *b);
      } else if (const double* d = std::get_if<double>(&value)) {
        archive.write(group + name, *d);
      } else {
        const auto& list = std::get<std::vector<double>>(value);
        for (std::size_t k = 0; k < list.size(); ++k)
          archive.write(group + name + "." + std::to_string(k), list[k]);
      }
    }
    const auto& params = dict.param_groups[g].params;
    for (std::size_t k = 0; k < params.size(); ++k)
      archive.write(group + "params." + std::to_string(k), params[k]);
  }
}

void Optimizer::load(serialize::InputArchive& archive) {
  OptimizerStateDict dict;
  // (absent in a torch.save(optimizer.state_dict()) file: the name is then not checked)
  archive.try_read("optimizer", dict.optimizer);
  serialize::InputArchive state, groups;
  if (archive.try_read("state", state)) {
    // (flat keys "0.exp_avg" as save() writes them, or nested {0: {"exp_avg": ...}} as
    // torch.save(optimizer.state_dict()) does: the nested archive of position 0 reads either)
    std::vector<std::string> positions;
    for (const std::string& key : state.keys()) {
      const std::string pos = split(key).first;
      if (std::find(positions.begin(), positions.end(), pos) == positions.end())
        positions.push_back(pos);
    }
    for (const std::string& pos : positions) {
      serialize::InputArchive param_state;
      MG_CHECK(state.try_read(pos, param_state), kOp, name_, ": state entry '", pos,
               "' is not a parameter's state (<position>.<name>)");
      auto& out = dict.state[position(pos, "state position")];
      for (const std::string& name : param_state.keys()) {
        Tensor t;
        MG_CHECK(param_state.try_read(name, t), kOp, name_, ": state '", pos, ".", name,
                 "' is not a tensor");
        if (t.defined()) out[name] = t;  // (None: SGD's momentum_buffer without momentum)
      }
    }
  }
  MG_CHECK(archive.try_read("param_groups", groups), kOp, name_,
           ": the archive has no param_groups (is it an optimizer's?)");
  for (std::size_t g = 0;; ++g) {
    serialize::InputArchive group;
    if (!groups.try_read(std::to_string(g), group)) break;
    ParamGroupState out;
    std::vector<std::string> done;
    for (const std::string& key : group.keys()) {
      const auto [head, rest] = split(key);
      if (std::find(done.begin(), done.end(), head) != done.end()) continue;
      done.push_back(head);
      bool flag = false;
      double number = 0;
      if (head == "initial_lr") continue;  // (a scheduler's, kept outside the options)
      if (head == "params") {
        serialize::InputArchive params;
        group.read("params", params);
        std::int64_t p = 0;
        for (std::size_t k = 0; params.try_read(std::to_string(k), p); ++k) out.params.push_back(p);
      } else if (rest.empty() && group.try_read(head, flag)) {
        // PyTorch's implementation switches, off: not options minigrad has.
        if (!flag && (head == "foreach" || head == "capturable" || head == "differentiable" ||
                      head == "fused"))
          continue;
        out.options.emplace_back(head, flag);
      } else if (rest.empty() && group.try_read(head, number)) {
        out.options.emplace_back(head, number);
      } else if (!rest.empty()) {
        serialize::InputArchive list;
        group.read(head, list);
        std::vector<double> values;
        for (std::size_t k = 0; list.try_read(std::to_string(k), number); ++k)
          values.push_back(number);
        out.options.emplace_back(head, std::move(values));
      }
      // (anything else, such as None for PyTorch's foreach, is not an option minigrad has)
    }
    dict.param_groups.push_back(std::move(out));
  }
  load_state_dict(dict);
}

}  // namespace minigrad::optim
