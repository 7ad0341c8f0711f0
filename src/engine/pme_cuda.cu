// Smooth PME's reciprocal part on the GPU (engine/pme_cuda.hpp).
#include <cufft.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/binning.hpp"
#include "cufft_plan.cuh"
#include "dcsgrid/engine/pme_cuda.hpp"
#include "dcsgrid/engine/pme_math.hpp"
#include "dcsgrid/prims/histogram.hpp"
#include "dcsgrid/prims/scan.hpp"

namespace dcsgrid::engine {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t n) { return cuda::blocks_for(n, kThreads); }

// The reciprocal lattice (rows a*, b*, c*) as a kernel argument.
struct Lattice {
  double r[3][3];
};
Lattice lattice_of(const UnitCell& cell) {
  Lattice l{};
  for (int a = 0; a < 3; ++a)
    for (int d = 0; d < 3; ++d) l.r[a][d] = cell.reciprocal[a][d];
  return l;
}

struct MeshDims {
  std::int64_t k1, k2, k3;
  __host__ __device__ std::int64_t points() const { return k1 * k2 * k3; }
};

// The mesh index `step` below first, wrapped (first < k, step < k).
__device__ std::int64_t below(std::int64_t first, int step, std::int64_t k) {
  const std::int64_t i = first - step;
  return i < 0 ? i + k : i;
}

// Throws Error when `bytes` more device memory would not fit in the free memory.
void require_free_memory(std::size_t bytes, const char* what) {
  std::size_t free = 0, total = 0;
  DCSGRID_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (bytes > free)
    throw Error(std::string("pme (cuda): the ") + what + " need " + std::to_string(bytes >> 20) +
                " MiB of device memory, " + std::to_string(free >> 20) +
                " MiB are free; a larger --pme-spacing needs less");
}

// Grows b to n elements (contents lost). Earlier work on stream may still use the old buffer:
// it is waited for first.
template <typename T>
void grow(cuda::DeviceBuffer<T>& b, std::size_t n, cudaStream_t stream) {
  if (b.size() >= n) return;
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  b.resize(n);
}

// Per atom: the mesh cell of its splines' first points (x fastest) and its offsets u − floor(u)
// along each axis (offset[a·n + i]), u = K·f and f the fractional coordinates
// (UnitCell::fractional).
__global__ void key_kernel(const float* x, const float* y, const float* z, std::int64_t n, Lattice l,
                           MeshDims k, std::uint32_t* keys, double* offset) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double p[3] = {x[i], y[i], z[i]};
  const std::int64_t size[3] = {k.k1, k.k2, k.k3};
  std::int64_t first[3];
  for (int a = 0; a < 3; ++a) {
    const double f = p[0] * l.r[a][0] + p[1] * l.r[a][1] + p[2] * l.r[a][2];
    const double u = f * double(size[a]);
    first[a] = bspline_first_point(u, size[a]);
    offset[a * n + i] = u - floor(u);
  }
  keys[i] = std::uint32_t((first[2] * k.k2 + first[1]) * k.k1 + first[0]);
}

__global__ void iota_kernel(std::uint32_t* v, std::int64_t n) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) v[i] = std::uint32_t(i);
}

// For the atom at sorted place t: its charge and its p spline weights along each axis, at
// weights[(t·3 + axis)·p + j] (the weight of the mesh point j below its first point).
__global__ void spline_kernel(const std::uint32_t* order, const float* q, const double* offset,
                              std::int64_t n, int p, double* charge, double* weights) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const std::uint32_t i = order[t];
  charge[t] = q[i];
  for (int a = 0; a < 3; ++a) {
    double w[kMaxBsplineOrder];
    bspline_weights(offset[a * n + i], p, w);
    for (int j = 0; j < p; ++j) weights[(t * 3 + a) * p + j] = w[j];
  }
}

// One thread per mesh point (i, j, k): the atoms whose first points lie in the cells
// (i + dx, j + dy, k + dz), dx, dy, dz < p (wrapped), reach it with weights dx, dy, dz. start: the
// first sorted atom of each cell (cells + 1 entries).
__global__ void spread_kernel(const std::uint32_t* start, const double* charge, const double* weights,
                              int p, MeshDims k, double* mesh) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= k.points()) return;
  const std::int64_t i = idx % k.k1, j = (idx / k.k1) % k.k2, kz = idx / (k.k1 * k.k2);
  double sum = 0;
  for (int dz = 0; dz < p; ++dz) {
    const std::int64_t z = kz + dz < k.k3 ? kz + dz : kz + dz - k.k3;
    for (int dy = 0; dy < p; ++dy) {
      const std::int64_t y = j + dy < k.k2 ? j + dy : j + dy - k.k2;
      const std::uint32_t* row = start + (z * k.k2 + y) * k.k1;
      std::int64_t x = i;
      std::uint32_t t = row[x];
      for (int dx = 0; dx < p; ++dx, ++x) {
        if (x == k.k1) {  // the row wraps: its cell 0 next
          x = 0;
          t = row[0];
        }
        for (const std::uint32_t end = row[x + 1]; t < end; ++t) {
          const double* w = weights + std::int64_t(t) * 3 * p;
          sum += charge[t] * w[2 * p + dz] * w[p + dy] * w[dx];
        }
      }
    }
  }
  mesh[idx] = sum;
}

// The half spectrum times the influence function.
__global__ void influence_kernel(cufftDoubleComplex* spectrum, MeshDims k, std::int64_t half,
                                 const double* moduli1, const double* moduli2, const double* moduli3,
                                 Lattice l, double beta, double volume) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= half * k.k2 * k.k3) return;
  const std::int64_t m1 = idx % half, m2 = (idx / half) % k.k2, m3 = idx / (half * k.k2);
  const double g = pme_ewald_factor(m1, m2, m3, k.k1, k.k2, k.k3, l.r, beta, volume) * moduli1[m1] *
                   moduli2[m2] * moduli3[m3];
  spectrum[idx].x *= g;
  spectrum[idx].y *= g;
}

// Where the output planes of one run lie: output plane kk is plane z_begin + kk of the grid.
// On a skewed grid (GridSpec::skew: bx, cx, cy) row (j, kk) starts shift(j, kk) along x from the
// origin and its y depends on its plane.
struct OutputRun {
  double origin[3], spacing[3], skew[3];
  std::int64_t nx, ny, z_begin, planes;
  __device__ double x(std::int64_t i) const { return origin[0] + double(i) * spacing[0]; }
  __device__ double shift(std::int64_t j, std::int64_t kk) const {
    return double(j) * skew[0] + double(z_begin + kk) * skew[1];
  }
  __device__ double y(std::int64_t j, std::int64_t kk) const {
    return origin[1] + double(j) * spacing[1] + double(z_begin + kk) * skew[2];
  }
  __device__ double z(std::int64_t kk) const { return origin[2] + double(z_begin + kk) * spacing[2]; }
};

// The p-point spline sum along one axis at mesh coordinate u: Σ_j M_p(w + j)·value(first − j).
template <typename Value>
__device__ double spline_sum(double u, int p, std::int64_t k, Value value) {
  double w[kMaxBsplineOrder];
  const std::int64_t first = bspline_first_point(u, k);
  bspline_weights(u - floor(u), p, w);
  double sum = 0;
  for (int j = 0; j < p; ++j) sum += w[j] * value(below(first, j, k));
  return sum;
}

// planes[kk][n] = Σ_j M(u3) mesh[plane first − j][n], n < K1·K2, u3 = K3·z·c*z.
__global__ void fold_planes_kernel(const double* mesh, MeshDims k, int p, double c_star_z, OutputRun o,
                                   double* planes) {
  const std::int64_t plane = k.k1 * k.k2;
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= o.planes * plane) return;
  const std::int64_t n = idx % plane, kk = idx / plane;
  planes[idx] = spline_sum(double(k.k3) * o.z(kk) * c_star_z, p, k.k3,
                           [&](std::int64_t z) { return mesh[z * plane + n]; });
}

// rows[kk][j][x] = Σ_m M(u2) planes[kk][row first − m][x], u2 = K2·(y·b*y + z·b*z).
__global__ void fold_rows_kernel(const double* planes, MeshDims k, int p, double b_star_y,
                                 double b_star_z, OutputRun o, double* rows) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= o.planes * o.ny * k.k1) return;
  const std::int64_t x = idx % k.k1, j = (idx / k.k1) % o.ny, kk = idx / (k.k1 * o.ny);
  const double* plane = planes + kk * k.k1 * k.k2;
  rows[idx] = spline_sum(double(k.k2) * (o.y(j, kk) * b_star_y + o.z(kk) * b_star_z), p, k.k2,
                         [&](std::int64_t y) { return plane[y * k.k1 + x]; });
}

// out[kk][j][i] += scale·(Σ_m M(u1) rows[kk][j][first − m] − background),
// u1 = K1·x·a*x + K1·(shift·a*x + y·a*y + z·a*z) (as the CPU splits it).
__global__ void interpolate_kernel(const double* rows, MeshDims k, int p, Lattice l, OutputRun o,
                                   double scale, double background, std::int64_t pitch,
                                   std::int64_t rows_per_plane, float* out) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= o.planes * o.ny * o.nx) return;
  const std::int64_t i = idx % o.nx, j = (idx / o.nx) % o.ny, kk = idx / (o.nx * o.ny);
  const double* row = rows + (kk * o.ny + j) * k.k1;
  const double u = double(k.k1) * o.x(i) * l.r[0][0] +
                   double(k.k1) * (o.shift(j, kk) * l.r[0][0] + o.y(j, kk) * l.r[0][1] + o.z(kk) * l.r[0][2]);
  const double v = spline_sum(u, p, k.k1, [&](std::int64_t x) { return row[x]; });
  out[(kk * rows_per_plane + j) * pitch + i] += float(scale * (v - background));
}

template <typename T>
cuda::DeviceBuffer<T> upload(const std::vector<T>& host, cudaStream_t stream) {
  cuda::DeviceBuffer<T> d(host.size());
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(d.data(), host.data(), d.bytes(), cudaMemcpyHostToDevice, stream));
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // host goes at return
  return d;
}

}  // namespace

struct PmeReciprocalCuda::Impl {
  UnitCell cell;
  PmeParameters parameters;
  double scale = 0;
  bool background = true;
  double total_charge = 0;
  MeshDims k{};
  std::int64_t half = 0;  // K1/2 + 1: the half spectrum along x
  std::size_t cells = 0;  // K1·K2·K3
  cuda::DeviceBuffer<double> mesh;  // charges, then potential
  cuda::DeviceBuffer<cufftDoubleComplex> spectrum;
  cuda::DeviceBuffer<double> moduli[3];
  FftPlan forward, inverse;
  cuda::DeviceBuffer<unsigned char> fft_work;  // shared by both plans (used one after the other)
  // The atoms of the last frame, sorted by cell.
  DeviceAtomArrays atoms;
  cuda::DeviceBuffer<std::uint32_t> keys, sorted_keys, index, order;  // per atom
  cuda::DeviceBuffer<double> offset;                                 // 3 per atom
  cuda::DeviceBuffer<double> charge, weights;                        // 1 and 3·p per sorted atom
  cuda::DeviceBuffer<std::uint32_t> counts, start;                   // cells + 1
  cuda::DeviceBuffer<unsigned char> scan_work, sort_work;
  cuda::DeviceBuffer<double> folds;  // add_to's plane folds, then row folds

  void plan(cudaStream_t stream);
  void sort_atoms(std::int64_t n, cudaStream_t stream);
};

void PmeReciprocalCuda::Impl::plan(cudaStream_t stream) {
  const std::size_t spectrum_size = std::size_t(half * k.k2 * k.k3);
  require_free_memory(cells * sizeof(double) + spectrum_size * sizeof(cufftDoubleComplex) +
                          2 * (cells + 1) * sizeof(std::uint32_t),
                      "PME mesh, its spectrum and cell offsets");
  mesh.resize(cells);
  spectrum.resize(spectrum_size);
  counts.resize(cells + 1);
  start.resize(cells + 1);
  scan_work.resize(std::max<std::size_t>(prims::scan_cuda_workspace_bytes(cells + 1), 1));
  std::size_t forward_bytes = 0, inverse_bytes = 0;
  for (const FftPlan* plan : {&forward, &inverse})
    DCSGRID_CUFFT_CHECK(cufftSetAutoAllocation(plan->get(), 0));
  // cuFFT's dimensions run slowest first: the mesh is x fastest.
  DCSGRID_CUFFT_CHECK(cufftMakePlan3d(forward.get(), int(k.k3), int(k.k2), int(k.k1), CUFFT_D2Z,
                                      &forward_bytes));
  DCSGRID_CUFFT_CHECK(cufftMakePlan3d(inverse.get(), int(k.k3), int(k.k2), int(k.k1), CUFFT_Z2D,
                                      &inverse_bytes));
  const std::size_t work_bytes = std::max<std::size_t>({forward_bytes, inverse_bytes, 1});
  require_free_memory(work_bytes, "FFT work area");
  fft_work.resize(work_bytes);
  for (const FftPlan* plan : {&forward, &inverse})
    DCSGRID_CUFFT_CHECK(cufftSetWorkArea(plan->get(), fft_work.data()));
  const std::int64_t size[3] = {k.k1, k.k2, k.k3};
  for (int a = 0; a < 3; ++a) moduli[a] = upload(bspline_moduli(size[a], parameters.order), stream);
}

// The atoms uploaded: keys and offsets, each cell's first atom (counts, exclusive scan: start),
// the sorted order (stable radix sort of the keys), then charges and weights in that order.
void PmeReciprocalCuda::Impl::sort_atoms(std::int64_t n, cudaStream_t stream) {
  key_kernel<<<blocks_for(n), kThreads, 0, stream>>>(atoms.x.data(), atoms.y.data(), atoms.z.data(), n,
                                                     lattice_of(cell), k, keys.data(), offset.data());
  DCSGRID_CHECK_LAUNCH();
  prims::histogram_cuda(keys.data(), std::size_t(n), counts.data(), std::uint32_t(cells), stream);
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(counts.data() + cells, 0, sizeof(std::uint32_t), stream));
  prims::scan_cuda<std::uint32_t>(counts.data(), start.data(), cells + 1, prims::ScanKind::exclusive,
                                  scan_work.data(), stream);
  const int key_bits = std::bit_width(std::uint64_t(cells));
  std::size_t sort_bytes = 0;
  DCSGRID_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys.data(), sorted_keys.data(),
                                                     index.data(), order.data(), int(n), 0, key_bits,
                                                     stream));
  grow(sort_work, std::max<std::size_t>(sort_bytes, 1), stream);
  iota_kernel<<<blocks_for(n), kThreads, 0, stream>>>(index.data(), n);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_work.data(), sort_bytes, keys.data(),
                                                     sorted_keys.data(), index.data(), order.data(),
                                                     int(n), 0, key_bits, stream));
  spline_kernel<<<blocks_for(n), kThreads, 0, stream>>>(order.data(), atoms.q.data(), offset.data(), n,
                                                        parameters.order, charge.data(), weights.data());
  DCSGRID_CHECK_LAUNCH();
}

PmeReciprocalCuda::PmeReciprocalCuda(const UnitCell& cell, const PmeParameters& parameters,
                                     double scale, bool background, cudaStream_t stream)
    : impl_(std::make_unique<Impl>()) {
  validate_pme(cell, parameters);
  Impl& m = *impl_;
  m.cell = cell;
  m.parameters = parameters;
  m.scale = scale;
  m.background = background;
  m.k = {std::int64_t(parameters.mesh[0]), std::int64_t(parameters.mesh[1]),
         std::int64_t(parameters.mesh[2])};
  m.half = m.k.k1 / 2 + 1;
  m.cells = std::size_t(m.k.points());
  m.plan(stream);
}

PmeReciprocalCuda::~PmeReciprocalCuda() = default;

const PmeParameters& PmeReciprocalCuda::parameters() const { return impl_->parameters; }

void PmeReciprocalCuda::set_atoms(const AtomSet& atoms, cudaStream_t stream) {
  Impl& m = *impl_;
  const std::size_t n = atoms.size();
  m.total_charge = atoms.total_charge();
  if (n > m.keys.size()) {
    const int p = m.parameters.order;
    require_free_memory((n - m.keys.size()) * (4 * sizeof(float) + 4 * sizeof(std::uint32_t) +
                                               (4 + 3 * std::size_t(p)) * sizeof(double)),
                        "atoms' keys, order and spline weights");
    for (auto* b : {&m.keys, &m.sorted_keys, &m.index, &m.order}) grow(*b, n, stream);
    grow(m.offset, 3 * n, stream);
    grow(m.charge, n, stream);
    grow(m.weights, 3 * std::size_t(p) * n, stream);
  }
  if (n != m.atoms.size()) DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // reallocated below
  upload_atom_arrays(atoms, m.atoms, stream);
  if (n > 0) m.sort_atoms(std::int64_t(n), stream);
  else DCSGRID_CUDA_CHECK(cudaMemsetAsync(m.start.data(), 0, (m.cells + 1) * sizeof(std::uint32_t), stream));
  spread_kernel<<<blocks_for(m.k.points()), kThreads, 0, stream>>>(
      m.start.data(), m.charge.data(), m.weights.data(), m.parameters.order, m.k, m.mesh.data());
  DCSGRID_CHECK_LAUNCH();
  for (const FftPlan* plan : {&m.forward, &m.inverse}) DCSGRID_CUFFT_CHECK(cufftSetStream(plan->get(), stream));
  DCSGRID_CUFFT_CHECK(cufftExecD2Z(m.forward.get(), m.mesh.data(), m.spectrum.data()));
  influence_kernel<<<blocks_for(m.half * m.k.k2 * m.k.k3), kThreads, 0, stream>>>(
      m.spectrum.data(), m.k, m.half, m.moduli[0].data(), m.moduli[1].data(), m.moduli[2].data(),
      lattice_of(m.cell), m.parameters.beta, m.cell.volume);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUFFT_CHECK(cufftExecZ2D(m.inverse.get(), m.spectrum.data(), m.mesh.data()));
}

void PmeReciprocalCuda::add_to(const GridSpec& grid, Slab slab, float* out, SlabLayout layout,
                               cudaStream_t stream) {
  Impl& m = *impl_;
  if (slab.z_begin < 0 || slab.z_end > grid.nz() || slab.z_begin >= slab.z_end)
    throw Error("pme (cuda): slab [" + std::to_string(slab.z_begin) + ", " + std::to_string(slab.z_end) +
                ") outside the grid of " + std::to_string(grid.nz()) + " planes");
  const std::int64_t plane_folds = m.k.k1 * m.k.k2, row_folds = grid.ny() * m.k.k1;
  const std::int64_t run = std::max<std::int64_t>(
      1, std::int64_t(kPmeFoldBytes / (std::size_t(plane_folds + row_folds) * sizeof(double))));
  const std::int64_t most = std::min(run, slab.planes());
  if (m.folds.size() < std::size_t(most * (plane_folds + row_folds))) {
    require_free_memory(std::size_t(most * (plane_folds + row_folds)) * sizeof(double) - m.folds.bytes(),
                        "interpolation's folds");
    grow(m.folds, std::size_t(most * (plane_folds + row_folds)), stream);
  }
  const Lattice l = lattice_of(m.cell);
  const int p = m.parameters.order;
  const double background =
      m.background ? background_potential(m.total_charge, m.parameters.beta, m.cell.volume) : 0.0;
  double* planes = m.folds.data();
  double* rows = planes + most * plane_folds;
  for (std::int64_t z = slab.z_begin; z < slab.z_end; z += run) {
    const OutputRun o{{grid.origin[0], grid.origin[1], grid.origin[2]},
                      {grid.spacing[0], grid.spacing[1], grid.spacing[2]},
                      {grid.skew[0], grid.skew[1], grid.skew[2]},
                      grid.nx(), grid.ny(), z, std::min(run, slab.z_end - z)};
    fold_planes_kernel<<<blocks_for(o.planes * plane_folds), kThreads, 0, stream>>>(
        m.mesh.data(), m.k, p, l.r[2][2], o, planes);
    DCSGRID_CHECK_LAUNCH();
    fold_rows_kernel<<<blocks_for(o.planes * row_folds), kThreads, 0, stream>>>(
        planes, m.k, p, l.r[1][1], l.r[1][2], o, rows);
    DCSGRID_CHECK_LAUNCH();
    float* dst = out + (z - slab.z_begin) * layout.rows_per_plane * layout.pitch_x;
    interpolate_kernel<<<blocks_for(o.planes * o.ny * o.nx), kThreads, 0, stream>>>(
        rows, m.k, p, l, o, m.scale, background, layout.pitch_x, layout.rows_per_plane, dst);
    DCSGRID_CHECK_LAUNCH();
  }
}

std::vector<double> PmeReciprocalCuda::mesh_potential(cudaStream_t stream) const {
  std::vector<double> host(impl_->mesh.size());
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(host.data(), impl_->mesh.data(), impl_->mesh.bytes(),
                                     cudaMemcpyDeviceToHost, stream));
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace dcsgrid::engine
