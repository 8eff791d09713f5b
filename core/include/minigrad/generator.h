#pragma once
// mg::Generator: a random stream of its own, as torch.Generator, with PyTorch's state format.
//
//   mg::Generator g;                       // torch.Generator()
//   g.manual_seed(42);                     // g.manual_seed(42)
//   mg::Tensor x = mg::randn({2, 3}, g);   // torch.randn(2, 3, generator=g)
//   auto state = g.get_state();            // g.get_state(): 5056 bytes, PyTorch's layout
//   g.set_state(state);                    // g.set_state(state)
//
// get_state() returns the bytes of PyTorch 1.13's CPU generator state (what
// torch.get_rng_state().numpy().tobytes() gives), so a state saved in Python continues in C++
// with the same numbers, and back. Each Generator is locked during a draw: sharing one across
// threads is safe, but the interleaving of their draws is not deterministic.
#include <cstdint>
#include <memory>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad {

namespace detail {
struct Generator;
struct GeneratorAccess;
}  // namespace detail

class Generator {
 public:
  /// A fresh generator seeded like torch.Generator() (initial seed 67280421310721).
  Generator();
  /// Reseeds (torch.Generator.manual_seed) and returns *this.
  Generator& manual_seed(std::uint64_t seed);
  /// The seed last given (torch.Generator.initial_seed).
  std::uint64_t initial_seed() const;
  /// The full state, in PyTorch's byte layout (5056 bytes).
  std::vector<std::uint8_t> get_state() const;
  /// Restores a state from get_state() (minigrad's or PyTorch's); throws minigrad::Error for a
  /// state of the wrong size or with impossible values, and leaves the generator unchanged.
  void set_state(const std::vector<std::uint8_t>& state);

 private:
  // The engine: only core/src/random.cpp draws from it (through detail::GeneratorAccess, which
  // only that file defines).
  friend struct detail::GeneratorAccess;
  detail::Generator& impl() const { return *impl_; }
  explicit Generator(std::shared_ptr<detail::Generator> impl) : impl_(std::move(impl)) {}
  friend Generator default_generator();
  std::shared_ptr<detail::Generator> impl_;
};

/// A handle to the default generator that manual_seed() seeds and rand()/randn() draw from
/// (torch.default_generator).
Generator default_generator();
/// torch.get_rng_state() / torch.set_rng_state(): the default generator's state.
std::vector<std::uint8_t> get_rng_state();
void set_rng_state(const std::vector<std::uint8_t>& state);

/// rand, randn and randint drawing from `generator` instead of the default one.
Tensor rand(const Shape& shape, Generator& generator, Dtype dtype = get_default_dtype());
Tensor randn(const Shape& shape, Generator& generator, Dtype dtype = get_default_dtype());
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Generator& generator,
               Dtype dtype = kInt64);
/// torch.randperm(n, generator=generator): the same permutation as PyTorch 1.13 for a seed.
Tensor randperm(std::int64_t n, Generator& generator);
/// torch.multinomial(probs, num_samples, replacement, generator=generator).
Tensor multinomial(const Tensor& probs, std::int64_t num_samples, bool replacement,
                   Generator& generator);

}  // namespace minigrad
