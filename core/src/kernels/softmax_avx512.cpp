// The float32 softmax kernels, exp and the fused Adam update for AVX-512F. This file alone is
// compiled with -mavx512f -mavx2 -mfma (core/CMakeLists.txt, x86-64 only) and runs only after
// simd.cpp has checked the CPU (Note [Runtime SIMD dispatch] in simd.h). Include nothing here that
// defines inline functions shared with the rest of the library (see vec_math.h).
#include "kernels/optim_simd_impl.h"
#include "kernels/simd.h"
#include "kernels/softmax_simd_impl.h"

namespace minigrad::detail::simd {

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
const Kernels* avx512_kernels_f32() {
  static const Kernels kernels{Level::kAvx512,
                               "avx512",
                               &exp_kernel<Avx512>,
                               &softmax_forward_kernel<Avx512>,
                               &softmax_backward_kernel<Avx512>,
                               &adam_kernel<Avx512>};
  return &kernels;
}
#else
const Kernels* avx512_kernels_f32() { return nullptr; }
#endif

}  // namespace minigrad::detail::simd
