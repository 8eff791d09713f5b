// Run-time CPU dispatch (Note [Runtime SIMD dispatch] in simd.h). Compiled like the rest of the
// library, without any -m flag: this file only asks the CPU what it supports.
#include "kernels/simd.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace minigrad::detail::simd {

namespace {

/// The cap on the level: MINIGRAD_CPU_CAPABILITY=default|avx2|avx512 in the environment (as
/// PyTorch's ATEN_CPU_CAPABILITY; "default" is the portable code), then set_max_level.
std::atomic<int>& max_level() {
  static std::atomic<int> level{[] {
    const char* env = std::getenv("MINIGRAD_CPU_CAPABILITY");
    if (env && (std::strcmp(env, "default") == 0 || std::strcmp(env, "portable") == 0))
      return static_cast<int>(Level::kPortable);
    if (env && std::strcmp(env, "avx2") == 0) return static_cast<int>(Level::kAvx2);
    return static_cast<int>(Level::kAvx512);
  }()};
  return level;
}

bool cpu_supports(Level level) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // __builtin_cpu_supports also checks that the OS saves the YMM / ZMM registers (XGETBV).
  switch (level) {
    case Level::kPortable:
      return true;
    case Level::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Level::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma");
  }
  return false;
#else
  return level == Level::kPortable;
#endif
}

}  // namespace

const Kernels* kernels_f32_at(Level level) {
  if (!cpu_supports(level)) return nullptr;
  switch (level) {
    case Level::kPortable:
      return nullptr;
    case Level::kAvx2:
      return avx2_kernels_f32();
    case Level::kAvx512:
      return avx512_kernels_f32();
  }
  return nullptr;
}

Level detected_level() {
  static const Level level = [] {
    if (kernels_f32_at(Level::kAvx512)) return Level::kAvx512;
    if (kernels_f32_at(Level::kAvx2)) return Level::kAvx2;
    return Level::kPortable;
  }();
  return level;
}

void set_max_level(Level level) {
  max_level().store(static_cast<int>(level), std::memory_order_relaxed);
}

const Kernels* kernels_f32() {
  static const Kernels* const best = kernels_f32_at(detected_level());
  const int cap = max_level().load(std::memory_order_relaxed);
  if (cap >= static_cast<int>(detected_level())) return best;
  return kernels_f32_at(static_cast<Level>(cap));
}

}  // namespace minigrad::detail::simd
