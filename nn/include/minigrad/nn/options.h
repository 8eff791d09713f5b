#pragma once
// MG_ARG: a chained option of a module's options struct, as libtorch's TORCH_ARG:
//
//   struct FlattenOptions {
//     MG_ARG(std::int64_t, start_dim) = 1;
//   };
//   FlattenOptions().start_dim(2).start_dim()  // 2

/// Declares a private member name_ of type T, a setter name(value) that returns the options (so
/// setters chain) and getters name().
#define MG_ARG(T, name)                                    \
 public:                                                   \
  auto name(const T& new_##name)->decltype(*this) {        \
    this->name##_ = new_##name;                            \
    return *this;                                          \
  }                                                        \
  const T& name() const noexcept { return this->name##_; } \
  T& name() noexcept { return this->name##_; }             \
                                                           \
 private:                                                  \
  T name##_
