// The direct-summation kernel template; included only by the cuda_direct_<form>.cu files, each of
// which instantiates it for one pair form and every configuration in kDirectConfigs.
//
// Gather form: a thread owns points_x × points_y points of one plane and sums every atom into
// registers; no atomics. Atoms stream through shared memory in tiles of kDirectTileAtoms, staged
// as (x, y, dz², q) since the whole block shares one plane. Per atom a thread computes one dx per
// column, one dy² + dz² per row, then per point r² = dx² + (dy² + dz²) (1 FFMA), the clamp (1
// FMNMX), 1/r on the MUFU unit or on the FMA pipe, and q/r into the sum (1 FFMA). Padding of the
// grid (to whole blocks) and of the atoms (q = 0, far away) removes every per-point and per-atom
// branch. Accuracy: each tile is summed in float, then added to the point's total with Kahan
// compensation.
#pragma once
#include <cuda_runtime.h>

#include <utility>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/cuda_direct.cuh"
#include "dcsgrid/engine/cuda_direct_config.hpp"
#include "dcsgrid/engine/cuda_direct_math.hpp"

namespace dcsgrid::engine::direct_kernel {

// The ftz forms compile to a single MUFU instruction (the non-ftz ones add denormal fix-ups); r² is
// clamped to min_r2 > 0, so no denormal reaches them.
__device__ __forceinline__ float rsqrt_mufu(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float rcp_mufu(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float exp2_mufu(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// g(r) of the pair form for a clamped r²: the same functions as pair_term<Form> in physics.hpp,
// with 1/r from the FMA pipe when fma_pipe (resolved at compile time after unrolling).
template <PairForm Form, int NewtonSteps>
__device__ __forceinline__ float pair_value(float r2, bool fma_pipe, float exp2_kappa) {
  if constexpr (Form == PairForm::distance_dependent) {
    return rcp_mufu(r2);
  } else {
    const float inv_r = fma_pipe ? rsqrt_newton<NewtonSteps>(r2) : rsqrt_mufu(r2);
    if constexpr (Form == PairForm::coulomb)
      return inv_r;
    else
      return exp2_mufu(exp2_kappa * (r2 * inv_r)) * inv_r;
  }
}

// sum + x with the low-order bits lost so far kept in carry (sum − carry is the running total).
__device__ __forceinline__ void kahan_add(float& sum, float& carry, float x) {
  const float y = x - carry;
  const float t = sum + y;
  carry = (t - sum) - y;
  sum = t;
}

template <PairForm Form, int BlockY, int PX, int PY, int FmaPoints, int NewtonSteps>
__global__ void __launch_bounds__(32 * BlockY) direct_kernel(const DirectLaunch a) {
  constexpr int kThreads = 32 * BlockY;
  constexpr int kLoads = kDirectTileAtoms / kThreads;  // atoms each thread stages per tile
  constexpr int kPoints = PX * PY;
  static_assert(kDirectTileAtoms % kThreads == 0);

  __shared__ float4 tile[kDirectTileAtoms];
  const int tid = threadIdx.y * 32 + threadIdx.x;
  const int i0 = blockIdx.x * (32 * PX) + threadIdx.x;
  const int j0 = blockIdx.y * (BlockY * PY) + threadIdx.y;
  const float pz = fmaf(float(a.z_begin + int(blockIdx.z)), a.hz, a.z0);

  float px[PX], py[PY];
#pragma unroll
  for (int p = 0; p < PX; ++p) px[p] = fmaf(float(i0 + 32 * p), a.hx, a.x0);
#pragma unroll
  for (int r = 0; r < PY; ++r) py[r] = fmaf(float(j0 + BlockY * r), a.hy, a.y0);

  float total[kPoints], carry[kPoints];
#pragma unroll
  for (int n = 0; n < kPoints; ++n) total[n] = carry[n] = 0.0f;

  // Registers hold the next tile while the current one is summed.
  float4 next[kLoads];
#pragma unroll
  for (int l = 0; l < kLoads; ++l) next[l] = __ldg(&a.atoms[l * kThreads + tid]);

  for (int t = 0; t < a.tiles; ++t) {
    __syncthreads();  // every thread is done with the previous tile
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      const float dz = pz - next[l].z;
      tile[l * kThreads + tid] = make_float4(next[l].x, next[l].y, dz * dz, next[l].w);
    }
    __syncthreads();
    if (t + 1 < a.tiles) {
      const float4* src = a.atoms + std::size_t(t + 1) * kDirectTileAtoms;
#pragma unroll
      for (int l = 0; l < kLoads; ++l) next[l] = __ldg(&src[l * kThreads + tid]);
    }

    float part[kPoints];
#pragma unroll
    for (int n = 0; n < kPoints; ++n) part[n] = 0.0f;
#pragma unroll 2
    for (int m = 0; m < kDirectTileAtoms; ++m) {
      const float4 atom = tile[m];  // x, y, dz², q
      float dx[PX];
#pragma unroll
      for (int p = 0; p < PX; ++p) dx[p] = px[p] - atom.x;
#pragma unroll
      for (int r = 0; r < PY; ++r) {
        const float dy = py[r] - atom.y;
        const float dyz2 = fmaf(dy, dy, atom.z);
#pragma unroll
        for (int p = 0; p < PX; ++p) {
          const int n = r * PX + p;
          const float r2 = fmaxf(fmaf(dx[p], dx[p], dyz2), a.min_r2);
          part[n] =
              fmaf(atom.w, pair_value<Form, NewtonSteps>(r2, n < FmaPoints, a.exp2_kappa), part[n]);
        }
      }
    }
#pragma unroll
    for (int n = 0; n < kPoints; ++n) kahan_add(total[n], carry[n], part[n]);
  }

  float* out = a.out + (std::size_t(blockIdx.z) * a.rows_per_plane + j0) * a.pitch_x + i0;
#pragma unroll
  for (int r = 0; r < PY; ++r)
#pragma unroll
    for (int p = 0; p < PX; ++p) {
      const int n = r * PX + p;
      out[std::size_t(BlockY * r) * a.pitch_x + 32 * p] = a.scale * (total[n] - carry[n]);
    }
}

template <PairForm Form, std::size_t I>
void launch_config(const DirectLaunch& launch, dim3 blocks, cudaStream_t stream) {
  constexpr DirectConfig c = kDirectConfigs[I];
  direct_kernel<Form, c.block_y, c.points_x, c.points_y, c.fma_points, c.newton_steps>
      <<<blocks, dim3(32, c.block_y), 0, stream>>>(launch);
  DCSGRID_CHECK_LAUNCH();
}

template <PairForm Form, std::size_t... I>
void launch_indexed(std::size_t config, const DirectLaunch& launch, dim3 blocks,
                    cudaStream_t stream, std::index_sequence<I...>) {
  using Launcher = void (*)(const DirectLaunch&, dim3, cudaStream_t);
  static constexpr Launcher table[] = {&launch_config<Form, I>...};
  table[config](launch, blocks, stream);
}

}  // namespace dcsgrid::engine::direct_kernel

namespace dcsgrid::engine {

template <PairForm Form>
void launch_direct_form(std::size_t config, const DirectLaunch& launch, dim3 blocks,
                        cudaStream_t stream) {
  direct_kernel::launch_indexed<Form>(config, launch, blocks, stream,
                                      std::make_index_sequence<kDirectConfigs.size()>{});
}

}  // namespace dcsgrid::engine
