// The exact Ewald reciprocal sum on the GPU (engine/ewald_cuda.hpp).
#include "dcsgrid/engine/ewald_cuda.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"

namespace dcsgrid::engine {
namespace {

constexpr int kThreads = 256;  // also the atoms or k vectors staged in shared memory at a time

unsigned blocks_for(std::int64_t n) { return cuda::blocks_for(n, kThreads); }

// Four doubles read in one 32-byte load (CUDA's double4 is deprecated for its alignment).
struct alignas(32) Quad {
  double x, y, z, w;
};

// e^{2πi x} = (cos, sin) with x first reduced to [−1/2, 1/2].
__device__ __forceinline__ void phase(double x, double& c, double& s) {
  x -= rint(x);
  sincospi(2.0 * x, &s, &c);
}

// S(k) = Σ_i q_i e^{−2πi m·f_i}, one thread per k vector: vectors[k] = (m1, m2, m3, coefficient),
// atoms[i] = (f1, f2, f3, q).
__global__ void structure_factor_kernel(const Quad* vectors, std::int64_t count, const Quad* atoms,
                                        std::int64_t n, double2* s_of_k) {
  __shared__ Quad tile[kThreads];
  const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const Quad m = k < count ? vectors[k] : Quad{};
  double re = 0, im = 0;
  for (std::int64_t first = 0; first < n; first += kThreads) {
    __syncthreads();
    if (first + threadIdx.x < n) tile[threadIdx.x] = atoms[first + threadIdx.x];
    __syncthreads();
    const int in_tile = int(n - first < kThreads ? n - first : kThreads);
    for (int j = 0; j < in_tile; ++j) {
      const Quad a = tile[j];
      double c, s;
      phase(m.x * a.x + m.y * a.y + m.z * a.z, c, s);
      re = fma(a.w, c, re);
      im = fma(-a.w, s, im);
    }
  }
  if (k < count) s_of_k[k] = double2{re, im};
}

// The grid's points: point (i, j, k) at origin + i·a + j·b + k·c; reciprocal rows a*, b*, c*.
struct PointFrame {
  double origin[3], steps[3][3], reciprocal[3][3];
  std::int64_t nx, ny, z_begin, planes, pitch_x, rows_per_plane;
};

__global__ void reciprocal_kernel(const Quad* vectors, const double2* s_of_k, std::int64_t count, PointFrame g,
                                  double scale, double background, float* out) {
  __shared__ Quad v_tile[kThreads];
  __shared__ double2 s_tile[kThreads];
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool active = idx < g.planes * g.ny * g.nx;
  const std::int64_t i = idx % g.nx, j = (idx / g.nx) % g.ny, kk = idx / (g.nx * g.ny);
  const double ijk[3] = {double(i), double(j), double(g.z_begin + kk)};
  double p[3], f[3];
  for (int d = 0; d < 3; ++d) {
    p[d] = g.origin[d];
    for (int e = 0; e < 3; ++e) p[d] += ijk[e] * g.steps[e][d];
  }
  for (int a = 0; a < 3; ++a) f[a] = p[0] * g.reciprocal[a][0] + p[1] * g.reciprocal[a][1] + p[2] * g.reciprocal[a][2];
  double sum = 0;
  for (std::int64_t first = 0; first < count; first += kThreads) {
    __syncthreads();
    if (first + threadIdx.x < count) {
      v_tile[threadIdx.x] = vectors[first + threadIdx.x];
      s_tile[threadIdx.x] = s_of_k[first + threadIdx.x];
    }
    __syncthreads();
    const int in_tile = int(count - first < kThreads ? count - first : kThreads);
    for (int t = 0; t < in_tile; ++t) {
      const Quad m = v_tile[t];
      const double2 s_k = s_tile[t];
      double c, s;
      phase(m.x * f[0] + m.y * f[1] + m.z * f[2], c, s);
      sum = fma(m.w, s_k.x * c - s_k.y * s, sum);
    }
  }
  if (active) out[(kk * g.rows_per_plane + j) * g.pitch_x + i] += float(scale * (sum - background));
}

}  // namespace

struct EwaldReciprocalCuda::Impl {
  UnitCell cell;
  EwaldParameters parameters;
  double scale = 0;
  bool background = true;
  double total_charge = 0;
  std::int64_t count = 0;
  cuda::DeviceBuffer<Quad> vectors;
  cuda::DeviceBuffer<double2> s_of_k;
  cuda::DeviceBuffer<Quad> atoms;
  std::vector<Quad> host_atoms;  // kept until the copy that reads it has run
};

EwaldReciprocalCuda::EwaldReciprocalCuda(const UnitCell& cell, const EwaldParameters& parameters, double scale,
                                         bool background, cudaStream_t stream)
    : impl_(std::make_unique<Impl>()) {
  Impl& w = *impl_;
  w.cell = cell;
  w.parameters = parameters;
  w.scale = scale;
  w.background = background;
  const EwaldVectors v = ewald_vectors(cell, parameters);
  w.count = std::int64_t(v.m.size());
  std::vector<Quad> host(v.m.size());
  for (std::size_t k = 0; k < host.size(); ++k)
    host[k] = Quad{double(v.m[k][0] - parameters.kmax[0]), double(v.m[k][1] - parameters.kmax[1]),
                      double(v.m[k][2] - parameters.kmax[2]), v.coefficient[k]};
  w.vectors.resize(std::max<std::size_t>(host.size(), 1));
  w.s_of_k.resize(std::max<std::size_t>(host.size(), 1));
  if (!host.empty())
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(w.vectors.data(), host.data(), host.size() * sizeof(Quad),
                                       cudaMemcpyHostToDevice, stream));
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(w.s_of_k.data(), 0, w.s_of_k.bytes(), stream));
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // host goes at return
}

EwaldReciprocalCuda::~EwaldReciprocalCuda() = default;

void EwaldReciprocalCuda::set_atoms(const AtomSet& atoms, cudaStream_t stream) {
  Impl& w = *impl_;
  w.total_charge = atoms.total_charge();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // the last frame's copy has read host_atoms
  w.host_atoms.resize(atoms.size());
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    Vec3 f = w.cell.fractional({atoms.x[i], atoms.y[i], atoms.z[i]});
    for (double& v : f) v -= std::floor(v);
    w.host_atoms[i] = Quad{f[0], f[1], f[2], double(atoms.q[i])};
  }
  if (w.atoms.size() < atoms.size()) w.atoms.resize(atoms.size());
  if (!atoms.empty())
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(w.atoms.data(), w.host_atoms.data(), atoms.size() * sizeof(Quad),
                                       cudaMemcpyHostToDevice, stream));
  if (w.count == 0) return;
  structure_factor_kernel<<<blocks_for(w.count), kThreads, 0, stream>>>(
      w.vectors.data(), w.count, w.atoms.data(), std::int64_t(atoms.size()), w.s_of_k.data());
  DCSGRID_CHECK_LAUNCH();
}

void EwaldReciprocalCuda::add_to(const GridSpec& grid, Slab slab, float* out, SlabLayout layout,
                                 cudaStream_t stream) {
  const Impl& w = *impl_;
  if (slab.planes() == 0) return;
  PointFrame g{};
  const Mat3 steps = grid.steps();
  for (int d = 0; d < 3; ++d) {
    g.origin[d] = grid.origin[d];
    for (int e = 0; e < 3; ++e) {
      g.steps[d][e] = steps[d][e];
      g.reciprocal[d][e] = w.cell.reciprocal[d][e];
    }
  }
  g.nx = grid.nx();
  g.ny = grid.ny();
  g.z_begin = slab.z_begin;
  g.planes = slab.planes();
  g.pitch_x = layout.pitch_x;
  g.rows_per_plane = layout.rows_per_plane;
  const double background =
      w.background ? background_potential(w.total_charge, w.parameters.beta, w.cell.volume) : 0.0;
  reciprocal_kernel<<<blocks_for(g.planes * g.ny * g.nx), kThreads, 0, stream>>>(
      w.vectors.data(), w.s_of_k.data(), w.count, g, w.scale, background, out);
  DCSGRID_CHECK_LAUNCH();
}

}  // namespace dcsgrid::engine
