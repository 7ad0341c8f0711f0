// The device's Poisson–Boltzmann solver (engine/pb_multigrid_cuda.hpp, engine/pb_cuda.hpp) against
// manufactured solutions, against the CPU solver on the same problems (the same iterations, the
// same map to the solver's tolerance), against a Born ion's closed form, and through the CUDA
// backend's pb method against the CPU backend's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/engine/pb.hpp"
#include "dcsgrid/engine/pb_cuda.hpp"
#include "dcsgrid/engine/pb_multigrid.hpp"
#include "dcsgrid/engine/pb_multigrid_cuda.hpp"
#include "helpers.hpp"
#include "test_pb_problems.hpp"

using namespace dcsgrid;
using namespace dcsgrid::engine;

namespace {

using test::relative_l2;

cuda::DeviceBuffer<double> upload(const std::vector<double>& host) {
  cuda::DeviceBuffer<double> d(host.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(d.data(), host.data(), d.bytes(), cudaMemcpyHostToDevice));
  return d;
}

std::vector<double> download(const cuda::DeviceBuffer<double>& d) {
  std::vector<double> host(d.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(host.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

// Solves op u = f (or the Newton problem with ions) on the device from the initial u.
MultigridReport solve_on_device(const PbOperator& op, const std::vector<double>& f, std::vector<double>& u,
                                const IonTerm* ions, const MultigridOptions& options) {
  auto ex = upload(op.eps_x), ey = upload(op.eps_y), ez = upload(op.eps_z), c = upload(op.c);
  auto df = upload(f), du = upload(u);
  const DevicePbOperator d{op.dims, op.spacing, ex.data(), ey.data(), ez.data(), c.data()};
  cuda::Stream stream;
  const MultigridReport report = solve_multigrid_cuda(d, df.data(), du.data(), ions, options, stream.get());
  u = download(du);
  return report;
}

using test::boundary_of;

// A random u*, f = A u*: device and CPU must both return u*, in the same number of iterations.
void expect_manufactured_solution(const std::array<std::int64_t, 3>& dims) {
  const test::LinearProblem problem = test::manufactured_problem(dims);
  const PbOperator& op = problem.op;
  const std::vector<double>& exact = problem.exact;
  const std::vector<double>& f = problem.f;
  MultigridOptions options;
  options.tolerance = 1e-11;
  std::vector<double> gpu = boundary_of(exact, dims), cpu = gpu;
  const MultigridReport on_gpu = solve_on_device(op, f, gpu, nullptr, options);
  const MultigridReport on_cpu = solve_multigrid(op, f, cpu, options);
  ASSERT_TRUE(on_gpu.converged) << on_gpu.iterations << " iterations";
  EXPECT_EQ(on_gpu.levels, on_cpu.levels);
  EXPECT_EQ(on_gpu.iterations, on_cpu.iterations);
  ASSERT_EQ(on_gpu.residual_history.size(), on_cpu.residual_history.size());
  for (std::size_t n = 0; n < on_gpu.residual_history.size(); ++n)
    EXPECT_NEAR(on_gpu.residual_history[n], on_cpu.residual_history[n], 1e-6 * on_cpu.residual_history[n]) << n;
  EXPECT_LT(relative_l2(gpu, exact), 1e-8);
  EXPECT_LT(relative_l2(gpu, cpu), 1e-10);
}

constexpr double kScaleKcal = kCoulomb;

}  // namespace

TEST(PbMultigridCuda, ManufacturedSolutionsAsTheCpu) {
  DCSGRID_REQUIRE_GPU();
  expect_manufactured_solution({33, 25, 25});  // 4 levels, a coarsest level of 3 × 4 × 4
  expect_manufactured_solution({65, 33, 49});
  expect_manufactured_solution({12, 9, 10});  // one level: the coarsest solve on the whole grid
  expect_manufactured_solution({40, 36, 30});  // one level of 43,200 points: sweeps by launches
}

TEST(PbMultigridCuda, NewtonManufacturedSolution) {
  DCSGRID_REQUIRE_GPU();
  const std::array<std::int64_t, 3> dims = {33, 33, 17};
  const test::NewtonProblem problem = test::newton_problem(dims);
  const PbOperator& op = problem.op;
  const IonTerm& ions = problem.ions;
  const std::vector<double>& exact = problem.exact;
  const std::vector<double>& f = problem.f;
  MultigridOptions options;
  options.tolerance = 1e-11;
  std::vector<double> gpu = boundary_of(exact, dims), cpu = gpu;
  const MultigridReport on_gpu = solve_on_device(op, f, gpu, &ions, options);
  const MultigridReport on_cpu = solve_newton(op, f, cpu, ions, options);
  ASSERT_TRUE(on_gpu.converged) << on_gpu.iterations << " Newton steps";
  EXPECT_EQ(on_gpu.iterations, on_cpu.iterations);
  EXPECT_LT(relative_l2(gpu, exact), 1e-8);
}

TEST(PbCuda, ProteinMapsEqualTheCpuSolvers) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet atoms = test::read_pqr_with_radii(test::data_file("1d7h-min.pqr"));
  ASSERT_EQ(atoms.size(), 1663u);
  const auto centre = bounding_box(atoms).center();
  const std::array<std::int64_t, 3> dims = {97, 65, 65};
  const double h = 0.75;
  std::array<double, 3> origin;
  for (int d = 0; d < 3; ++d) origin[d] = centre[d] - 0.5 * h * double(dims[d] - 1);
  const GridSpec grid = grid_from_origin(origin, dims, h);
  const double scale = kCoulomb * unit_factor(Unit::kT_per_e, kDefaultTemperature);
  PbOptions salt;
  salt.ions = {{1, 0.15, 2.0}, {-1, 0.15, 2.0}};
  PbOptions nonlinear = salt;
  nonlinear.nonlinear = true;
  PbOptions other = salt;
  other.srfm = PbSurface::mol;
  other.chgm = PbChargeMap::spl4;
  other.bcfl = PbBoundary::sdh;
  for (const PbOptions& options : {salt, nonlinear, other}) {
    const PbResult gpu = solve_pb(atoms, grid, options, scale, pb_solve_grid_cuda);
    const PbResult cpu = solve_pb(atoms, grid, options, scale);
    EXPECT_LT(relative_l2(gpu.potential, cpu.potential), 1e-8) << describe(options);
    EXPECT_NEAR(gpu.energy, cpu.energy, 1e-8 * std::abs(cpu.energy)) << describe(options);
    EXPECT_EQ(gpu.iterations, cpu.iterations) << describe(options);
  }
}

TEST(PbCuda, BornIonSolvationEnergy) {
  DCSGRID_REQUIRE_GPU();
  const double radius = 2.0, q = 1.0, pdie = 2.0;
  const GridSpec grid = grid_from_origin({-10, -10, -10}, {81, 81, 81}, 0.25);
  AtomSet atoms;
  atoms.push_back(0.1, 0.07, 0.03, q, radius);
  PbOptions options;
  options.pdie = pdie;
  options.srad = 0;
  const PbResult solvated = solve_pb(atoms, grid, options, kScaleKcal, pb_solve_grid_cuda);
  options.sdie = pdie;
  const PbResult reference = solve_pb(atoms, grid, options, kScaleKcal, pb_solve_grid_cuda);
  const double born = -(q * q / (2 * radius)) * (1 / pdie - 1 / 78.54) * kCoulomb;
  EXPECT_NEAR(solvated.energy - reference.energy, born, 0.01 * std::abs(born));
}

TEST(PbCuda, BackendMethodEqualsTheCpuBackend) {
  DCSGRID_REQUIRE_GPU();
  AtomSet atoms;
  atoms.push_back(0.3, -0.2, 0.1, 1.0, 1.8);
  atoms.push_back(2.1, 0.4, -0.7, -0.5, 1.5);
  atoms.push_back(-1.4, 1.2, 0.9, -0.5, 1.6);
  PotentialRequest request;
  request.atoms = &atoms;
  request.grid = grid_from_origin({-8, -8, -8}, {33, 33, 33}, 0.5);
  request.method = Method::pb;
  request.physics.dielectric = 2;
  request.physics.ionic_strength = 0.1;
  auto gpu = make_backend("gpu");
  auto cpu = make_backend("cpu");
  ASSERT_TRUE(gpu->supports(Method::pb));
  gpu->slab_bytes = request.grid.plane_size() * sizeof(float) * 5;  // several slabs
  const std::vector<float> on_gpu = compute_grid(*gpu, request), on_cpu = compute_grid(*cpu, request);
  ASSERT_EQ(on_gpu.size(), on_cpu.size());
  double err = 0, norm = 0;
  for (std::size_t n = 0; n < on_cpu.size(); ++n) {
    err += double(on_gpu[n] - on_cpu[n]) * double(on_gpu[n] - on_cpu[n]);
    norm += double(on_cpu[n]) * on_cpu[n];
  }
  EXPECT_LT(std::sqrt(err / norm), 1e-6);
}

TEST(PbCuda, GridTooLargeForTheDeviceNamesTheLargestThatFits) {
  DCSGRID_REQUIRE_GPU();
  AtomSet atoms;
  atoms.push_back(0, 0, 0, 1.0, 2.0);
  const GridSpec grid = grid_from_origin({-1000, -1000, -1000}, {4001, 4001, 4001}, 0.5);
  try {
    solve_pb(atoms, grid, {}, kScaleKcal, pb_solve_grid_cuda);
    FAIL() << "a 4001³ solve cannot fit a device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("largest grid that fits"), std::string::npos) << e.what();
  }
}
