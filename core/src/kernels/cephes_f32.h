#pragma once
// Private: the float32 constants of the Cephes log / sincos that PyTorch's AVX2 normal kernel
// uses (torch-rng-parity §5.2), shared by random.cpp's scalar emulation of one lane and the
// 8-lane kernel in kernels/normal_avx2.cpp. Constants only: nothing here may be an inline function
// (this file is compiled with -mavx2 too; see vec_math.h).
#include <bit>
#include <cstdint>

namespace minigrad::detail::cephes {

// Constants: each decimal is what avx_mathfun.h spells, rounded once to float32.
constexpr float kMinNormPos = 0x1p-126f;
constexpr float kSqrtHalf = 0.707106781186547524f;
constexpr float kLogP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                            -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                            2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
constexpr float kLogQ1 = -2.12194440e-4f;
constexpr float kLogQ2 = 0.693359375f;
constexpr float kFourOverPi = 1.27323954473516f;
constexpr float kMinusDP1 = -0.78515625f;
constexpr float kMinusDP2 = -2.4187564849853515625e-4f;
constexpr float kMinusDP3 = -3.77489497744594108e-8f;
constexpr float kCosP0 = 2.443315711809948E-5f;
constexpr float kCosP1 = -1.388731625493765E-3f;
constexpr float kCosP2 = 4.166664568298827E-2f;
constexpr float kSinP0 = -1.9515295891E-4f;
constexpr float kSinP1 = 8.3321608736E-3f;
constexpr float kSinP2 = -1.6666654611E-1f;
// 2*pi as float32; the vectorised kernel computes the angle as a float32 product with it.
constexpr float kTwoPiF = static_cast<float>(6.283185307179586);

static_assert(std::bit_cast<std::uint32_t>(kSqrtHalf) == 0x3F3504F3u);
static_assert(std::bit_cast<std::uint32_t>(kLogP[0]) == 0x3D9021BBu);
static_assert(std::bit_cast<std::uint32_t>(kLogP[8]) == 0x3EAAAAAAu);
static_assert(std::bit_cast<std::uint32_t>(kLogQ1) == 0xB95E8083u);
static_assert(std::bit_cast<std::uint32_t>(kFourOverPi) == 0x3FA2F983u);
static_assert(std::bit_cast<std::uint32_t>(kMinusDP3) == 0xB3222169u);
static_assert(std::bit_cast<std::uint32_t>(kCosP0) == 0x37CCF5CEu);
static_assert(std::bit_cast<std::uint32_t>(kSinP2) == 0xBE2AAAA3u);
static_assert(std::bit_cast<std::uint32_t>(kTwoPiF) == 0x40C90FDBu);

}  // namespace minigrad::detail::cephes
