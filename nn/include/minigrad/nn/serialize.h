#pragma once
// Modules in serialization archives (minigrad/serialize.h), as libtorch's: `archive << model`
// calls model.save(archive), `archive >> model` model.load(archive), so that
// mg::save(model, "model.pt") and mg::load(model, "model.pt") work for a module, a holder
// (nn::Linear) or a std::shared_ptr to a module. mg::load leaves the module unchanged when the
// archive does not fit it.
#include <concepts>
#include <memory>

#include "minigrad/nn/module.h"
#include "minigrad/serialize.h"

namespace minigrad::serialize {

OutputArchive& operator<<(OutputArchive& archive, const nn::Module& module);
/// module.load(archive); on an error every parameter and buffer gets its value back.
InputArchive& operator>>(InputArchive& archive, nn::Module& module);

template <nn::IsModuleHolder H>
OutputArchive& operator<<(OutputArchive& archive, const H& holder) {
  return archive << *holder;
}
template <nn::IsModuleHolder H>
InputArchive& operator>>(InputArchive& archive, const H& holder) {
  return archive >> *holder;
}
template <std::derived_from<nn::Module> M>
OutputArchive& operator<<(OutputArchive& archive, const std::shared_ptr<M>& module) {
  MG_CHECK(module != nullptr, "save", "the module pointer is null");
  return archive << *module;
}
template <std::derived_from<nn::Module> M>
InputArchive& operator>>(InputArchive& archive, const std::shared_ptr<M>& module) {
  MG_CHECK(module != nullptr, "load", "the module pointer is null");
  return archive >> *module;
}

}  // namespace minigrad::serialize
