// The typed parameter states (Note [Typed parameter state], optimizer.h).
#include <memory>
#include <unordered_map>
#include <utility>

#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/optim/optimizer.h"

namespace minigrad::optim {

OptimizerParamState::~OptimizerParamState() = default;

std::unique_ptr<OptimizerParamState> OptimizerParamState::clone() const {
  return std::make_unique<OptimizerParamState>(*this);
}

Tensor OptimizerParamState::get(const char* key) const {
  auto it = find(key);
  return it == end() ? Tensor() : it->second;
}

std::int64_t OptimizerParamState::get_step() const {
  auto it = find("step");
  return it == end() || !it->second.defined()
             ? 0
             : static_cast<std::int64_t>(it->second.item<double>());
}

void OptimizerParamState::set_step(std::int64_t step) {
  Tensor& t = (*this)["step"];
  if (t.defined())
    t.fill_(static_cast<double>(step));
  else
    t = scalar_tensor(static_cast<double>(step), kFloat32);
}

std::int64_t OptimizerParamState::get_count(const char* key) const {
  const Tensor t = get(key);
  return t.defined() ? static_cast<std::int64_t>(t.item<double>()) : 0;
}

void OptimizerParamState::set_count(const char* key, std::int64_t value) {
  Tensor& t = (*this)[key];
  if (t.defined())
    t.fill_(static_cast<double>(value));
  else
    t = scalar_tensor(static_cast<double>(value), kInt64);
}

bool OptimizerParamState::equals(const OptimizerParamState& other) const {
  if (get_step() != other.get_step()) return false;
  // torch::equal_if_defined on each entry either side has ("step" is compared as a number, as
  // libtorch's int64 step).
  auto same = [](const Tensor& a, const Tensor& b) {
    return a.defined() == b.defined() && (!a.defined() || equal(a, b));
  };
  for (const auto& [key, t] : *this)
    if (key != "step" && !same(t, other.get(key.c_str()))) return false;
  for (const auto& [key, t] : other)
    if (key != "step" && !contains(key) && !same(get(key.c_str()), t)) return false;
  return true;
}

void Optimizer::replace_state(std::unordered_map<const TensorImpl*, ParamState> state) {
  ParamStateMap typed;
  for (auto& [key, entries] : state) {
    std::unique_ptr<OptimizerParamState> s = make_param_state();
    static_cast<std::map<std::string, Tensor>&>(*s) = std::move(entries);
    typed.emplace(ParamStateMap::key(key), std::move(s));
  }
  state_ = std::move(typed);
}

}  // namespace minigrad::optim
