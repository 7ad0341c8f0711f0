// The cutoff sum on a skewed grid's points by a cell list (engine/cuda_cell_list_cutoff.hpp).
#include "dcsgrid/engine/cuda_cell_list_cutoff.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/binning.hpp"
#include "dcsgrid/engine/cutoff_form.hpp"

namespace dcsgrid::engine {
namespace {

constexpr int kThreads = 256;
constexpr double kCubeEdgePerRadius = 0.5;
constexpr std::int64_t kMaxCubes = std::int64_t(1) << 26;

unsigned blocks_for(std::int64_t n) { return cuda::blocks_for(n, kThreads); }

// The cubes, in the frame (positions less the grid origin rounded to float).
struct CubeLattice {
  float lower[3];
  float inv_edge;
  int cubes[3];
  int reach;  // cubes on each side of a point's own within rc
  __host__ __device__ std::uint32_t count() const { return std::uint32_t(cubes[0]) * cubes[1] * cubes[2]; }
};

// The grid's points in the frame: point (i, j, k) at first + i·a + j·b + k·c, in double.
struct FramePoints {
  double first[3];
  double steps[3][3];
  std::int64_t nx, ny, z_begin, planes;
  std::int64_t pitch_x, rows_per_plane;
};

__global__ void cube_keys_kernel(const float* x, const float* y, const float* z, std::int64_t n, CubeLattice l,
                                 float fx, float fy, float fz, std::uint32_t* keys) {
  const std::int64_t a = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (a >= n) return;
  const float p[3] = {x[a] - fx, y[a] - fy, z[a] - fz};
  int c[3];
  for (int d = 0; d < 3; ++d) {
    const float u = (p[d] - l.lower[d]) * l.inv_edge;
    if (!(u >= 0.0f && u < float(l.cubes[d]))) {  // NaN too: beyond rc of every point
      keys[a] = l.count();
      return;
    }
    c[d] = min(int(u), l.cubes[d] - 1);
  }
  keys[a] = (std::uint32_t(c[2]) * l.cubes[1] + std::uint32_t(c[1])) * l.cubes[0] + std::uint32_t(c[0]);
}

__global__ void gather_kernel(const float* x, const float* y, const float* z, const float* q, std::int64_t n,
                              const std::uint32_t* order, float fx, float fy, float fz, float4* slots) {
  const std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const std::uint32_t a = order[j];
  slots[j] = make_float4(x[a] - fx, y[a] - fy, z[a] - fz, q[a]);
}

// start[c] = the first sorted atom of cube c (c ≤ count: start[count] ends the last cube's).
__global__ void cube_starts_kernel(const std::uint32_t* sorted_keys, std::int64_t n, std::uint32_t cubes,
                                   std::uint32_t* start) {
  const std::int64_t c = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c > std::int64_t(cubes)) return;
  std::int64_t lo = 0, hi = n;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (sorted_keys[mid] < std::uint32_t(c)) lo = mid + 1;
    else hi = mid;
  }
  start[c] = std::uint32_t(lo);
}

template <PairForm P, CutoffForm C, int K>
__global__ void points_kernel(const float4* slots, const std::uint32_t* start, CubeLattice l, FramePoints g,
                              CutoffCoefficients<float> cut, float exp2_kappa, float min_r2, double scale,
                              float* out) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= g.planes * g.ny * g.nx) return;
  const std::int64_t i = idx % g.nx, j = (idx / g.nx) % g.ny, kk = idx / (g.nx * g.ny);
  const double ijk[3] = {double(i), double(j), double(g.z_begin + kk)};
  // The point's coordinate as a float plus the float of its remainder: a skewed grid's points are
  // rarely floats, and p − atom then keeps the precision the rounding of p alone would lose.
  float p[3], p_lo[3];
  int c[3];
  for (int d = 0; d < 3; ++d) {
    double v = g.first[d];
    for (int e = 0; e < 3; ++e) v += ijk[e] * g.steps[e][d];
    p[d] = float(v);
    p_lo[d] = float(v - double(p[d]));
    c[d] = min(max(int((p[d] - l.lower[d]) * l.inv_edge), 0), l.cubes[d] - 1);
  }
  const int x_lo = max(c[0] - l.reach, 0), x_hi = min(c[0] + l.reach, l.cubes[0] - 1);
  double sum = 0;
  for (int cz = max(c[2] - l.reach, 0); cz <= min(c[2] + l.reach, l.cubes[2] - 1); ++cz)
    for (int cy = max(c[1] - l.reach, 0); cy <= min(c[1] + l.reach, l.cubes[1] - 1); ++cy) {
      const std::uint32_t row = (std::uint32_t(cz) * l.cubes[1] + std::uint32_t(cy)) * l.cubes[0];
      float row_sum = 0.0f;
      for (std::uint32_t s = start[row + x_lo]; s < start[row + x_hi + 1]; ++s) {
        const float4 a = slots[s];
        const float dx = (p[0] - a.x) + p_lo[0], dy = (p[1] - a.y) + p_lo[1], dz = (p[2] - a.z) + p_lo[2];
        const float r2 = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
        if (r2 >= cut.rc2) continue;
        const float r2c = fmaxf(r2, min_r2);
        row_sum = fmaf(a.w, cutoff_pair_term<P, C, K>(r2, r2c, rsqrtf(r2c), exp2_kappa, cut), row_sum);
      }
      sum += double(row_sum);
    }
  out[(kk * g.rows_per_plane + j) * g.pitch_x + i] = float(scale * sum);
}

class CellListCutoffMethod final : public DeviceMethod {
 public:
  CellListCutoffMethod(const PotentialRequest& request, cudaStream_t stream)
      : grid_(request.grid), pair_(make_pair_kernel(request.physics)), cutoff_(request.cutoff) {
    if (cutoff_.form != CutoffForm::ewald_real)
      throw Error("the GPU cutoff sum on a skewed grid takes the ewald_real form alone (the periodic real part)");
    lay_cubes();
    upload_atom_arrays(*request.atoms, atoms_, stream);
    sort_into_cubes(stream);
  }

  SlabLayout layout() const override { return {grid_.nx(), grid_.ny(), 1}; }

  void enqueue(Slab slab, float* out, cudaStream_t stream) override {
    if (slab.planes() == 0) return;
    FramePoints g{};
    const Mat3 steps = grid_.steps();
    for (int d = 0; d < 3; ++d) {
      g.first[d] = grid_.origin[d] - double(frame_[d]);
      for (int e = 0; e < 3; ++e) g.steps[e][d] = steps[e][d];
    }
    g.nx = grid_.nx();
    g.ny = grid_.ny();
    g.z_begin = slab.z_begin;
    g.planes = slab.planes();
    g.pitch_x = grid_.nx();
    g.rows_per_plane = grid_.ny();
    const CutoffCoefficients<float> cut = make_cutoff_params(cutoff_).f;
    const std::int64_t points = g.planes * g.ny * g.nx;
    with_cutoff_term(pair_.form, cutoff_.form, cutoff_.softening_order, [&](auto p, auto c, auto k) {
      if constexpr (decltype(c)::value == CutoffForm::ewald_real) {
        points_kernel<decltype(p)::value, decltype(c)::value, decltype(k)::value>
            <<<blocks_for(points), kThreads, 0, stream>>>(slots_.data(), start_.data(), lattice_, g, cut,
                                                          pair_.exp2_kappa, pair_.min_r2, pair_.scale_d, out);
        DCSGRID_CHECK_LAUNCH();
      }
    });
  }

  double finish_on_host(Slab, float*) override { return 0.0; }

 private:
  // Cubes of edge rc/2 over the grid's box grown by rc (wider when there would be too many).
  void lay_cubes() {
    const Box box = grid_.bounds();
    const double rc = cutoff_.radius;
    double edge = kCubeEdgePerRadius * rc;
    const auto cubes_along = [&](int d) { return std::ceil((box.hi[d] - box.lo[d] + 2 * rc) / edge) + 1; };
    while (cubes_along(0) * cubes_along(1) * cubes_along(2) > double(kMaxCubes)) edge *= 2;
    for (int d = 0; d < 3; ++d) {
      frame_[d] = float(grid_.origin[d]);
      lattice_.lower[d] = float(box.lo[d] - rc - double(frame_[d]));
      lattice_.cubes[d] = int(cubes_along(d));
    }
    lattice_.inv_edge = float(1.0 / edge);
    lattice_.reach = int(std::ceil(rc / edge));
  }

  void sort_into_cubes(cudaStream_t stream) {
    const std::int64_t n = std::int64_t(atoms_.size());
    const std::uint32_t cubes = lattice_.count();
    start_.resize(std::size_t(cubes) + 1);
    keys_.resize(std::size_t(std::max<std::int64_t>(n, 1)));
    slots_.resize(std::size_t(std::max<std::int64_t>(n, 1)));
    if (n == 0) {
      DCSGRID_CUDA_CHECK(cudaMemsetAsync(start_.data(), 0, start_.bytes(), stream));
      return;
    }
    cube_keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(atoms_.x.data(), atoms_.y.data(), atoms_.z.data(), n,
                                                             lattice_, frame_[0], frame_[1], frame_[2], keys_.data());
    DCSGRID_CHECK_LAUNCH();
    stable_key_order(keys_.data(), std::size_t(n), std::bit_width(std::uint64_t(cubes)), sorted_, stream);
    gather_kernel<<<blocks_for(n), kThreads, 0, stream>>>(atoms_.x.data(), atoms_.y.data(), atoms_.z.data(),
                                                          atoms_.q.data(), n, sorted_.order.data(), frame_[0],
                                                          frame_[1], frame_[2], slots_.data());
    DCSGRID_CHECK_LAUNCH();
    cube_starts_kernel<<<blocks_for(std::int64_t(cubes) + 1), kThreads, 0, stream>>>(sorted_.sorted_keys.data(), n,
                                                                                    cubes, start_.data());
    DCSGRID_CHECK_LAUNCH();
  }

  GridSpec grid_;
  PairKernel pair_;
  CutoffOptions cutoff_;
  float frame_[3]{};
  CubeLattice lattice_{};
  DeviceAtomArrays atoms_;
  DeviceKeyOrder sorted_;
  cuda::DeviceBuffer<std::uint32_t> keys_, start_;
  cuda::DeviceBuffer<float4> slots_;
};

}  // namespace

std::unique_ptr<DeviceMethod> make_cell_list_cutoff_method(const PotentialRequest& request, cudaStream_t stream) {
  return std::make_unique<CellListCutoffMethod>(request, stream);
}

}  // namespace dcsgrid::engine
