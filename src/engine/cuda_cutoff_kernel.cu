// The GPU cutoff kernel (cuda_cutoff.hpp): persistent blocks, one 8×8×8 brick at a time. The
// neighbour rows' atoms are staged in shared memory only when within rc of the brick's points, and
// each thread skips an atom whose distance to its column of 8 points is rc or more, so the 8-point
// loop (issue-bound; the pair count it pays for is in docs/performance.md) runs for fewer atoms.
#include <algorithm>
#include <string>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_cutoff.hpp"
#include "dcsgrid/engine/cutoff_form.hpp"
#include "dcsgrid/prims/block_scan.cuh"

namespace dcsgrid::engine {
namespace {

constexpr int kColumns = kBrickPoints * kBrickPoints;  // threads per block: one per (x, y) column
constexpr int kChunkAtoms = 256;                        // atoms staged in shared memory at a time
constexpr int kRowsPerThread = kMaxNeighbourRows / kColumns;
// Relative widening of rc² for the staging and column tests (float rounding is ~1e-7).
constexpr float kReachSlack = 1.0e-4f;
static_assert(kMaxNeighbourRows % kColumns == 0);

// Everything the kernel reads besides the atoms, passed by value: it lives in the parameter
// (constant) bank, neighbour rows included.
struct CutoffKernelArgs {
  const float4* slots;
  const std::uint32_t* start;  // dynamic bins: bins + 1 offsets; nullptr for fixed capacity
  std::uint32_t capacity;      // fixed capacity
  BinAxis axis[3];
  float first[3], spacing[3];  // the whole grid's point (0, 0, 0) in the frame, and the spacing
  int skipped_planes, planes;  // brick 0's planes below the slab; the slab's planes
  long long pitch_x, rows_per_plane;
  float* out;
  unsigned* brick_counter;
  unsigned total_bricks;
  CutoffCoefficients<float> cut;
  float reach2;  // rc² widened past float rounding: the tests that skip atoms never skip a pair
  float scale, exp2_kappa, min_r2;
  int row_count;
  NeighbourRow rows[kMaxNeighbourRows];
};

// What the pair term reads, held in registers for the whole kernel. Read from the parameter bank,
// ptxas reloads two of them (LDC) for every pair: it rematerialises constants rather than keep
// them in registers, and sees through register copies. Values loaded from shared memory, which the
// kernel writes in between, cannot be reloaded that way.
struct PairParams {
  CutoffCoefficients<float> cut;
  float exp2_kappa, min_r2;
};

__device__ __forceinline__ PairParams pair_params(const CutoffKernelArgs& a, PairParams* shared) {
  if (threadIdx.x == 0) *shared = {a.cut, a.exp2_kappa, a.min_r2};
  __syncthreads();
  return *shared;
}

// The cutoff form's value at squared distance r2 (< rc²), r clamped below at the minimum distance
// (the ftz reciprocal square root: one instruction; r2c ≥ min_r2 > 0).
template <PairForm P, CutoffForm C, int K>
__device__ __forceinline__ float pair_value(float r2, const PairParams& pp) {
  const float r2c = fmaxf(r2, pp.min_r2);
  return cutoff_pair_term<P, C, K>(r2, r2c, mufu<Mufu::rsqrt>(r2c), pp.exp2_kappa, pp.cut);
}

// d2 plus the squared distance from p to the interval [lo, hi].
__device__ __forceinline__ float add_gap2(float d2, float p, float lo, float hi) {
  const float gap = fmaxf(fmaxf(lo - p, p - hi), 0.0f);
  return fmaf(gap, gap, d2);
}

// long: hot kernel; its phases (brick claim, row scan, atom chunks) share shared memory and block barriers, tuned as one.
template <PairForm P, CutoffForm C, int K>
__global__ void __launch_bounds__(kColumns, 1)
    cutoff_kernel(const __grid_constant__ CutoffKernelArgs a) {
  using RowScan = prims::BlockScan<kColumns, kRowsPerThread, int>;
  __shared__ float4 s_atoms[kChunkAtoms];
  __shared__ std::uint32_t s_row_begin[kMaxNeighbourRows];   // first slot of each row
  __shared__ int s_row_prefix[kMaxNeighbourRows + 1];        // atoms before each row
  __shared__ typename RowScan::TempStorage s_scan;
  __shared__ unsigned s_brick;
  __shared__ int s_warp_kept[kColumns / 32];
  __shared__ PairParams s_params;

  const int tx = threadIdx.x % kBrickPoints, ty = threadIdx.x / kBrickPoints;
  const PairParams pp = pair_params(a, &s_params);
  const float rc2 = pp.cut.rc2, reach2 = a.reach2;
  for (;;) {
    if (threadIdx.x == 0) s_brick = atomicAdd(a.brick_counter, 1u);
    __syncthreads();
    const unsigned brick = s_brick;
    if (brick >= a.total_bricks) return;
    const int bricks_x = a.axis[0].bricks, bricks_y = a.axis[1].bricks;
    const int bx = int(brick % unsigned(bricks_x));
    const int by = int(brick / unsigned(bricks_x) % unsigned(bricks_y));
    const int bz = int(brick / (unsigned(bricks_x) * unsigned(bricks_y)));
    const int ax = a.axis[0].anchor(bx), ay = a.axis[1].anchor(by), az = a.axis[2].anchor(bz);
    const int bins_x = a.axis[0].bins, bins_y = a.axis[1].bins;

    // This brick's rows: where each starts in slots and how many atoms it holds, then their
    // offsets in the brick's list of atoms (a block-wide scan).
    int count[kRowsPerThread];
    std::uint32_t begin[kRowsPerThread];
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = threadIdx.x * kRowsPerThread + i;
      count[i] = 0;
      begin[i] = 0;
      if (r < a.row_count) {
        const NeighbourRow row = a.rows[r];
        const std::uint32_t bin0 =
            (std::uint32_t(az + row.dz) * bins_y + std::uint32_t(ay + row.dy)) * bins_x +
            std::uint32_t(ax + row.dx);
        if (a.start) {
          begin[i] = a.start[bin0];
          count[i] = int(a.start[bin0 + row.len] - begin[i]);
        } else {
          begin[i] = bin0 * a.capacity;
          count[i] = int(row.len * a.capacity);
        }
      }
    }
    int total = 0;
    RowScan(s_scan).exclusive_sum(count, total);
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = threadIdx.x * kRowsPerThread + i;
      if (r < a.row_count) {
        s_row_prefix[r] = count[i];
        s_row_begin[r] = begin[i];
      }
    }
    if (threadIdx.x == 0) s_row_prefix[a.row_count] = total;
    __syncthreads();

    // Coordinates from the points' indices in the whole grid, so that a point's distances do not
    // depend on where its slab starts (binning.hpp).
    const int x0 = bx * kBrickPoints, y0 = by * kBrickPoints;
    const int z0 = (a.axis[2].first_brick + bz) * kBrickPoints;
    const auto coordinate = [&a](int axis, int index) {
      return fmaf(float(index), a.spacing[axis], a.first[axis]);
    };
    const float px = coordinate(0, x0 + tx), py = coordinate(1, y0 + ty);
    float pz[kBrickPoints];
#pragma unroll
    for (int k = 0; k < kBrickPoints; ++k) pz[k] = coordinate(2, z0 + k);
    const float half_column = 0.5f * (pz[kBrickPoints - 1] - pz[0]);
    const float pz_mid = pz[0] + half_column;
    // The box of the brick's points.
    const float box_lo[3] = {coordinate(0, x0), coordinate(1, y0), pz[0]};
    const float box_hi[3] = {coordinate(0, x0 + kBrickPoints - 1), coordinate(1, y0 + kBrickPoints - 1),
                             pz[kBrickPoints - 1]};
    float acc[kBrickPoints];
#pragma unroll
    for (int k = 0; k < kBrickPoints; ++k) acc[k] = 0.0f;

    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    int row = 0;  // the row of this thread's next load: slots only move forward
    for (int base = 0; base < total; base += kChunkAtoms) {
      const int candidates = min(kChunkAtoms, total - base);
      // Stage the atoms within rc of the brick's box, keeping their order (so sums are
      // deterministic): a ballot per warp, the warps' counts in shared memory.
      int n = 0;
      for (int first = 0; first < candidates; first += kColumns) {
        const int s = first + int(threadIdx.x);
        float4 atom{};
        bool keep = false;
        if (s < candidates) {
          const int slot = base + s;
          while (slot >= s_row_prefix[row + 1]) ++row;
          atom = __ldg(a.slots + s_row_begin[row] + std::uint32_t(slot - s_row_prefix[row]));
          float d2 = add_gap2(0.0f, atom.x, box_lo[0], box_hi[0]);
          d2 = add_gap2(d2, atom.y, box_lo[1], box_hi[1]);
          keep = add_gap2(d2, atom.z, box_lo[2], box_hi[2]) < reach2;
        }
        const unsigned kept = __ballot_sync(0xffffffffu, keep);
        if (lane == 0) s_warp_kept[warp] = __popc(kept);
        __syncthreads();
        int at = n + __popc(kept & ((1u << lane) - 1u));
        for (int w = 0; w < warp; ++w) at += s_warp_kept[w];
        if (keep) s_atoms[at] = atom;
        for (int w = 0; w < kColumns / 32; ++w) n += s_warp_kept[w];
        __syncthreads();
      }
#pragma unroll 2
      for (int j = 0; j < n; ++j) {
        const float4 atom = s_atoms[j];
        const float dx = px - atom.x, dy = py - atom.y;
        const float dxy2 = fmaf(dx, dx, dy * dy);
        const float dz_out = fmaxf(fabsf(pz_mid - atom.z) - half_column, 0.0f);
        if (fmaf(dz_out, dz_out, dxy2) < reach2) {  // within rc of the column's segment of 8 points
#pragma unroll
          for (int k = 0; k < kBrickPoints; ++k) {
            const float dz = pz[k] - atom.z;
            const float r2 = fmaf(dz, dz, dxy2);
            if (r2 < rc2) acc[k] = fmaf(atom.w, pair_value<P, C, K>(r2, pp), acc[k]);
          }
        }
      }
      __syncthreads();
    }

    const std::size_t x = std::size_t(x0 + tx), y = std::size_t(y0 + ty);
#pragma unroll
    for (int k = 0; k < kBrickPoints; ++k) {
      const int z = bz * kBrickPoints + k - a.skipped_planes;
      if (z >= 0 && z < a.planes)
        a.out[(std::size_t(z) * a.rows_per_plane + y) * a.pitch_x + x] = a.scale * acc[k];
    }
  }
}

template <PairForm P, CutoffForm C, int K>
void launch(const CutoffKernelArgs& args, cudaStream_t stream) {
  int device = 0, sms = 0, per_sm = 0;
  DCSGRID_CUDA_CHECK(cudaGetDevice(&device));
  DCSGRID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  DCSGRID_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cutoff_kernel<P, C, K>, kColumns, 0));
  const unsigned blocks =
      unsigned(std::clamp<long long>(std::max(per_sm, 1) * (long long)sms, 1, args.total_bricks));
  cutoff_kernel<P, C, K><<<blocks, kColumns, 0, stream>>>(args);
  DCSGRID_CHECK_LAUNCH();
}

}  // namespace

SlabLayout cutoff_slab_layout(const GridSpec& grid) {
  const auto whole_bricks = [](std::int64_t n) {
    return (n + kBrickPoints - 1) / kBrickPoints * kBrickPoints;
  };
  // A slab that starts or ends inside a brick computes the brick's other planes too.
  return {whole_bricks(grid.nx()), whole_bricks(grid.ny()), kBrickPoints};
}

void launch_cutoff_kernel(const BinGeometry& g, const DeviceBins& bins, const PairKernel& pair,
                          const CutoffOptions& cutoff, float* out, unsigned* brick_counter,
                          cudaStream_t stream) {
  if (bins.bins != g.bin_count())
    throw Error("cutoff kernel: the bins were filled for another geometry");
  if (g.rows.size() > std::size_t(kMaxNeighbourRows))
    throw Error("cutoff kernel: too many neighbour rows");
  const bool dynamic = bins.capacity == 0;
  if (!dynamic && double(g.neighbour_bins()) * bins.capacity >= 2147483647.0)
    throw Error("cutoff kernel: " + std::to_string(g.neighbour_bins()) + " neighbour bins of " +
                std::to_string(bins.capacity) +
                " atoms are too many for one brick; use a smaller --bin-capacity or 0 (prefix-sum bins)");
  if (g.brick_count() >= std::size_t(UINT32_MAX) - (std::size_t(1) << 20))
    throw Error("cutoff kernel: the slab has too many bricks; use thinner slabs");

  CutoffKernelArgs args{};
  args.slots = bins.slots.data();
  args.start = dynamic ? bins.start.data() : nullptr;
  args.capacity = std::uint32_t(bins.capacity);
  for (int a = 0; a < 3; ++a) {
    args.axis[a] = g.axis[a];
    args.first[a] = g.first_point[a];
    args.spacing[a] = g.spacing[a];
  }
  args.skipped_planes = g.skipped_planes;
  const SlabLayout layout{std::int64_t(g.axis[0].bricks) * kBrickPoints,
                          std::int64_t(g.axis[1].bricks) * kBrickPoints};
  args.planes = int(g.points[2]);
  args.pitch_x = layout.pitch_x;
  args.rows_per_plane = layout.rows_per_plane;
  args.out = out;
  args.brick_counter = brick_counter;
  args.total_bricks = unsigned(g.brick_count());
  args.cut = make_cutoff_params(cutoff).f;
  args.reach2 = args.cut.rc2 * (1.0f + kReachSlack);
  args.scale = pair.scale;
  args.exp2_kappa = pair.exp2_kappa;
  args.min_r2 = pair.min_r2;
  args.row_count = int(g.rows.size());
  std::copy(g.rows.begin(), g.rows.end(), args.rows);

  DCSGRID_CUDA_CHECK(cudaMemsetAsync(brick_counter, 0, sizeof(unsigned), stream));
  with_cutoff_term(pair.form, cutoff.form, cutoff.softening_order, [&](auto p, auto c, auto k) {
    launch<decltype(p)::value, decltype(c)::value, decltype(k)::value>(args, stream);
  });
}

}  // namespace dcsgrid::engine
