// Multilevel summation's long-range part on the GPU (engine/msm_cuda.hpp).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/binning.hpp"
#include "dcsgrid/engine/msm_cuda.hpp"
#include "dcsgrid/prims/fft.hpp"
#include "cufft_plan.cuh"

#include "dcsgrid/core/clock.hpp"

namespace dcsgrid::engine {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t n) { return cuda::blocks_for(n, kThreads); }

struct Dims3 {
  std::int64_t x, y, z;
  __host__ __device__ std::int64_t points() const { return x * y * z; }
};
Dims3 dims_of(const MsmLevelShape& s) { return {s.n[0], s.n[1], s.n[2]}; }

using cuda::upload;

// Atoms sorted by the level-0 cell of their first node (x fastest), with that node along x and
// their fractions; cell c holds atoms [start[c], start[c + 1]), in input order.
struct BinnedAtoms {
  cuda::DeviceBuffer<int> first_x;
  cuda::DeviceBuffer<float> sx, sy, sz, q;
  cuda::DeviceBuffer<std::uint32_t> start;
};

// One thread per atom: the key of the level-0 cell of its first node (x fastest).
__global__ void cell_keys_kernel(MsmNodeMap map, Dims3 n, const float* x, const float* y, const float* z,
                                 std::size_t count, std::uint32_t* key) {
  const std::size_t a = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (a >= count) return;
  double s;
  const std::int64_t i = map.first_node(0, x[a], s);
  const std::int64_t j = map.first_node(1, y[a], s);
  const std::int64_t k = map.first_node(2, z[a], s);
  key[a] = std::uint32_t((k * n.y + j) * n.x + i);
}

// Atom j of the cell order is atom order[j] of the input: its first node along x, its fractions
// (the host's arithmetic, msm_first_node, so every device bins alike) and its charge.
__global__ void gather_cell_order_kernel(MsmNodeMap map, const std::uint32_t* order, std::size_t count,
                                         const float* x, const float* y, const float* z, const float* q,
                                         int* first_x, float* sx, float* sy, float* sz, float* q_out) {
  const std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= count) return;
  const std::uint32_t a = order[j];
  double s;
  first_x[j] = int(map.first_node(0, x[a], s));
  sx[j] = float(s);
  map.first_node(1, y[a], s);
  sy[j] = float(s);
  map.first_node(2, z[a], s);
  sz[j] = float(s);
  q_out[j] = q[a];
}

// start[c] = the first of the sorted keys not below c (a binary search), c = 0 .. cells.
__global__ void cell_starts_kernel(const std::uint32_t* sorted, std::size_t count, std::size_t cells,
                                   std::uint32_t* start) {
  const std::size_t c = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c > cells) return;
  std::size_t lo = 0, hi = count;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (sorted[mid] < c) lo = mid + 1;
    else hi = mid;
  }
  start[c] = std::uint32_t(lo);
}

// A stable sort of the atoms by cell on the device (asynchronous on stream; `atoms` must stay
// unchanged until the stream is synchronised).
BinnedAtoms bin_atoms(const MsmPlan& plan, const AtomSet& atoms, cudaStream_t stream) {
  const Dims3 n = dims_of(plan.levels[0]);
  const std::size_t count = atoms.size(), cells = std::size_t(n.points());
  if (cells >= std::size_t(UINT32_MAX))
    throw Error("msm (cuda): level 0 has " + std::to_string(cells) +
                " points, more than 2^32 - 1; a larger MSM spacing needs fewer");
  DeviceAtomArrays in;
  upload_atom_arrays(atoms, in, stream);
  cuda::DeviceBuffer<std::uint32_t> keys(count);
  BinnedAtoms bins{cuda::DeviceBuffer<int>(count), cuda::DeviceBuffer<float>(count), cuda::DeviceBuffer<float>(count),
                   cuda::DeviceBuffer<float>(count), cuda::DeviceBuffer<float>(count),
                   cuda::DeviceBuffer<std::uint32_t>(cells + 1)};
  DeviceKeyOrder sorted;
  const MsmNodeMap map = msm_node_map(plan);
  if (count > 0) {
    cell_keys_kernel<<<blocks_for(count), kThreads, 0, stream>>>(map, n, in.x.data(), in.y.data(), in.z.data(),
                                                                  count, keys.data());
    DCSGRID_CHECK_LAUNCH();
    stable_key_order(keys.data(), count, std::max(1, int(std::bit_width(cells - 1))), sorted, stream);
    gather_cell_order_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        map, sorted.order.data(), count, in.x.data(), in.y.data(), in.z.data(), in.q.data(), bins.first_x.data(),
        bins.sx.data(), bins.sy.data(), bins.sz.data(), bins.q.data());
    DCSGRID_CHECK_LAUNCH();
  }
  cell_starts_kernel<<<blocks_for(cells + 1), kThreads, 0, stream>>>(
      count > 0 ? sorted.sorted_keys.data() : nullptr, count, cells, bins.start.data());
  DCSGRID_CHECK_LAUNCH();
  // The temporaries are freed when this returns: the binning must be done by then.
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  return bins;
}

struct AnterpolateArgs {
  const int* first_x;
  const float *sx, *sy, *sz, *q;
  const std::uint32_t* start;
  Dims3 n;
  MsmBasis basis;
};

// One thread per level-0 node: the atoms whose first node lies within p − 1 below it, read as
// one contiguous run per (z, y) cell row.
__global__ void anterpolate_kernel(AnterpolateArgs a, double* charge) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= a.n.points()) return;
  const int p = a.basis.order;
  const std::int64_t i = idx % a.n.x, j = (idx / a.n.x) % a.n.y, k = idx / (a.n.x * a.n.y);
  const std::int64_t x_lo = i - p + 1 > 0 ? i - p + 1 : 0;
  double sum = 0;
  for (std::int64_t fz = k - p + 1 > 0 ? k - p + 1 : 0; fz <= k; ++fz)
    for (std::int64_t fy = j - p + 1 > 0 ? j - p + 1 : 0; fy <= j; ++fy) {
      const std::int64_t row = (fz * a.n.y + fy) * a.n.x;
      for (std::uint32_t t = a.start[row + x_lo]; t < a.start[row + i + 1]; ++t)
        sum += a.q[t] * a.basis.weight(int(i - a.first_x[t]), double(a.sx[t])) *
               a.basis.weight(int(j - fy), double(a.sy[t])) * a.basis.weight(int(k - fz), double(a.sz[t]));
    }
  charge[idx] = sum;
}

// The 1-D operator along one axis (MsmTransfer1D) on the device.
struct DeviceTransfer {
  cuda::DeviceBuffer<int> first, count;
  cuda::DeviceBuffer<double> weight;
  int width = 0;
  std::int64_t n_out = 0;
};
DeviceTransfer upload_transfer(const MsmTransfer1D& op, cudaStream_t stream) {
  return {upload(std::vector<int>(op.first.begin(), op.first.end()), stream), upload(op.count, stream),
          upload(op.weight, stream), op.width, std::int64_t(op.first.size())};
}

__global__ void transfer_kernel(const double* in, double* out, std::int64_t n_in, std::int64_t n_out,
                                std::int64_t inner, std::int64_t total, const int* first,
                                const int* count, const double* weight, int width, bool accumulate) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const std::int64_t t = idx % inner, r = (idx / inner) % n_out, o = idx / (inner * n_out);
  const double* src = in + (o * n_in + first[r]) * inner + t;
  double sum = 0;
  for (int c = 0; c < count[r]; ++c) sum += weight[r * width + c] * src[c * inner];
  out[idx] = accumulate ? out[idx] + sum : sum;
}

// Applies op along axis of in (dims, updated) into out (resized unless accumulating).
void apply_along_axis(const double* in, Dims3& dims, int axis, const MsmTransfer1D& op,
                      cuda::DeviceBuffer<double>& out, bool accumulate, cudaStream_t stream) {
  const DeviceTransfer d = upload_transfer(op, stream);
  const std::int64_t inner = axis == 0 ? 1 : (axis == 1 ? dims.x : dims.x * dims.y);
  const std::int64_t n_in = axis == 0 ? dims.x : (axis == 1 ? dims.y : dims.z);
  (axis == 0 ? dims.x : (axis == 1 ? dims.y : dims.z)) = d.n_out;
  const std::int64_t total = dims.points();
  if (!accumulate) out.resize(std::size_t(total));
  transfer_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
      in, out.data(), n_in, d.n_out, inner, total, d.first.data(), d.count.data(), d.weight.data(),
      d.width, accumulate);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // d's buffers go at return
}

struct StencilArgs {
  const int4* rows;  // dy, dz, x_lo, x_hi
  const int* centre;
  const double* weight;
  int row_count;
  double level_scale;
  Dims3 n;
};

__global__ void stencil_kernel(StencilArgs a, const double* q, double* e) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= a.n.points()) return;
  const std::int64_t x = idx % a.n.x, y = (idx / a.n.x) % a.n.y, z = idx / (a.n.x * a.n.y);
  double sum = 0;
  for (int r = 0; r < a.row_count; ++r) {
    const int4 row = a.rows[r];
    const std::int64_t sy = y + row.x, sz = z + row.y;
    if (sy < 0 || sy >= a.n.y || sz < 0 || sz >= a.n.z) continue;
    const std::int64_t lo = row.z > -x ? row.z : -x;
    const std::int64_t hi = row.w < a.n.x - 1 - x ? row.w : a.n.x - 1 - x;
    const double* src = q + (sz * a.n.y + sy) * a.n.x + x;
    const double* w = a.weight + a.centre[r];
    for (std::int64_t dx = lo; dx <= hi; ++dx) sum += w[dx] * src[dx];
  }
  e[idx] = sum * a.level_scale;
}

__global__ void top_kernel(const double* q, const double* kernel, Dims3 n, double* e) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n.points()) return;
  const std::int64_t x = idx % n.x, y = (idx / n.x) % n.y, z = idx / (n.x * n.y);
  double sum = 0;
  std::int64_t j = 0;
  for (std::int64_t sz = 0; sz < n.z; ++sz)
    for (std::int64_t sy = 0; sy < n.y; ++sy) {
      const double* k = kernel + (abs(z - sz) * n.y + abs(y - sy)) * n.x;
      for (std::int64_t sx = 0; sx < n.x; ++sx, ++j) sum += q[j] * k[abs(x - sx)];
    }
  e[idx] = sum;
}

// Copies the level's n-grid into the corner of a zeroed N-grid (both x fastest).
__global__ void pad_kernel(const double* q, Dims3 n, Dims3 padded, double* out) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n.points()) return;
  const std::int64_t x = idx % n.x, y = (idx / n.x) % n.y, z = idx / (n.x * n.y);
  out[(z * padded.y + y) * padded.x + x] = q[idx];
}

// The stencil (offsets −R..R along each axis) laid out on the zeroed N-grid with offsets wrapped.
__global__ void wrap_stencil_kernel(const double* stencil, int radius, Dims3 padded, double* out) {
  const std::int64_t width = 2 * radius + 1, idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= width * width * width) return;
  const std::int64_t dx = idx % width - radius, dy = (idx / width) % width - radius,
                     dz = idx / (width * width) - radius;
  const std::int64_t x = (dx + padded.x) % padded.x, y = (dy + padded.y) % padded.y, z = (dz + padded.z) % padded.z;
  out[(z * padded.y + y) * padded.x + x] = stencil[idx];
}

// Q ← Q · conj(W) · scale on the half spectrum: the correlation e(i) = Σ_d w(d) q(i + d).
__global__ void correlate_kernel(cufftDoubleComplex* q, const cufftDoubleComplex* w, std::int64_t count,
                                 double scale) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= count) return;
  const cufftDoubleComplex a = q[idx], b = w[idx];
  q[idx] = {(a.x * b.x + a.y * b.y) * scale, (a.y * b.x - a.x * b.y) * scale};
}

// e ← the first n of each axis of the N-grid.
__global__ void crop_kernel(const double* in, Dims3 padded, Dims3 n, double* e) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n.points()) return;
  const std::int64_t x = idx % n.x, y = (idx / n.x) % n.y, z = idx / (n.x * n.y);
  e[idx] = in[(z * padded.y + y) * padded.x + x];
}

// Complex values of a real N-grid's half spectrum (x halved: cuFFT's D2Z layout).
std::size_t half_spectrum_points(Dims3 padded) { return std::size_t((padded.x / 2 + 1) * padded.y * padded.z); }

// Device memory the stencil's convolution by FFT takes on an N-grid: two grids and two half
// spectra, plus cuFFT's work area (bounded here by one more grid).
std::size_t fft_stencil_bytes(Dims3 padded) {
  return 3 * std::size_t(padded.points()) * sizeof(double) + 2 * half_spectrum_points(padded) * sizeof(cufftDoubleComplex);
}

// Level l's stencil sum e(i) = 2^−l Σ_d g_0(d) q(i + d) through cuFFT: the level's charges
// zero-padded to N points along each axis, N ≥ n + R so that no wrapped image of a charge lies
// within the stencil's reach of an output point, and the stencil wrapped on the same grid:
// (2R+1)³ multiply-adds a point become a few FFTs of the level (docs/msm.md has the times).
void stencil_by_fft(const MsmPlan& plan, int level, Dims3 n, Dims3 padded, const double* q, double* e,
                    cudaStream_t stream) {
  const std::size_t grid = std::size_t(padded.points()), half = half_spectrum_points(padded);
  cuda::DeviceBuffer<double> charges(grid), weights(grid);
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(charges.data(), 0, grid * sizeof(double), stream));
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(weights.data(), 0, grid * sizeof(double), stream));
  pad_kernel<<<blocks_for(std::size_t(n.points())), kThreads, 0, stream>>>(q, n, padded, charges.data());
  DCSGRID_CHECK_LAUNCH();
  const cuda::DeviceBuffer<double> stencil = upload(plan.stencil, stream);
  wrap_stencil_kernel<<<blocks_for(plan.stencil.size()), kThreads, 0, stream>>>(stencil.data(), plan.stencil_radius,
                                                                                padded, weights.data());
  DCSGRID_CHECK_LAUNCH();
  cuda::DeviceBuffer<cufftDoubleComplex> charge_spectrum(half), weight_spectrum(half);
  FftPlan forward, inverse;
  // cuFFT's dimensions run slowest first: the grids are x fastest.
  std::size_t work = 0;
  DCSGRID_CUFFT_CHECK(cufftMakePlan3d(forward.get(), int(padded.z), int(padded.y), int(padded.x), CUFFT_D2Z, &work));
  DCSGRID_CUFFT_CHECK(cufftMakePlan3d(inverse.get(), int(padded.z), int(padded.y), int(padded.x), CUFFT_Z2D, &work));
  for (const FftPlan* p : {&forward, &inverse}) DCSGRID_CUFFT_CHECK(cufftSetStream(p->get(), stream));
  DCSGRID_CUFFT_CHECK(cufftExecD2Z(forward.get(), charges.data(), charge_spectrum.data()));
  DCSGRID_CUFFT_CHECK(cufftExecD2Z(forward.get(), weights.data(), weight_spectrum.data()));
  const double scale = 1.0 / (double(grid) * double(std::int64_t(1) << level));
  correlate_kernel<<<blocks_for(half), kThreads, 0, stream>>>(charge_spectrum.data(), weight_spectrum.data(),
                                                               std::int64_t(half), scale);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUFFT_CHECK(cufftExecZ2D(inverse.get(), charge_spectrum.data(), charges.data()));
  crop_kernel<<<blocks_for(std::size_t(n.points())), kThreads, 0, stream>>>(charges.data(), padded, n, e);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Level l's own potential (stencil, or all pairs at the top) into e. The stencil is summed by FFT
// where its grids fit in half of the device's free memory, else point by point.
void level_potential(const MsmPlan& plan, int level, const double* q, cuda::DeviceBuffer<double>& e,
                     cudaStream_t stream) {
  const Dims3 n = dims_of(plan.levels[level]);
  e.resize(std::size_t(n.points()));
  if (level == plan.top()) {
    const cuda::DeviceBuffer<double> kernel = upload(plan.top_kernel, stream);
    top_kernel<<<blocks_for(n.points()), kThreads, 0, stream>>>(q, kernel.data(), n, e.data());
    DCSGRID_CHECK_LAUNCH();
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  // N ≥ n + R keeps wrapped charges out of reach; N ≥ 2R + 1 keeps the stencil's offsets apart.
  const std::int64_t r = plan.stencil_radius;
  const auto size = [r](std::int64_t points) {
    return std::int64_t(prims::fft_good_size(std::size_t(std::max(points + r, 2 * r + 1))));
  };
  const Dims3 padded{size(n.x), size(n.y), size(n.z)};
  std::size_t free = 0, total = 0;
  DCSGRID_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (fft_stencil_bytes(padded) < free / 2) {
    stencil_by_fft(plan, level, n, padded, q, e.data(), stream);
    return;
  }
  const std::vector<MsmStencilRow> rows = msm_stencil_rows(plan);
  std::vector<int4> packed;
  std::vector<int> centre;
  for (const MsmStencilRow& r : rows) {
    packed.push_back(make_int4(r.dy, r.dz, r.x_lo, r.x_hi));
    centre.push_back(int(r.centre));
  }
  const cuda::DeviceBuffer<int4> d_rows = upload(packed, stream);
  const cuda::DeviceBuffer<int> d_centre = upload(centre, stream);
  const cuda::DeviceBuffer<double> d_weight = upload(plan.stencil, stream);
  const StencilArgs args{d_rows.data(), d_centre.data(), d_weight.data(), int(rows.size()),
                         1.0 / double(std::int64_t(1) << level), n};
  stencil_kernel<<<blocks_for(n.points()), kThreads, 0, stream>>>(args, q, e.data());
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
}

__global__ void fold_z_kernel(const double* e, Dims3 n, std::int64_t x0, std::int64_t y0,
                              std::int64_t fx, std::int64_t fy, std::int64_t planes, std::int64_t z_begin,
                              const int* first_z, const double* weight_z, int p, double* folded) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= fx * fy * planes) return;
  const std::int64_t x = idx % fx, y = (idx / fx) % fy, kk = idx / (fx * fy), k = z_begin + kk;
  double sum = 0;
  for (int c = 0; c < p; ++c)
    sum += weight_z[k * p + c] * e[((first_z[k] + c) * n.y + y0 + y) * n.x + x0 + x];
  folded[idx] = sum;
}

struct InterpolateArgs {
  const int *first_x, *first_y;
  const double *weight_x, *weight_y;
  std::int64_t nx, ny, planes, fx, fy, x0, y0, pitch, rows;
  int p;
  double scale;
};

__global__ void interpolate_xy_kernel(InterpolateArgs a, const double* folded, float* out) {
  const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= a.nx * a.ny * a.planes) return;
  const std::int64_t i = idx % a.nx, j = (idx / a.nx) % a.ny, kk = idx / (a.nx * a.ny);
  const double* plane = folded + kk * a.fx * a.fy;
  double sum = 0;
  for (int b = 0; b < a.p; ++b) {
    const double* row = plane + (a.first_y[j] + b - a.y0) * a.fx + (a.first_x[i] - a.x0);
    double part = 0;
    for (int c = 0; c < a.p; ++c) part += a.weight_x[i * a.p + c] * row[c];
    sum += a.weight_y[j * a.p + b] * part;
  }
  out[(kk * a.rows + j) * a.pitch + i] += float(a.scale * sum);
}

// Device memory an atom takes while it is binned (an upper bound): its upload, key and sorted
// copy, and the sort's order and workspace.
constexpr std::size_t kBinningBytesPerAtom = 80;

// Throws Error when the level grids and the binned atoms would not fit in the device's free
// memory: charges and potentials of every level plus two transfer temporaries, in doubles.
void require_device_memory(const MsmPlan& plan, std::size_t atoms) {
  std::size_t level_points = 0;
  for (const MsmLevelShape& s : plan.levels) level_points += s.points();
  const std::size_t need = 4 * sizeof(double) * level_points +
                           sizeof(std::uint32_t) * (plan.levels[0].points() + 1) + kBinningBytesPerAtom * atoms;
  std::size_t free = 0, total = 0;
  DCSGRID_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (need > free)
    throw Error("msm (cuda): the MSM grids need " + std::to_string(need >> 20) + " MiB of device memory, " +
                std::to_string(free >> 20) + " MiB are free; a larger MSM spacing needs less");
}

}  // namespace

MsmLongRangeCuda::MsmLongRangeCuda(const AtomSet& atoms, const GridSpec& output, float scale,
                                   const MsmOptions& options, cudaStream_t stream)
    : output_(output), scale_(scale) {
  // Each stage ends with the stream synchronised, so its seconds are its own.
  LapTimer timer;
  double stencils = 0, prolongation = 0;
  const auto lap = [&](const char* stage) {
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (stage) stages_.push_back({stage, timer.lap()});
  };
  const auto add_lap = [&](double& seconds) {
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
    seconds += timer.lap();
  };
  plan_ = make_msm_plan(atoms, output, options);
  require_device_memory(plan_, atoms.size());
  lap("plan");
  std::vector<cuda::DeviceBuffer<double>> charge(plan_.levels.size());
  {
    const BinnedAtoms bins = bin_atoms(plan_, atoms, stream);
    lap("binning");
    const AnterpolateArgs args{bins.first_x.data(), bins.sx.data(), bins.sy.data(), bins.sz.data(),
                               bins.q.data(), bins.start.data(), dims_of(plan_.levels[0]), plan_.basis};
    charge[0].resize(plan_.levels[0].points());
    anterpolate_kernel<<<blocks_for(plan_.levels[0].points()), kThreads, 0, stream>>>(args, charge[0].data());
    DCSGRID_CHECK_LAUNCH();
    lap("anterpolation");
  }
  for (int l = 0; l < plan_.top(); ++l) {
    Dims3 dims = dims_of(plan_.levels[l]);
    cuda::DeviceBuffer<double> a, b;
    apply_along_axis(charge[l].data(), dims, 0, msm_restriction_1d(plan_, l, 0), a, false, stream);
    apply_along_axis(a.data(), dims, 1, msm_restriction_1d(plan_, l, 1), b, false, stream);
    apply_along_axis(b.data(), dims, 2, msm_restriction_1d(plan_, l, 2), charge[l + 1], false, stream);
  }
  lap("restriction");
  cuda::DeviceBuffer<double> e;
  level_potential(plan_, plan_.top(), charge.back().data(), e, stream);
  add_lap(stencils);
  for (int l = plan_.top() - 1; l >= 0; --l) {
    cuda::DeviceBuffer<double> finer, a, b;
    level_potential(plan_, l, charge[l].data(), finer, stream);
    add_lap(stencils);
    Dims3 dims = dims_of(plan_.levels[l + 1]);
    apply_along_axis(e.data(), dims, 0, msm_prolongation_1d(plan_, l, 0), a, false, stream);
    apply_along_axis(a.data(), dims, 1, msm_prolongation_1d(plan_, l, 1), b, false, stream);
    apply_along_axis(b.data(), dims, 2, msm_prolongation_1d(plan_, l, 2), finer, true, stream);
    e = std::move(finer);
    add_lap(prolongation);
  }
  stages_.push_back({"level stencils", stencils});
  stages_.push_back({"prolongation", prolongation});
  potential_ = std::move(e);
  for (int axis = 0; axis < 3; ++axis) {
    const MsmAxisWeights w = msm_output_weights(plan_, output_, axis);
    footprint_lo_[axis] = w.first.front();
    footprint_n_[axis] = w.first.back() + plan_.options.order - w.first.front();
    first_[axis] = upload(std::vector<int>(w.first.begin(), w.first.end()), stream);
    weight_[axis] = upload(w.weight, stream);
  }
  lap("output weights");
}

void MsmLongRangeCuda::add_to(Slab slab, float* out, SlabLayout layout, cudaStream_t stream) const {
  if (slab.z_begin < 0 || slab.z_end > output_.nz() || slab.z_begin >= slab.z_end)
    throw Error("msm (cuda): slab [" + std::to_string(slab.z_begin) + ", " + std::to_string(slab.z_end) +
                ") outside the grid of " + std::to_string(output_.nz()) + " planes");
  const int p = plan_.options.order;
  const std::int64_t x0 = footprint_lo_[0], fx = footprint_n_[0];
  const std::int64_t y0 = footprint_lo_[1], fy = footprint_n_[1];
  const std::int64_t planes = slab.planes();
  double* folded = nullptr;
  DCSGRID_CUDA_CHECK(cudaMallocAsync(&folded, sizeof(double) * fx * fy * planes, stream));
  fold_z_kernel<<<blocks_for(fx * fy * planes), kThreads, 0, stream>>>(
      potential_.data(), dims_of(plan_.levels[0]), x0, y0, fx, fy, planes, slab.z_begin,
      first_[2].data(), weight_[2].data(), p, folded);
  DCSGRID_CHECK_LAUNCH();
  const InterpolateArgs args{first_[0].data(), first_[1].data(), weight_[0].data(), weight_[1].data(),
                             output_.nx(), output_.ny(), planes, fx, fy, x0, y0, layout.pitch_x,
                             layout.rows_per_plane, p, scale_};
  interpolate_xy_kernel<<<blocks_for(output_.plane_size() * planes), kThreads, 0, stream>>>(args, folded, out);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaFreeAsync(folded, stream));
}

std::vector<double> MsmLongRangeCuda::finest_potential() const {
  std::vector<double> host(potential_.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(host.data(), potential_.data(), potential_.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace dcsgrid::engine
