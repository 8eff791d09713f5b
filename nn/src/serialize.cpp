// nn::Module::save / load (libtorch's layout) and the archive operators of
// minigrad/nn/serialize.h.
#include "minigrad/nn/serialize.h"

#include <string>
#include <vector>

#include "minigrad/nn/module.h"

namespace minigrad::nn {

void Module::save(serialize::OutputArchive& archive) const {
  for (const auto& [name, p] : named_parameters(/*recurse=*/false))
    if (p.defined()) archive.write(name, p);
  for (const auto& [name, b] : named_buffers(/*recurse=*/false))
    if (b.defined()) archive.write(name, b, /*is_buffer=*/true);
  for (const auto& [name, child] : named_children()) {
    serialize::OutputArchive child_archive;
    child->save(child_archive);
    archive.write(name, child_archive);
  }
}

void Module::load(serialize::InputArchive& archive) {
  for (auto& [name, p] : named_parameters(/*recurse=*/false))
    if (p.defined()) archive.read(name, p);
  for (auto& [name, b] : named_buffers(/*recurse=*/false))
    if (b.defined()) archive.read(name, b, /*is_buffer=*/true);
  for (const auto& [name, child] : named_children()) {
    serialize::InputArchive child_archive;
    // A child without tensors (ReLU, Dropout) leaves no entries in the file's flat layout (Note
    // [Archive files]): nothing to read. One with tensors must be there.
    if (!archive.try_read(name, child_archive)) {
      bool has_state = false;
      for (const auto& [n, t] : child->state_dict()) has_state = has_state || t.defined();
      if (!has_state) continue;
      archive.read(name, child_archive);  // throws "No such serialized submodule: 'name'"
    }
    child->load(child_archive);
  }
}

}  // namespace minigrad::nn

namespace minigrad::serialize {

OutputArchive& operator<<(OutputArchive& archive, const nn::Module& module) {
  module.save(archive);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, nn::Module& module) {
  // A snapshot of every tensor's values, put back if the load fails half way.
  const nn::StateDict state = module.state_dict();
  std::vector<Tensor> before;
  before.reserve(state.size());
  for (const auto& [name, t] : state) before.push_back(t.defined() ? t.clone() : Tensor());
  try {
    module.load(archive);
  } catch (...) {
    NoGradGuard guard;
    for (std::size_t k = 0; k < state.size(); ++k)
      if (state[k].second.defined()) Tensor(state[k].second).copy_(before[k]);
    throw;
  }
  return archive;
}

}  // namespace minigrad::serialize
