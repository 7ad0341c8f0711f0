// The few primitive operations the pair functions (physics.hpp), the cutoff forms
// (engine/cutoff_form.hpp) and the MSM softening (softening.hpp) are written in (fused
// multiply-add, max, reciprocal, 1/√, 2^x, and erfc for the Ewald real-space form), one
// specialisation of ScalarMath<T> per scalar type: double (the float64 references), float (host,
// and CUDA device code) and, in src/engine/cpu_simd.hpp, the CPU engine's 8-lane AVX2 vector.
// The forms are templates over T that call only these and + − ×, so every backend evaluates the
// same expression; only how a primitive is computed differs by type.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define DCSGRID_HD __host__ __device__ __forceinline__
#else
#define DCSGRID_HD inline
#endif

// Unrolls the loop that follows in code g++ compiles (it does not unroll short nested loops at
// -O2); what nvcc compiles is left to its own choice.
#if defined(__CUDACC__)
#define DCSGRID_HOST_UNROLL
#else
#define DCSGRID_HOST_UNROLL _Pragma("GCC unroll 16")
#endif

namespace dcsgrid {

template <typename T>
struct ScalarMath;  // specialised per scalar type

template <>
struct ScalarMath<double> {
  static DCSGRID_HD double constant(double c) { return c; }
  static DCSGRID_HD double mul_add(double a, double b, double c) { return a * b + c; }
  static DCSGRID_HD double neg_mul_add(double a, double b, double c) { return c - a * b; }
  static DCSGRID_HD double max(double a, double b) { return a < b ? b : a; }
  static DCSGRID_HD double recip(double x) { return 1.0 / x; }
  static DCSGRID_HD double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
  static DCSGRID_HD double exp2(double x) { return __builtin_exp2(x); }
  static DCSGRID_HD double erfc(double x) {
#if defined(__CUDA_ARCH__)
    return ::erfc(x);
#else
    return __builtin_erfc(x);
#endif
  }
};

#if defined(__CUDACC__)
// One MUFU (special-function unit) instruction, in its ftz form: that compiles to the single
// instruction (the non-ftz forms add denormal fix-ups); callers pass no denormals.
enum class Mufu { rcp, rsqrt, ex2 };
template <Mufu Op>
__device__ __forceinline__ float mufu(float x) {
  float y;
  if constexpr (Op == Mufu::rcp) asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  if constexpr (Op == Mufu::rsqrt) asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  if constexpr (Op == Mufu::ex2) asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
#endif

// On the device the reciprocal and 2^x are the MUFU approximations (ftz: r² ≥ r_min² > 0, so no
// denormal reaches them; relative error ~1e-7); 1/√x stays rsqrtf here, and kernels that split
// it between the MUFU and FMA pipes pass their own (cuda_direct_kernel.cuh).
template <>
struct ScalarMath<float> {
  static DCSGRID_HD float constant(double c) { return float(c); }
  static DCSGRID_HD float mul_add(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
    return fmaf(a, b, c);
#else
    return __builtin_fmaf(a, b, c);
#endif
  }
  static DCSGRID_HD float neg_mul_add(float a, float b, float c) { return mul_add(-a, b, c); }
  static DCSGRID_HD float max(float a, float b) {
#if defined(__CUDA_ARCH__)
    return fmaxf(a, b);
#else
    return a < b ? b : a;
#endif
  }
  static DCSGRID_HD float recip(float x) {
#if defined(__CUDA_ARCH__)
    return mufu<Mufu::rcp>(x);
#else
    return 1.0f / x;
#endif
  }
  static DCSGRID_HD float rsqrt(float x) {
#if defined(__CUDA_ARCH__)
    return rsqrtf(x);
#else
    return 1.0f / __builtin_sqrtf(x);
#endif
  }
  static DCSGRID_HD float exp2(float x) {
#if defined(__CUDA_ARCH__)
    return mufu<Mufu::ex2>(x);
#else
    return __builtin_exp2f(x);
#endif
  }
  // The CUDA math library's erfcf on the device (maximum error 4 ulp), the C library's on the host.
  static DCSGRID_HD float erfc(float x) {
#if defined(__CUDA_ARCH__)
    return erfcf(x);
#else
    return __builtin_erfcf(x);
#endif
  }
};

}  // namespace dcsgrid
