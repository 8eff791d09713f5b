// Random numbers with PyTorch's CPU algorithms: MT19937 engine, its uniform conversions,
// randint's modulo, and Box-Muller normals with the generator's cached spare.
#include <cmath>
#include <mutex>
#include <random>

#include "kernels/dispatch.h"
#include "minigrad/ops.h"
#include "tensor_impl.h"

namespace minigrad {
namespace {

struct Generator {
  std::mt19937 engine{67280421310721ULL & 0xFFFFFFFFULL};
  std::optional<double> spare;
  std::uint32_t random() { return static_cast<std::uint32_t>(engine()); }
  std::uint64_t random64() {
    std::uint64_t hi = random();
    std::uint64_t lo = random();
    return (hi << 32) | lo;
  }
  float uniform_float() { return static_cast<float>(random() & 0xFFFFFF) * 0x1p-24f; }
  double uniform_double() {
    return static_cast<double>(random64() & ((1ULL << 53) - 1)) * 0x1p-53;
  }
  double normal_double() {
    if (spare) {
      double z = *spare;
      spare.reset();
      return z;
    }
    double ua = uniform_double();  // the angle comes first in this path
    double ur = uniform_double();
    double r = std::sqrt(-2.0 * std::log(1.0 - ur));
    double th = 6.283185307179586 * ua;
    spare = r * std::sin(th);
    return r * std::cos(th);
  }
};

// The default generator is shared by all threads, so each draw sequence holds its lock.
std::mutex generator_mutex;
Generator& default_generator() {
  static Generator g;
  return g;
}

}  // namespace

void manual_seed(std::uint64_t seed) {
  std::lock_guard<std::mutex> lock(generator_mutex);
  Generator& g = default_generator();
  g.engine.seed(static_cast<std::uint32_t>(seed & 0xFFFFFFFFULL));
  g.spare.reset();
}

Tensor rand(const Shape& shape, Dtype dtype) {
  MG_CHECK(is_floating_point(dtype), "rand", "dtype must be float32 or float64, got ",
           dtype_name(dtype));
  Tensor out = detail::make_tensor(shape, dtype);
  std::lock_guard<std::mutex> lock(generator_mutex);
  Generator& g = default_generator();
  std::int64_t n = out.numel();
  if (dtype == kFloat32) {
    float* p = out.data_ptr<float>();
    for (std::int64_t i = 0; i < n; ++i) p[i] = g.uniform_float();
  } else {
    double* p = out.data_ptr<double>();
    for (std::int64_t i = 0; i < n; ++i) p[i] = g.uniform_double();
  }
  return out;
}

Tensor randn(const Shape& shape, Dtype dtype) {
  MG_CHECK(is_floating_point(dtype), "randn", "dtype must be float32 or float64, got ",
           dtype_name(dtype));
  Tensor out = detail::make_tensor(shape, dtype);
  std::lock_guard<std::mutex> lock(generator_mutex);
  Generator& g = default_generator();
  std::int64_t n = out.numel();
  detail::dispatch_floating(dtype, "randn", [&]<typename T>() {
    T* p = out.data_ptr<T>();
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(g.normal_double());
  });
  return out;
}

Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Dtype dtype) {
  MG_CHECK(high > low, "randint", "expected low < high, but got low = ", low, " and high = ", high);
  MG_CHECK(dtype == kInt64 || is_floating_point(dtype), "randint", "unsupported dtype ",
           dtype_name(dtype));
  Tensor out = detail::make_tensor(shape, kInt64);
  {
    std::lock_guard<std::mutex> lock(generator_mutex);
    Generator& g = default_generator();
    auto range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    std::int64_t* p = out.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      std::uint64_t v = range >= (1ULL << 32) ? g.random64() : g.random();
      p[i] = static_cast<std::int64_t>(v % range + static_cast<std::uint64_t>(low));
    }
  }
  return dtype == kInt64 ? out : out.to(dtype);
}

Tensor randint(std::int64_t high, const Shape& shape, Dtype dtype) {
  return randint(0, high, shape, dtype);
}

}  // namespace minigrad
