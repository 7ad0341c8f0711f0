#include "dcsgrid/engine/pb_cuda.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
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

// The coefficient maps and the boundary made on the device (engine/pb_discretize_cuda.hpp); the
// source (each charge's spline, a few points an atom) made on the host and uploaded.
struct DeviceProblem {
  DeviceBuffer<double> eps_x, eps_y, eps_z, c, f, u;
};

DeviceProblem device_problem(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                             const std::vector<double>* boundary, cudaStream_t stream) {
  const std::size_t n = grid.point_count();
  DeviceProblem d;
  for (DeviceBuffer<double>* b : {&d.eps_x, &d.eps_y, &d.eps_z, &d.c, &d.u}) b->resize(n);
  pb_dielectric_cuda(atoms, grid, options, d.eps_x.data(), d.eps_y.data(), d.eps_z.data(), stream);
  pb_ion_accessibility_cuda(atoms, grid, options, d.c.data(), stream);
  scale_kernel<<<unsigned(std::min<std::size_t>((n + 255) / 256, 65535)), 256, 0, stream>>>(
      d.c.data(), n, kappa_bar_squared(options));
  DCSGRID_CHECK_LAUNCH();
  const std::vector<double> f = pb_source(atoms, grid, options, scale);
  d.f = upload(f, stream);
  if (boundary) {
    std::vector<double> u = *boundary;
    pb_keep_faces(grid, u);
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(d.u.data(), u.data(), d.u.bytes(), cudaMemcpyHostToDevice, stream));
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  } else {
    DCSGRID_CUDA_CHECK(cudaMemsetAsync(d.u.data(), 0, d.u.bytes(), stream));
    pb_boundary_cuda(atoms, grid, options, scale, d.u.data(), stream);
  }
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
  // + the discretisation's marks (a byte a point on each face grid) while the maps are made.
  return (6 * sizeof(double) + 4) * grid.point_count() + multigrid_cuda_bytes(grid.dims, solves_nonlinear(options));
}

PbGridSolution pb_solve_grid_cuda(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                                  const std::vector<double>* boundary) {
  require_device_memory(grid, options);
  const auto start = std::chrono::steady_clock::now();
  const auto since_start = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  cuda::Stream stream;
  DeviceProblem d = device_problem(atoms, grid, options, scale, boundary, stream.get());
  const double problem_seconds = since_start();
  const DevicePbOperator op{grid.dims, grid.spacing, d.eps_x.data(), d.eps_y.data(), d.eps_z.data(), d.c.data()};
  MultigridOptions mg;
  mg.tolerance = options.tolerance;
  mg.max_iterations = options.max_iterations;
  const IonTerm ions = pb_ion_term(options, scale);
  const MultigridReport report =
      solve_multigrid_cuda(op, d.f.data(), d.u.data(), solves_nonlinear(options) ? &ions : nullptr, mg, stream.get());
  PbGridSolution solution;
  solution.potential.resize(grid.point_count());
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(solution.potential.data(), d.u.data(), d.u.bytes(), cudaMemcpyDeviceToHost,
                                     stream.get()));
  stream.synchronize();
  solution.setup_seconds = problem_seconds;
  solution.solve_seconds = since_start() - problem_seconds;
  solution.residual_history = report.residual_history;
  solution.iterations = report.iterations;
  solution.converged = report.converged;
  return solution;
}

std::unique_ptr<DeviceMethod> make_pb_device_method(const PotentialRequest& request, cudaStream_t stream) {
  return std::make_unique<PbDeviceMethod>(request, stream);
}

}  // namespace dcsgrid::engine
