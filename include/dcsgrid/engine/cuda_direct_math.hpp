// Reciprocal square root on the FMA pipe, for the CUDA direct-summation kernel. Host and device
// evaluate the same float operations in the same order, so the host tests measure exactly what the
// GPU computes.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "dcsgrid/core/physics.hpp"  // DCSGRID_HD

namespace dcsgrid::engine {

// Seed of the bit trick y0 = bits(kRsqrtMagic − (bits(x) >> 1)): within 3.5% of 1/√x.
inline constexpr std::uint32_t kRsqrtMagic = 0x5f375a86u;
// Newton steps y ← y·(1.5 − x·y²/2) square the error and leave it negative: with this seed, two
// steps end within [−4.7e-6, 0] (mean −1.9e-6). The last step's constant is raised by 16 ulp so the
// error is centred instead, within [−2.9e-6, +2.1e-6] with mean 3e-8 (measured over every float in
// [1, 4), which covers every exponent parity); a zero-mean error averages out in a sum of many
// pairs. Three steps reach float rounding (|error| < 1.5e-7) and need no centring.
inline constexpr float kNewtonHalf3 = 1.5f;
inline constexpr float kNewtonHalf3Centred = 1.50000191f;  // 1.5 + 16 ulp

DCSGRID_HD std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t i;
  std::memcpy(&i, &x, sizeof i);
  return i;
#endif
}

DCSGRID_HD float bits_float(std::uint32_t i) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(i);
#else
  float x;
  std::memcpy(&x, &i, sizeof x);
  return x;
#endif
}

// Newton steps in scaled form: with w = S·y, the step y ← y·(3 − x·y²)/2 reads w ← w·(3S² − x·w²),
// and then w = 2S³·y. So a step is FMUL, FFMA (−x is a free operand negation), FMUL: no −x/2 to
// compute and no ·½ per step. From S = 1 at the seed: S = 2, 16, 8192 after 1, 2, 3 steps. Only
// powers of two separate these values from the unscaled steps', so they round identically: the
// result is exactly S times the textbook one. The kernel sums S/r and takes the S out at the end.
template <int Steps>
inline constexpr float kNewtonScale = Steps == 2 ? 16.0f : 8192.0f;

// S/√x (S = kNewtonScale<Steps>) for a normal positive x, on the integer and FMA pipes only (no
// MUFU): the seed (SHF, IADD3) and 3 FMA-pipe ops a step.
template <int Steps>
DCSGRID_HD float rsqrt_newton_scaled(float x) {
  static_assert(Steps == 2 || Steps == 3, "2 steps (error ~2e-6, centred) or 3 (float rounding)");
  float w = bits_float(kRsqrtMagic - (float_bits(x) >> 1));
  float scale = 1.0f;  // S before the step (a compile-time constant after unrolling)
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int s = 0; s < Steps; ++s) {
    // 3S² = 2S²·1.5: the centring of the last step's 1.5 carries over exactly.
    const float half3 = (Steps == 2 && s == Steps - 1) ? kNewtonHalf3Centred : kNewtonHalf3;
    w = w * fmaf(-x, w * w, 2.0f * scale * scale * half3);
    scale = 2.0f * scale * scale * scale;
  }
  return w;
}

// 1/√x for a normal positive x, without MUFU.
template <int Steps>
DCSGRID_HD float rsqrt_newton(float x) {
  return rsqrt_newton_scaled<Steps>(x) * (1.0f / kNewtonScale<Steps>);
}

}  // namespace dcsgrid::engine
