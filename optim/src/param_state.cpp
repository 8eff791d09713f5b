// The typed parameter states (Note [Typed parameter state], optimizer.h).
#include <memory>
#include <unordered_map>
#include <utility>

#include "minigrad/ops/creation.h"
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
