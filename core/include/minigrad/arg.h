#pragma once
// MG_ARG, the chained options of the optimizers' and modules' options structs.
#include <utility>

/// An option of an options struct, as libtorch's TORCH_ARG: a private member `name_`, a chained
/// setter `name(value)` returning *this, and getters `name()`, so that
/// `SGDOptions(0.1).momentum(0.9).nesterov(true)` and `options.lr()` read as in libtorch. Like
/// TORCH_ARG it leaves the struct in `private:`; give the default after it:
/// `MG_ARG(double, momentum) = 0;`. A type with a comma needs an alias (`betas_t`).
#define MG_ARG(T, name)                                          \
 public:                                                         \
  auto name(const T& new_##name)->decltype(*this) { /* NOLINT */ \
    this->name##_ = new_##name;                                  \
    return *this;                                                \
  }                                                              \
  auto name(T&& new_##name)->decltype(*this) { /* NOLINT */      \
    this->name##_ = std::move(new_##name);                       \
    return *this;                                                \
  }                                                              \
  const T& name() const noexcept { return this->name##_; }       \
  T& name() noexcept { return this->name##_; }                   \
                                                                 \
 private:                                                        \
  T name##_ /* NOLINT */
