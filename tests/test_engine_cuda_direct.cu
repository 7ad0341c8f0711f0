// What is particular to the CUDA direct-summation engine: the FMA-pipe rsqrt, its argument checks
// and local frame, each compiled kernel configuration, a million atoms, and the backend against
// itself (slabs, devices). Accuracy of every backend and method against float64 and closed forms
// is in test_engine_conformance.cpp. GPU tests skip without a device; the FMA-pipe rsqrt and the
// argument checks run on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_backend.hpp"
#include "dcsgrid/engine/cuda_direct.cuh"
#include "dcsgrid/engine/cuda_direct_math.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "helpers.hpp"

namespace dcsgrid::engine {
namespace {

constexpr const auto& kLibrary = LibraryDirectConfigs::configs;  // the compiled configurations

// The three pair forms, each with a non-default unit, dielectric or clamp so that the scale and
// the min-distance clamp are exercised too.
struct FormCase {
  std::string name;
  Physics physics;
};
std::vector<FormCase> form_cases() {
  Physics coulomb;
  coulomb.dielectric = 2.0;
  coulomb.unit = Unit::kcal_per_mol_e;
  Physics ddd;
  ddd.distance_dependent = true;
  ddd.unit = Unit::kJ_per_mol_e;
  ddd.min_distance = 0.8;
  Physics dh;
  dh.dielectric = 78.5;
  dh.ionic_strength = 0.15;
  return {{"coulomb", coulomb}, {"ddd", ddd}, {"debye-huckel", dh}};
}

PotentialRequest make_request(const AtomSet& atoms, const GridSpec& grid, const Physics& physics) {
  PotentialRequest r;
  r.atoms = &atoms;
  r.grid = grid;
  r.physics = physics;
  return r;
}

// 37×21×13: no axis is a multiple of any block tile.
GridSpec odd_grid() {
  return grid_from_origin({-3.1, 2.7, -1.3}, {37, 21, 13}, 0.45);
}

// Random atoms around and inside the grid, plus a few exactly on grid points (clamped pairs).
AtomSet atoms_around(const GridSpec& grid, std::size_t n, std::uint64_t seed) {
  const auto far = grid.far_corner();
  const Box box{{grid.origin[0] - 3, grid.origin[1] - 3, grid.origin[2] - 3},
                {far[0] + 3, far[1] + 3, far[2] + 3}};
  AtomSet atoms = test::random_atoms(n, box, seed);
  for (std::int64_t k : {std::int64_t(0), grid.nz() / 2, grid.nz() - 1}) {
    const auto p = grid.position(grid.nx() / 3, grid.ny() / 2, k);
    atoms.push_back(p[0], p[1], p[2], 0.9);
  }
  return atoms;
}

// One launch of config over the whole grid, copied back without the padding.
std::vector<float> gpu_direct(const DirectConfig& config, const AtomSet& atoms,
                              const GridSpec& grid, const PairKernel& kernel) {
  cuda::Stream stream;
  const DeviceAtoms device_atoms = upload_atoms(atoms, grid, stream.get());
  const SlabLayout layout = direct_layout(config, grid);
  cuda::DeviceBuffer<float> out(std::size_t(layout.pitch_x) * layout.rows_per_plane * grid.nz());
  launch_direct(config, kernel, device_atoms, grid, {0, grid.nz()}, out.data(), stream.get());
  std::vector<float> padded(out.size());
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(padded.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost,
                                     stream.get()));
  stream.synchronize();
  std::vector<float> result(grid.point_count());
  for (std::int64_t k = 0; k < grid.nz(); ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      std::copy_n(padded.begin() + ((k * layout.rows_per_plane + j) * layout.pitch_x), grid.nx(),
                  result.begin() + std::ptrdiff_t(grid.index(0, j, k)));
  return result;
}

std::vector<float> planes_of(const std::vector<float>& grid_values, const GridSpec& grid,
                             std::int64_t z_begin, std::int64_t z_end) {
  const auto plane = std::ptrdiff_t(grid.plane_size());
  return std::vector<float>(grid_values.begin() + z_begin * plane,
                            grid_values.begin() + z_end * plane);
}

// ---- host: the FMA-pipe reciprocal square root (bit-identical to the device's) ----

struct RsqrtError {
  double max_abs = 0, mean = 0;
};
template <int Steps>
RsqrtError rsqrt_newton_error() {
  RsqrtError e;
  std::size_t n = 0;
  // Every 61st float from r² = 2^-6 to 2^16 Å², every exponent and mantissa region.
  for (std::uint32_t i = float_bits(0.015625f); i < float_bits(65536.0f); i += 61, ++n) {
    const float x = bits_float(i);
    const double exact = 1.0 / std::sqrt(double(x));
    const double rel = (double(rsqrt_newton<Steps>(x)) - exact) / exact;
    e.max_abs = std::max(e.max_abs, std::abs(rel));
    e.mean += rel;
  }
  e.mean /= double(n);
  return e;
}

// The kernel's scaled steps (w = S·y) against the textbook form y ← y·(1.5 − (x/2)·y²), written out
// here: powers of two apart, so they must agree to the bit.
template <int Steps>
void expect_scaled_steps_equal_textbook_steps() {
  for (std::uint32_t i = float_bits(0.015625f); i < float_bits(65536.0f); i += 997) {
    const float x = bits_float(i);
    float y = bits_float(kRsqrtMagic - (i >> 1));
    for (int s = 0; s < Steps; ++s)
      y = y * std::fma(-0.5f * x, y * y, s == 1 && Steps == 2 ? kNewtonHalf3Centred : 1.5f);
    ASSERT_EQ(rsqrt_newton_scaled<Steps>(x), kNewtonScale<Steps> * y) << "x = " << x;
    ASSERT_EQ(rsqrt_newton<Steps>(x), y) << "x = " << x;
  }
}

TEST(CudaDirectMath, ScaledNewtonStepsRoundLikeTheTextbookSteps) {
  expect_scaled_steps_equal_textbook_steps<2>();
  expect_scaled_steps_equal_textbook_steps<3>();
}

TEST(CudaDirectMath, TwoNewtonStepsAreCentredWithin3e6) {
  const RsqrtError e = rsqrt_newton_error<2>();
  std::cout << "rsqrt_newton<2>: max |rel error| " << e.max_abs << ", mean " << e.mean << "\n";
  EXPECT_LT(e.max_abs, 3.0e-6);
  EXPECT_LT(std::abs(e.mean), 1.0e-7);  // centred: uncentred two steps average −1.9e-6
}

TEST(CudaDirectMath, ThreeNewtonStepsReachFloatRounding) {
  const RsqrtError e = rsqrt_newton_error<3>();
  std::cout << "rsqrt_newton<3>: max |rel error| " << e.max_abs << ", mean " << e.mean << "\n";
  EXPECT_LT(e.max_abs, 2.0e-7);
}

// ---- host: arguments and frame ----

TEST(CudaDirectHost, UnknownConfigurationIsRejectedBeforeAnyDeviceWork) {
  const DirectConfig not_compiled{3, 3, 3, 1, 2};
  ASSERT_EQ(std::find(kLibrary.begin(), kLibrary.end(), not_compiled),
            kLibrary.end());
  const DeviceAtoms none;
  try {
    launch_direct(not_compiled, PairKernel{}, none, odd_grid(), {0, 1}, nullptr, nullptr);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(not_compiled.name()), std::string::npos) << e.what();
  }
}

// The warp width along x follows the grid: the narrowest padding wins, the wider warp on a tie, and
// only the width changes (the per-thread shape stays the measured default).
TEST(CudaDirectHost, WarpWidthIsFittedToTheGrid) {
  auto config_for = [](std::int64_t nx, std::int64_t ny) {
    return direct_config_for(grid_from_origin({0, 0, 0}, {nx, ny, 4}, 0.5));
  };
  EXPECT_EQ(config_for(256, 256), kDefaultDirectConfig);  // a multiple of every tile
  EXPECT_EQ(config_for(128, 117), kDefaultDirectConfig);
  // 1HPV's 133×117 plane: 256×128 with 128-point rows, 192×128 with 64, 160×128 with 32.
  EXPECT_EQ(config_for(133, 117).lanes_x, 8);
  // 190×32 pads to 256×32 at width 32, to 192×32 at 16 and to 192×64 at 8: 16 wins.
  EXPECT_EQ(config_for(190, 32).lanes_x, 16);
  for (const auto [nx, ny] : {std::pair{133, 117}, {37, 21}, {1, 1}, {300, 7}}) {
    DirectConfig c = config_for(nx, ny);
    EXPECT_NE(std::find(kLibrary.begin(), kLibrary.end(), c), kLibrary.end());
    c.lanes_x = kDefaultDirectConfig.lanes_x;
    EXPECT_EQ(c, kDefaultDirectConfig);
  }
}

TEST(CudaDirectHost, BadDeviceListsAreErrors) {
  EXPECT_THROW(make_cuda_backend({99}), Error);
  EXPECT_THROW(make_cuda_backend({-1}), Error);
  EXPECT_THROW(make_cuda_backend({0, 0}), Error);  // repeated (or no device at all)
}

TEST(CudaDirectHost, LocalFrameIsCentredOnAGridPointAndPaddingHasNoCharge) {
  const GridSpec grid = odd_grid();
  const LocalFrame f = local_frame(grid);
  const auto c = grid.position(18, 10, 6);  // the middle point of 37×21×13
  for (int a = 0; a < 3; ++a) EXPECT_NEAR(f.centre[a], c[a], 1e-12);
  EXPECT_FLOAT_EQ(f.x0, float(-18 * 0.45));
  const AtomSet atoms = atoms_around(grid, 10, 1);
  const std::vector<float4> local = atoms_in_frame(atoms, f, 256);
  ASSERT_EQ(local.size(), 256u);
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    EXPECT_NEAR(local[i].x + f.centre[0], atoms.x[i], 1e-5);
    EXPECT_NEAR(local[i].z + f.centre[2], atoms.z[i], 1e-5);
    EXPECT_EQ(local[i].w, atoms.q[i]);
  }
  for (std::size_t i = atoms.size(); i < local.size(); ++i) EXPECT_EQ(local[i].w, 0.0f);
}

// ---- GPU: accuracy ----

TEST(CudaDirect, EveryFormAndCompiledConfigurationMatchesFloat64OnAnOddGrid) {
  DCSGRID_REQUIRE_GPU();
  const GridSpec grid = odd_grid();
  const AtomSet atoms = atoms_around(grid, 3000, 7);
  for (const FormCase& form : form_cases()) {
    const PairKernel kernel = make_pair_kernel(form.physics);
    const std::vector<double> ref = test::reference_direct(atoms, grid, kernel);
    for (const DirectConfig& config : kLibrary) {
      const double err = test::relative_l2(gpu_direct(config, atoms, grid, kernel), ref);
      std::cout << form.name << " [" << config.name() << "]: rel L2 " << err << "\n";
      EXPECT_LT(err, 1e-5) << form.name << " [" << config.name() << "]";
    }
  }
}

TEST(CudaDirect, AMillionAtomsStayWithin1e5OfFloat64) {
  DCSGRID_REQUIRE_GPU();
  // A solvated-system-sized cloud (10^6 atoms in (100 Å)³), a small grid in its middle; the float64
  // reference is taken on the first and last planes only, to keep it cheap.
  const AtomSet atoms = test::random_atoms(1000000, Box{{-50, -50, -50}, {50, 50, 50}}, 11);
  const GridSpec grid = grid_from_origin({-10, -7, -3}, {41, 29, 7}, 0.5);
  const PairKernel kernel = make_pair_kernel(Physics{});
  const std::vector<double> first = test::reference_direct(atoms, grid, kernel, 0, 1);
  const std::vector<double> last =
      test::reference_direct(atoms, grid, kernel, grid.nz() - 1, grid.nz());
  for (const DirectConfig& config : kLibrary) {
    const std::vector<float> v = gpu_direct(config, atoms, grid, kernel);
    const double e0 = test::relative_l2(planes_of(v, grid, 0, 1), first);
    const double e1 = test::relative_l2(planes_of(v, grid, grid.nz() - 1, grid.nz()), last);
    std::cout << "10^6 atoms [" << config.name() << "]: rel L2 " << e0 << ", " << e1 << "\n";
    EXPECT_LT(std::max(e0, e1), 1e-5) << config.name();
  }
}

TEST(CudaDirect, ManySmallSlabsEqualOneSlabExactly) {
  DCSGRID_REQUIRE_GPU();
  const GridSpec grid = grid_from_origin({-5, -4, -6}, {45, 30, 23}, 0.6);
  const AtomSet atoms = atoms_around(grid, 1500, 3);
  const PotentialRequest request = make_request(atoms, grid, Physics{});
  auto whole = make_cuda_backend({0});
  const std::vector<float> reference = compute_grid(*whole, request);

  auto sliced = make_cuda_backend({0});
  sliced->slab_bytes = 3 * grid.plane_size() * sizeof(float);  // three planes a slab: 8 slabs
  std::vector<float> got(grid.point_count(), std::numeric_limits<float>::quiet_NaN());
  std::vector<Slab> seen;
  std::vector<double> fractions;
  const RunStats stats = sliced->run(
      request,
      [&](Slab s, const float* data) {
        seen.push_back(s);
        std::copy(data, data + grid.plane_size() * s.planes(),
                  got.begin() + std::ptrdiff_t(grid.plane_size() * s.z_begin));
      },
      [&](double f) { fractions.push_back(f); });
  ASSERT_EQ(seen.size(), 8u);
  for (std::size_t s = 0; s < seen.size(); ++s) {
    EXPECT_EQ(seen[s].z_begin, s == 0 ? 0 : seen[s - 1].z_end) << "slabs out of z order";
    EXPECT_LE(seen[s].planes(), 3);
  }
  EXPECT_EQ(seen.back().z_end, grid.nz());
  ASSERT_FALSE(fractions.empty());
  EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
  EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
  EXPECT_EQ(std::memcmp(got.data(), reference.data(), got.size() * sizeof(float)), 0);
  ASSERT_EQ(stats.devices.size(), 1u);
  EXPECT_EQ(stats.devices[0].slabs, 8);
  EXPECT_GT(stats.devices[0].setup_seconds, 0.0);
  EXPECT_GT(stats.devices[0].compute_seconds, 0.0);
  EXPECT_NE(stats.device.find("GPU 0"), std::string::npos) << stats.device;
}

TEST(CudaDirect, ComputeOfAPartialSlabEqualsThosePlanesOfTheWholeGrid) {
  DCSGRID_REQUIRE_GPU();
  const GridSpec grid = odd_grid();
  const AtomSet atoms = atoms_around(grid, 800, 9);
  const PotentialRequest request = make_request(atoms, grid, Physics{});
  auto backend = make_cuda_backend({0});
  const std::vector<float> whole = compute_grid(*backend, request);
  std::vector<float> part(grid.plane_size() * 7);
  backend->compute(request, {4, 11}, part.data());
  EXPECT_EQ(part, planes_of(whole, grid, 4, 11));
  EXPECT_THROW(backend->compute(request, {10, 14}, part.data()), Error);
}

TEST(CudaDirect, TwoGpusEqualOneGpuExactly) {
  DCSGRID_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "one CUDA device: multi-GPU test skipped";
  const GridSpec grid = grid_from_origin({-5, -4, -6}, {45, 30, 23}, 0.6);
  const AtomSet atoms = atoms_around(grid, 2000, 4);
  const PotentialRequest request = make_request(atoms, grid, Physics{});
  auto one = make_cuda_backend({0});
  auto two = make_cuda_backend({0, 1});
  two->slab_bytes = 2 * grid.plane_size() * sizeof(float);
  std::vector<float> got(grid.point_count());
  const RunStats stats = two->run(request, [&](Slab s, const float* data) {
    std::copy(data, data + grid.plane_size() * s.planes(),
              got.begin() + std::ptrdiff_t(grid.plane_size() * s.z_begin));
  });
  EXPECT_EQ(got, compute_grid(*one, request));
  ASSERT_EQ(stats.devices.size(), 2u);
  EXPECT_GT(stats.devices[0].slabs, 0);
  EXPECT_GT(stats.devices[1].slabs, 0);
  EXPECT_NE(stats.devices[1].device.find("GPU 1"), std::string::npos);
}

}  // namespace

// The backend keeps its slab buffers between runs (a pool per device): runs from several threads
// on one backend must not share them. Each thread's maps equal those of a backend of its own.
TEST(CudaDirect, ConcurrentRunsOnOneBackendDoNotShareBuffers) {
  DCSGRID_REQUIRE_GPU();
  const GridSpec grid = grid_from_origin({-8, -8, -8}, {61, 47, 53}, 0.35);
  std::vector<AtomSet> atoms;
  std::vector<std::vector<float>> expected;
  for (int t = 0; t < 4; ++t) {
    atoms.push_back(test::random_atoms(300 + 50 * t, Box{{-6, -6, -6}, {6, 6, 6}}, 90 + t));
    PotentialRequest r;
    r.atoms = &atoms.back();
    r.grid = grid;
    auto own = make_cuda_backend({0});
    expected.push_back(compute_grid(*own, r));
  }
  auto shared = make_cuda_backend({0});
  std::vector<std::vector<float>> got(atoms.size());
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < atoms.size(); ++t)
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 3; ++repeat) {
        PotentialRequest r;
        r.atoms = &atoms[t];
        r.grid = grid;
        got[t] = compute_grid(*shared, r);
      }
    });
  for (auto& th : threads) th.join();
  for (std::size_t t = 0; t < atoms.size(); ++t) EXPECT_EQ(got[t], expected[t]) << "thread " << t;
}

}  // namespace dcsgrid::engine
