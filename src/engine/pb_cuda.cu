#include "dcsgrid/engine/pb_cuda.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/binning.hpp"
#include "dcsgrid/engine/pb_discretize.hpp"
#include "dcsgrid/engine/pb_discretize_cuda.hpp"
#include "dcsgrid/engine/pb_multigrid_cuda.hpp"

namespace dcsgrid::engine {
namespace {

using cuda::DeviceBuffer;

void require_device_memory(const GridSpec& grid, const PbOptions& options) {
  const std::size_t need = pb_device_bytes(grid, options);
  std::size_t free = 0, total = 0;
  DCSGRID_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (need <= free) return;
  const double per_point = double(need) / double(grid.point_count());
  const auto side = std::int64_t(std::cbrt(double(free) / per_point));
  throw Error("pb (cuda): the solve on " + grid.describe() + " needs " + std::to_string(need >> 20) +
              " MiB of device memory and " + std::to_string(free >> 20) +
              " MiB are free; the largest grid that fits is about " + std::to_string(side) +
              "³ points (or use --device cpu)");
}

using cuda::upload;

__global__ void scale_kernel(double* v, std::size_t count, double factor) {
  for (std::size_t n = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; n < count; n += std::size_t(gridDim.x) * blockDim.x)
    v[n] *= factor;
}

// f[point] += the point's charge shares, added one by one in their order: thread j takes the run of
// equal sorted keys that starts at j.
__global__ void add_shares_kernel(const std::uint32_t* sorted_points, const std::uint32_t* order,
                                  const double* charge, std::size_t count, double* f) {
  for (std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t point = sorted_points[j];
    if (j > 0 && sorted_points[j - 1] == point) continue;
    double sum = f[point];
    for (std::size_t m = j; m < count && sorted_points[m] == point; ++m) sum += charge[order[m]];
    f[point] = sum;
  }
}

__global__ void scatter_kernel(const std::uint32_t* points, const double* values, std::size_t count, double* out) {
  for (std::size_t n = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; n < count; n += std::size_t(gridDim.x) * blockDim.x)
    out[points[n]] = values[n];
}

unsigned blocks_for(std::size_t count) { return unsigned(std::clamp<std::size_t>((count + 255) / 256, 1, 65535)); }

// The most charge shares device_source holds at once: a chunk of atoms' full stencils.
std::size_t pb_share_capacity(const AtomSet& atoms, const PbOptions& options) {
  return std::max<std::size_t>(std::min(atoms.size(), kPbShareAtoms), 1) * pb_max_shares_per_atom(options.chgm);
}

// The right-hand side, as the CPU's pb_source makes it bit for bit: the atoms' charge shares
// (pb_charge_shares, a few dozen an atom, kPbShareAtoms atoms at a time) uploaded, ordered by point
// with the binning's stable key sort, and added point by point in the CPU's order; then scaled.
void device_source(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale, double* f,
                   cudaStream_t stream) {
  const std::size_t n = grid.point_count();
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(f, 0, n * sizeof(double), stream));
  std::vector<std::uint32_t> points;
  std::vector<double> charge;
  const std::size_t capacity = pb_share_capacity(atoms, options);
  DeviceBuffer<std::uint32_t> d_points(capacity);
  DeviceBuffer<double> d_charge(capacity);
  DeviceKeyOrder sorted;
  for (std::size_t first = 0; first < atoms.size(); first += kPbShareAtoms) {
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // the last chunk's uploads are done with the host arrays
    pb_charge_share_arrays(atoms, first, first + kPbShareAtoms, grid, options.chgm, points, charge);
    const std::size_t count = points.size();
    if (count == 0) continue;
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(d_points.data(), points.data(), count * sizeof(std::uint32_t),
                                       cudaMemcpyHostToDevice, stream));
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(d_charge.data(), charge.data(), count * sizeof(double), cudaMemcpyHostToDevice,
                                       stream));
    stable_key_order(d_points.data(), count, std::bit_width(std::uint64_t(n)), sorted, stream);
    add_shares_kernel<<<blocks_for(count), 256, 0, stream>>>(sorted.sorted_keys.data(), sorted.order.data(),
                                                             d_charge.data(), count, f);
    DCSGRID_CHECK_LAUNCH();
  }
  scale_kernel<<<blocks_for(n), 256, 0, stream>>>(f, n, pb_source_factor(grid, scale));
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// A given boundary's face values (pb_face_points' order) put on the faces of a zeroed u.
void device_faces(const GridSpec& grid, const std::vector<double>& face_values, double* u, cudaStream_t stream) {
  const std::vector<std::size_t> faces = pb_face_points_for(grid, face_values);
  const std::vector<std::uint32_t> points(faces.begin(), faces.end());
  const DeviceBuffer<std::uint32_t> d_points = upload(points, stream);
  const DeviceBuffer<double> d_values = upload(face_values, stream);
  scatter_kernel<<<blocks_for(points.size()), 256, 0, stream>>>(d_points.data(), d_values.data(), points.size(), u);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// The coefficient maps, the source and the boundary, made on the device
// (engine/pb_discretize_cuda.hpp) from the atoms, the charges' shares and the face values.
struct DeviceProblem {
  DeviceBuffer<double> eps_x, eps_y, eps_z, c, f, u;
  double maps_and_source_seconds = 0;  // wall, to the source's end
};

DeviceProblem device_problem(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                             const std::vector<double>* boundary, cudaStream_t stream) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = grid.point_count();
  DeviceProblem d;
  for (DeviceBuffer<double>* b : {&d.eps_x, &d.eps_y, &d.eps_z, &d.c, &d.f, &d.u}) b->resize(n);
  pb_dielectric_cuda(atoms, grid, options, d.eps_x.data(), d.eps_y.data(), d.eps_z.data(), stream);
  pb_ion_accessibility_cuda(atoms, grid, options, d.c.data(), stream);
  scale_kernel<<<blocks_for(n), 256, 0, stream>>>(d.c.data(), n, kappa_bar_squared(options));
  DCSGRID_CHECK_LAUNCH();
  device_source(atoms, grid, options, scale, d.f.data(), stream);
  d.maps_and_source_seconds = seconds_since(start);
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(d.u.data(), 0, d.u.bytes(), stream));
  if (boundary)
    device_faces(grid, *boundary, d.u.data(), stream);
  else
    pb_boundary_cuda(atoms, grid, options, scale, d.u.data(), stream);
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  return d;
}

// Planes of a solved grid, float32 on the device, copied into each slab.
class PbDeviceMethod final : public DeviceMethod {
 public:
  PbDeviceMethod(const PotentialRequest& r, cudaStream_t stream) : grid_(r.grid) {
    const PbResult result = solve_pb(*r.atoms, r.grid, pb_options(r), pb_unit_scale(r), pb_solve_grid_cuda);
    report_ = engine::solver_report(result, r.physics.temperature);
    const std::vector<float> values(result.potential.begin(), result.potential.end());
    solution_.resize(values.size());
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(solution_.data(), values.data(), solution_.bytes(), cudaMemcpyHostToDevice, stream));
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  SlabLayout layout() const override { return {grid_.nx(), grid_.ny(), 1}; }
  std::optional<SolverReport> solver_report() const override { return report_; }
  void enqueue(Slab slab, float* out, cudaStream_t stream) override {
    const std::size_t plane = grid_.plane_size();
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(out, solution_.data() + plane * std::size_t(slab.z_begin),
                                       plane * std::size_t(slab.planes()) * sizeof(float), cudaMemcpyDeviceToDevice,
                                       stream));
  }

 private:
  GridSpec grid_;
  SolverReport report_;
  DeviceBuffer<float> solution_;
};

}  // namespace

std::size_t pb_device_bytes(const GridSpec& grid, const PbOptions& options) {
  // + the discretisation's marks (a byte a point on each face grid) while the maps are made, and a
  // chunk of charge shares with their sort (points, charges, sorted keys, order twice, workspace).
  constexpr std::size_t share_bytes = 4 + 8 + 4 + 2 * 4 + 16;
  return (6 * sizeof(double) + 4) * grid.point_count() + multigrid_cuda_bytes(grid.dims, solves_nonlinear(options)) +
         share_bytes * kPbShareAtoms * pb_max_shares_per_atom(options.chgm);
}

PbGridSolution pb_solve_grid_cuda(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                                  const std::vector<double>* boundary) {
  require_device_memory(grid, options);
  const auto start = std::chrono::steady_clock::now();
  cuda::Stream stream;
  DeviceProblem d = device_problem(atoms, grid, options, scale, boundary, stream.get());
  const double problem_seconds = seconds_since(start);
  const DevicePbOperator op{grid.dims, grid.spacing, d.eps_x.data(), d.eps_y.data(), d.eps_z.data(), d.c.data()};
  MultigridOptions mg;
  mg.tolerance = options.tolerance;
  mg.max_iterations = options.max_iterations;
  const IonTerm ions = pb_ion_term(options, scale);
  const MultigridReport report =
      solve_multigrid_cuda(op, d.f.data(), d.u.data(), solves_nonlinear(options) ? &ions : nullptr, mg, stream.get());
  stream.synchronize();
  const double solved_seconds = seconds_since(start);
  PbGridSolution solution;
  solution.potential.resize(grid.point_count());
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(solution.potential.data(), d.u.data(), d.u.bytes(), cudaMemcpyDeviceToHost,
                                     stream.get()));
  stream.synchronize();
  char stages[200];
  std::snprintf(stages, sizeof stages, "maps and source %.4f s, boundary %.4f s, solver %.4f s, copy back %.4f s",
                d.maps_and_source_seconds, problem_seconds - d.maps_and_source_seconds, solved_seconds - problem_seconds,
                seconds_since(start) - solved_seconds);
  solution.stages = stages;
  solution.setup_seconds = problem_seconds;
  solution.solve_seconds = seconds_since(start) - problem_seconds;
  solution.residual_history = report.residual_history;
  solution.iterations = report.iterations;
  solution.converged = report.converged;
  return solution;
}

std::unique_ptr<DeviceMethod> make_pb_device_method(const PotentialRequest& request, cudaStream_t stream) {
  return std::make_unique<PbDeviceMethod>(request, stream);
}

}  // namespace dcsgrid::engine
