// The float32 softmax kernels, exp, GELU and the fused Adam update over xsimd::batch<float,
// xsimd::fma3<xsimd::avx2>>. This file is compiled with -mavx2 -mfma (core/CMakeLists.txt, x86-64
// only) and runs only after simd.cpp has checked the CPU (Note [Runtime SIMD dispatch] in simd.h).
// Include nothing here that defines non-template inline functions shared with the rest of the
// library (see vec_math.h).
#include "kernels/activation_simd_impl.h"
#include "kernels/gelu_simd_impl.h"
#include "kernels/gemm_simd_impl.h"
#include "kernels/mt19937_simd_impl.h"
#include "kernels/optim_simd_impl.h"
#include "kernels/simd.h"
#include "kernels/softmax_simd_impl.h"

namespace minigrad::detail::simd {

#if defined(__x86_64__) && XSIMD_WITH_FMA3_AVX2
const Kernels* avx2_kernels_f32() {
  using V = Vec<xsimd::fma3<xsimd::avx2>>;
  static const Kernels kernels{Level::kAvx2,
                               "avx2",
                               &exp_kernel<V>,
                               &softmax_forward_kernel<V>,
                               &max_kernel<V>,
                               &exp_sum_kernel<V>,
                               &softmax_backward_kernel<V>,
                               &tanh_kernel<V>,
                               &sigmoid_kernel<V>,
                               &tanh_backward_kernel<V>,
                               &sigmoid_backward_kernel<V>,
                               &gelu_kernel<V>,
                               &gelu_backward_kernel<V>,
                               &adam_kernel<V>,
                               &mt_twist_kernel<xsimd::fma3<xsimd::avx2>>,
                               &mt_temper_kernel<xsimd::fma3<xsimd::avx2>>,
                               &gemm_kernel<V>};
  return &kernels;
}
#else
const Kernels* avx2_kernels_f32() { return nullptr; }
#endif

}  // namespace minigrad::detail::simd
