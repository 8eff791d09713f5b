#pragma once
// One core's float32 multiply-add rate: the ceiling of every product on this CPU.

namespace bench {

/// GFLOP/s of independent chains of float32 FMAs on the calling thread, no loads or stores, at the
/// widest level this CPU has (AVX-512 or AVX2 + FMA; 0 without either): best of a few ~20 ms runs.
/// A product of F multiply-adds cannot take less than 2 F / this on one core.
double fma_peak_gflops();

}  // namespace bench
