// The direct-summation kernel template; included by the cuda_direct_<form>.cu files, each of which
// instantiates it for one pair form and the library's configurations (LibraryDirectConfigs), and by
// bench_cuda_direct, which instantiates it for its tuning sweep.
//
// Gather form: a thread owns points_x × points_y points of one plane and sums every atom into
// registers; no atomics. Atoms stream through shared memory in tiles of kDirectTileAtoms, staged
// as (x, y, dz², q) since the whole block shares one plane. Per atom a thread computes one dx per
// column, one dy² + dz² per row, then per point r² = dx² + (dy² + dz²) (1 FFMA), 1/r on the MUFU
// unit or on the FMA pipe, and q/r into the sum (1 FFMA); the min-distance clamp (1 FMNMX) only for
// the few atoms within the clamp distance of the plane in z (split_near). Padding of the
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

// g(r) of the pair form for a clamped r²: physics.hpp's pair_term<Form> (1/r² and 2^x on the MUFU
// unit, ScalarMath<float>) with 1/r from the FMA pipe when fma_pipe (resolved at compile time
// after unrolling) and from the MUFU unit otherwise; the compiler drops 1/r where the form does
// not use it. Coulomb's FMA-pipe values come scaled by value_scale (S/r from
// rsqrt_newton_scaled; g = 1/r is linear in 1/r): the sums are unscaled once, at the store, rather
// than once per pair.
template <PairForm Form, int NewtonSteps>
__device__ __forceinline__ constexpr float value_scale(bool fma_pipe) {
  return Form == PairForm::coulomb && fma_pipe ? kNewtonScale<NewtonSteps> : 1.0f;
}
template <PairForm Form, int NewtonSteps>
__device__ __forceinline__ float pair_value(float r2, bool fma_pipe, float exp2_kappa) {
  // r² is clamped to min_r2 > 0: no denormal reaches the MUFU.
  const float inv_r = !fma_pipe                    ? mufu<Mufu::rsqrt>(r2)
                      : Form == PairForm::coulomb ? rsqrt_newton_scaled<NewtonSteps>(r2)
                                                  : rsqrt_newton<NewtonSteps>(r2);
  return pair_term<Form>(r2, inv_r, exp2_kappa);
}

// sum + x with the low-order bits lost so far kept in carry (sum − carry is the running total).
__device__ __forceinline__ void kahan_add(float& sum, float& carry, float x) {
  const float y = x - carry;
  const float t = sum + y;
  carry = (t - sum) - y;
  sum = t;
}

// One atom (x, y, dz², q) into the thread's per-point sums: a dx per column, a dy² + dz² per row,
// then per point r² (1 FFMA), the clamp only when Clamp (1 FMNMX), 1/r, and q/r into the sum (1 FFMA).
template <PairForm Form, int NewtonSteps, int FmaPoints, bool Clamp, int PX, int PY>
__device__ __forceinline__ void add_atom(const float4 atom, const float (&px)[PX],
                                         const float (&py)[PY], float (&part)[PX * PY],
                                         float min_r2, float exp2_kappa) {
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
      float r2 = fmaf(dx[p], dx[p], dyz2);
      if constexpr (Clamp) r2 = fmaxf(r2, min_r2);
      part[n] = fmaf(atom.w, pair_value<Form, NewtonSteps>(r2, n < FmaPoints, exp2_kappa), part[n]);
    }
  }
}

// long: hot kernel; the register tile, atom staging and near/far split are tuned as one body (docs/gpu-direct-tuning.md).
template <PairForm Form, int BlockY, int PX, int PY, int FmaPoints, int NewtonSteps, bool SplitNear,
          int MinBlocks, int LanesX>
__global__ void __launch_bounds__(32 * BlockY, MinBlocks > 0 ? MinBlocks : 1)
    direct_kernel(const DirectLaunch a) {
  constexpr int kThreads = 32 * BlockY;
  constexpr int kRowStride = BlockY * (32 / LanesX);  // rows between a thread's rows
  constexpr int kLoads = kDirectTileAtoms / kThreads;  // atoms each thread stages per tile
  constexpr int kPoints = PX * PY;
  // Warp-sized groups of a tile (warp w's load l is group l·BlockY + w); near atoms are listed per
  // group, in tile order, so the clamped pass sums them in a fixed order.
  constexpr int kGroups = kDirectTileAtoms / 32;
  // Atoms per trip of the main loop: the loop's own instructions spread over more atoms.
  constexpr int kUnroll = kPoints <= 16 ? 4 : 2;
  static_assert(kDirectTileAtoms % kThreads == 0);

  __shared__ float4 tile[kDirectTileAtoms];
  __shared__ float4 near_tile[SplitNear ? kDirectTileAtoms : 1];
  __shared__ int near_count[kGroups];
  const int lane = int(threadIdx.x);
  const int tid = threadIdx.y * 32 + lane;
  const int i0 = blockIdx.x * (LanesX * PX) + lane % LanesX;
  const int j0 = blockIdx.y * (kRowStride * PY) + threadIdx.y * (32 / LanesX) + lane / LanesX;
  const float pz = fmaf(float(a.z_begin + int(blockIdx.z)), a.hz, a.z0);

  float px[PX], py[PY];
#pragma unroll
  for (int p = 0; p < PX; ++p) px[p] = fmaf(float(i0 + LanesX * p), a.hx, a.x0);
#pragma unroll
  for (int r = 0; r < PY; ++r) py[r] = fmaf(float(j0 + kRowStride * r), a.hy, a.y0);

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
      float4 atom = make_float4(next[l].x, next[l].y, dz * dz, next[l].w);
      if constexpr (SplitNear) {
        // dz² ≥ min_r2 makes every r² of the plane ≥ min_r2: the clamp is the identity. The
        // others go to the group's near list and leave a q = 0 stand-in (r² ≥ min_r2, finite).
        const bool near = atom.z < a.min_r2;
        const unsigned mask = __ballot_sync(0xffffffffu, near);
        const int group = l * BlockY + int(threadIdx.y);
        if (near) {
          near_tile[group * 32 + __popc(mask & ((1u << lane) - 1u))] = atom;
          atom.z = a.min_r2;
          atom.w = 0.0f;
        }
        if (lane == 0) near_count[group] = __popc(mask);
      }
      tile[l * kThreads + tid] = atom;
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
#pragma unroll kUnroll
    for (int m = 0; m < kDirectTileAtoms; ++m)
      add_atom<Form, NewtonSteps, FmaPoints, !SplitNear>(tile[m], px, py, part, a.min_r2,
                                                         a.exp2_kappa);
    if constexpr (SplitNear) {
      // Block-uniform counts (no divergence); about 1% of atoms for a grid 100 planes deep.
      for (int g = 0; g < kGroups; ++g) {
        const int count = near_count[g];
#pragma unroll 1
        for (int k = 0; k < count; ++k)
          add_atom<Form, NewtonSteps, FmaPoints, true>(near_tile[g * 32 + k], px, py, part,
                                                       a.min_r2, a.exp2_kappa);
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
      // Dividing by a power of two is exact: the same as unscaling every pair.
      const float scale = a.scale / value_scale<Form, NewtonSteps>(n < FmaPoints);
      out[std::size_t(kRowStride * r) * a.pitch_x + LanesX * p] = scale * (total[n] - carry[n]);
    }
}

template <PairForm Form, typename Table, std::size_t I>
void launch_config(const DirectLaunch& launch, dim3 blocks, cudaStream_t stream) {
  constexpr DirectConfig c = Table::configs[I];
  direct_kernel<Form, c.block_y, c.points_x, c.points_y, c.fma_points, c.newton_steps,
                c.split_near == 1, c.min_blocks, c.lanes_x>
      <<<blocks, dim3(32, c.block_y), 0, stream>>>(launch);
  DCSGRID_CHECK_LAUNCH();
}

template <PairForm Form, typename Table, std::size_t... I>
void launch_indexed(std::size_t config, const DirectLaunch& launch, dim3 blocks,
                    cudaStream_t stream, std::index_sequence<I...>) {
  using Launcher = void (*)(const DirectLaunch&, dim3, cudaStream_t);
  static constexpr Launcher table[] = {&launch_config<Form, Table, I>...};
  table[config](launch, blocks, stream);
}

}  // namespace dcsgrid::engine::direct_kernel

namespace dcsgrid::engine {

template <PairForm Form, typename Table>
void launch_direct_form(std::size_t config, const DirectLaunch& launch, dim3 blocks,
                        cudaStream_t stream) {
  static_assert(all_valid(Table::configs), "a direct kernel configuration is out of range");
  direct_kernel::launch_indexed<Form, Table>(config, launch, blocks, stream,
                                             std::make_index_sequence<Table::configs.size()>{});
}

}  // namespace dcsgrid::engine
