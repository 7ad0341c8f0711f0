// The PB coefficient maps on the device (engine/pb_discretize_cuda.hpp) against the CPU's
// (engine/pb_discretize.hpp, itself held to APBS in test_engine_pb.cpp): the mol/smol dielectric and
// the ion accessibility bit for bit, the spline surfaces within 1e-12, sdh within 1e-12 of the
// largest face value, mdh within 1e-10 of a float64 sum written here and within the CPU's own
// float32 rounding of the CPU's (1e-6 relative L2 on 1D7H), the interior of phi untouched. Inputs: 1D7H
// on the APBS tests' grid and on an odd, anisotropic one; random small molecules (zero radii among
// them, one reaching out of its grid, one of atoms on grid points whose spheres end exactly on grid
// points, one so crowded that more atoms than a point sorts at once reach it), every srfm, with and
// without ions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/pb.hpp"
#include "dcsgrid/engine/pb_discretize.hpp"
#include "dcsgrid/engine/pb_discretize_cuda.hpp"
#include "helpers.hpp"
#include "test_pb_problems.hpp"

using namespace dcsgrid;
using namespace dcsgrid::engine;

namespace {

constexpr PbSurface kSurfaces[] = {PbSurface::mol, PbSurface::smol, PbSurface::spl2, PbSurface::spl4};

std::vector<double> download(const cuda::DeviceBuffer<double>& d) {
  std::vector<double> host(d.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(host.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

cuda::DeviceBuffer<double> upload(const std::vector<double>& host) {
  cuda::DeviceBuffer<double> d(host.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(d.data(), host.data(), d.bytes(), cudaMemcpyHostToDevice));
  return d;
}

// dims points at spacing h per axis, centred on the atoms' box.
GridSpec centred_grid(const AtomSet& atoms, const std::array<std::int64_t, 3>& dims, const std::array<double, 3>& h) {
  const auto c = bounding_box(atoms).center();
  GridSpec g;
  g.dims = dims;
  g.spacing = h;
  for (int d = 0; d < 3; ++d) g.origin[d] = c[d] - 0.5 * h[d] * double(dims[d] - 1);
  return g;
}

PbOptions options_for(PbSurface srfm, bool ions) {
  PbOptions o;
  o.srfm = srfm;
  if (ions) o.ions = {{1, 0.15, 2.0}, {-1, 0.15, 2.0}};
  return o;
}

std::string label(const PbOptions& o, const std::string& what) { return what + " (" + describe(o) + ")"; }

std::string where(const GridSpec& g, std::size_t n) {
  const auto ijk = g.ijk(n);
  return "point (" + std::to_string(ijk[0]) + ", " + std::to_string(ijk[1]) + ", " + std::to_string(ijk[2]) + ")";
}

// Every value the same double, bit for bit.
void expect_bitwise(const GridSpec& g, const std::vector<double>& gpu, const std::vector<double>& cpu,
                    const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  std::size_t differ = 0, first = 0;
  for (std::size_t n = 0; n < cpu.size(); ++n)
    if (std::memcmp(&gpu[n], &cpu[n], sizeof(double)) != 0 && differ++ == 0) first = n;
  EXPECT_EQ(differ, 0u) << what << ": first at " << where(g, first) << ": " << gpu[first] << " vs the CPU's "
                        << cpu[first];
}

double max_difference(const std::vector<double>& gpu, const std::vector<double>& cpu, std::size_t* at = nullptr) {
  double worst = 0;
  for (std::size_t n = 0; n < cpu.size(); ++n)
    if (!(std::abs(gpu[n] - cpu[n]) <= worst)) {  // NaN counts as the worst
      worst = std::isnan(gpu[n] - cpu[n]) ? INFINITY : std::abs(gpu[n] - cpu[n]);
      if (at) *at = n;
    }
  return worst;
}

void expect_within(const GridSpec& g, const std::vector<double>& gpu, const std::vector<double>& cpu,
                   double tolerance, const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  std::size_t at = 0;
  const double worst = max_difference(gpu, cpu, &at);
  EXPECT_LE(worst, tolerance) << what << ": at " << where(g, at) << ": " << gpu[at] << " vs the CPU's " << cpu[at];
}

// The map is worth comparing: it holds more than one value (and the mol map both media).
void expect_not_uniform(const std::vector<double>& eps, const PbOptions& o, const std::string& what) {
  const auto [lo, hi] = std::minmax_element(eps.begin(), eps.end());
  EXPECT_LT(*lo, *hi) << what;
  if (o.srfm != PbSurface::mol) return;
  EXPECT_EQ(*lo, o.pdie) << what;
  EXPECT_EQ(*hi, o.sdie) << what;
}

void expect_maps_as_cpu(const AtomSet& atoms, const GridSpec& grid, const PbOptions& o) {
  const std::size_t n = grid.point_count();
  cuda::Stream stream;
  cuda::DeviceBuffer<double> ex(n), ey(n), ez(n), access(n);
  pb_dielectric_cuda(atoms, grid, o, ex.data(), ey.data(), ez.data(), stream.get());
  pb_ion_accessibility_cuda(atoms, grid, o, access.data(), stream.get());
  const PbDielectric cpu = pb_dielectric(atoms, grid, o);
  const std::vector<double> cpu_access = pb_ion_accessibility(atoms, grid, o);
  expect_not_uniform(cpu.eps_x, o, label(o, "CPU eps_x"));
  const std::vector<double> gpu[3] = {download(ex), download(ey), download(ez)};
  const std::vector<double>* ref[3] = {&cpu.eps_x, &cpu.eps_y, &cpu.eps_z};
  const bool spline = o.srfm == PbSurface::spl2 || o.srfm == PbSurface::spl4;
  for (int a = 0; a < 3; ++a) {
    const std::string what = label(o, "eps_" + std::string(1, "xyz"[a]));
    if (spline)
      expect_within(grid, gpu[a], *ref[a], 1e-12, what);
    else
      expect_bitwise(grid, gpu[a], *ref[a], what);
  }
  if (spline)
    expect_within(grid, download(access), cpu_access, 1e-12, label(o, "accessibility"));
  else
    expect_bitwise(grid, download(access), cpu_access, label(o, "accessibility"));
}

bool on_face(const GridSpec& g, std::size_t n) {
  const auto ijk = g.ijk(n);
  for (int d = 0; d < 3; ++d)
    if (ijk[d] == 0 || ijk[d] == g.dims[d] - 1) return true;
  return false;
}

// mdh in float64 at p: Σ scale·q'·exp(−κd)/(sdie·d), q' = q·exp(κa)/(1 + κa) rounded to float (the
// CPU keeps its raised charges in an AtomSet).
double mdh_reference(const AtomSet& atoms, const PbOptions& o, double scale, const std::array<double, 3>& p) {
  const double kappa = std::sqrt(kappa_bar_squared(o) / o.sdie);
  double sum = 0;
  for (std::size_t n = 0; n < atoms.size(); ++n) {
    const double q = float(atoms.q[n] * std::exp(kappa * atoms.r[n]) / (1 + kappa * atoms.r[n]));
    const double d = std::hypot(p[0] - atoms.x[n], p[1] - atoms.y[n], p[2] - atoms.z[n]);
    sum += q * std::exp(-kappa * d) / d;
  }
  return scale / o.sdie * sum;
}

// phi starts as a pattern; the device must leave its interior alone and fill its faces: sdh as the
// CPU (1e-12 of the largest face value), mdh as the float64 sum (1e-10) and within mdh_vs_cpu
// (relative L2 over the faces) of the CPU, whose float32 terms are that far from it.
void expect_boundary_as_cpu(const AtomSet& atoms, const GridSpec& grid, const PbOptions& o, double mdh_vs_cpu) {
  const double scale = kCoulomb * unit_factor(Unit::kT_per_e, o.temp);
  std::vector<double> start(grid.point_count());
  for (std::size_t n = 0; n < start.size(); ++n) start[n] = -3.25 + 1e-3 * double(n % 1009);
  std::vector<double> cpu = start;
  pb_boundary(atoms, grid, o, scale, cpu);
  cuda::DeviceBuffer<double> phi = upload(start);
  cuda::Stream stream;
  pb_boundary_cuda(atoms, grid, o, scale, phi.data(), stream.get());
  const std::vector<double> gpu = download(phi);
  const std::string what = label(o, std::string("boundary ") + keyword(o.bcfl));
  if (o.bcfl == PbBoundary::zero) return expect_bitwise(grid, gpu, start, what);
  const bool mdh = o.bcfl == PbBoundary::mdh;
  double largest = 0, worst = 0, worst_ref = 0, error2 = 0, norm2 = 0;
  std::size_t worst_at = 0, interior_changed = 0;
  for (std::size_t n = 0; n < cpu.size(); ++n) {
    if (!on_face(grid, n)) {
      interior_changed += std::memcmp(&gpu[n], &start[n], sizeof(double)) != 0;
      continue;
    }
    const auto ijk = grid.ijk(n);
    const double ref = mdh ? mdh_reference(atoms, o, scale, grid.position(ijk[0], ijk[1], ijk[2])) : cpu[n];
    largest = std::max(largest, std::abs(ref));
    if (!(std::abs(gpu[n] - ref) <= worst)) worst = std::abs(gpu[n] - ref), worst_ref = ref, worst_at = n;
    error2 += (gpu[n] - cpu[n]) * (gpu[n] - cpu[n]);
    norm2 += cpu[n] * cpu[n];
  }
  EXPECT_EQ(interior_changed, 0u) << label(o, "interior of phi");
  ASSERT_GT(largest, 0.0) << what;
  EXPECT_LE(worst, (mdh ? 1e-10 : 1e-12) * largest)
      << what << ": at " << where(grid, worst_at) << ": " << gpu[worst_at] << " vs " << worst_ref
      << (mdh ? " (float64)" : " (the CPU's)") << ", largest face value " << largest;
  if (mdh) EXPECT_LE(std::sqrt(error2 / norm2), mdh_vs_cpu) << what << ": relative L2 against the CPU's";
}

// Every srfm with and without ions; with mdh_vs_cpu > 0, every bcfl too (smol).
void expect_all_as_cpu(const AtomSet& atoms, const GridSpec& grid, double mdh_vs_cpu) {
  for (PbSurface srfm : kSurfaces)
    for (bool ions : {false, true}) {
      SCOPED_TRACE(grid.describe());
      expect_maps_as_cpu(atoms, grid, options_for(srfm, ions));
    }
  if (mdh_vs_cpu <= 0) return;
  for (PbBoundary bcfl : {PbBoundary::mdh, PbBoundary::sdh, PbBoundary::zero})
    for (bool ions : {false, true}) {
      PbOptions o = options_for(PbSurface::smol, ions);
      o.bcfl = bcfl;
      SCOPED_TRACE(grid.describe());
      expect_boundary_as_cpu(atoms, grid, o, mdh_vs_cpu);
    }
}

// The CPU's mdh (float32 terms summed in double) against float64: 4.9e-7 to 6.4e-7 relative L2 on
// 1D7H's faces; 1.7e-7 to 1.4e-6 on the random molecules' (nearly neutral: more cancellation).
constexpr double kMdhProteinVsCpu = 1e-6, kMdhRandomVsCpu = 3e-6;

AtomSet atoms_1d7h() { return test::read_pqr_with_radii(test::data_file("1d7h-min.pqr")); }

// count atoms about a centre (normal, σ Å), radii in [0.8, 2.2] Å with every seventh zero, charges
// in [−1, 1] e.
AtomSet random_molecule(std::uint64_t seed, int count, double sigma) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> place(0.0, sigma);
  std::uniform_real_distribution<double> radius(0.8, 2.2), charge(-1, 1);
  AtomSet atoms;
  for (int n = 0; n < count; ++n)
    atoms.push_back(place(rng), place(rng), place(rng), charge(rng), n % 7 == 3 ? 0.0 : radius(rng));
  return atoms;
}

}  // namespace

TEST(PbDiscretizeCuda, Protein1d7hAsTheCpu) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet atoms = atoms_1d7h();
  ASSERT_EQ(atoms.size(), 1663u);
  expect_all_as_cpu(atoms, centred_grid(atoms, {97, 65, 65}, {0.75, 0.75, 0.75}), kMdhProteinVsCpu);
}

TEST(PbDiscretizeCuda, Protein1d7hOnAnOddAnisotropicGrid) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet atoms = atoms_1d7h();
  expect_all_as_cpu(atoms, centred_grid(atoms, {81, 59, 67}, {0.7, 0.8, 0.65}), kMdhProteinVsCpu);
}

TEST(PbDiscretizeCuda, RandomMoleculesAsTheCpu) {
  DCSGRID_REQUIRE_GPU();
  for (std::uint64_t seed : {1, 2, 3}) {
    const AtomSet atoms = random_molecule(seed, 60 + 40 * int(seed), 3.0);
    SCOPED_TRACE("seed " + std::to_string(seed));
    // Padded by several Å beyond the atoms' spheres: no atom near a face.
    const auto extent = bounding_box(atoms).extent();
    std::array<std::int64_t, 3> dims;
    const std::array<double, 3> h = {0.45, 0.6, 0.55};
    for (int d = 0; d < 3; ++d) dims[d] = 2 * std::int64_t((extent[d] + 16.0) / h[d] / 2) + 1;
    expect_all_as_cpu(atoms, centred_grid(atoms, dims, h), kMdhRandomVsCpu);
  }
}

TEST(PbDiscretizeCuda, MoleculeReachingOutOfItsGrid) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet atoms = random_molecule(9, 150, 4.0);
  // Half the molecule's box: spheres and probe points off every face.
  expect_all_as_cpu(atoms, centred_grid(atoms, {23, 31, 19}, {0.5, 0.4, 0.6}), 0.0);  // no boundary: atoms on faces
}

TEST(PbDiscretizeCuda, SpheresEndingExactlyOnGridPoints) {
  DCSGRID_REQUIRE_GPU();
  // Atoms on points of a 0.5 Å grid with radii of 0.5 and 1 Å, probe 1.5 Å: r + srad is a whole
  // number of spacings, so points lie exactly on the spheres (≤ decides them).
  AtomSet atoms;
  std::mt19937_64 rng(4);
  std::uniform_int_distribution<int> step(-8, 8);
  for (int n = 0; n < 40; ++n)
    atoms.push_back(0.5 * step(rng), 0.5 * step(rng), 0.5 * step(rng), n % 2 ? 0.5 : -0.5, n % 3 ? 0.5 : 1.0);
  GridSpec grid;
  grid.dims = {41, 43, 45};
  grid.spacing = {0.5, 0.5, 0.5};
  grid.origin = {-10.0, -10.5, -11.0};
  for (PbSurface srfm : {PbSurface::mol, PbSurface::smol})
    for (bool ions : {false, true}) {
      PbOptions o = options_for(srfm, ions);
      o.srad = 1.5;
      expect_maps_as_cpu(atoms, grid, o);
    }
}

TEST(PbDiscretizeCuda, CrowdedAtomsTakenInOrder) {
  DCSGRID_REQUIRE_GPU();
  // 64 atoms within 0.3 Å: more reach each nearby point than a point sorts at once (48).
  AtomSet atoms;
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> jitter(-0.15, 0.15), radius(1.5, 2.0);
  for (int n = 0; n < 64; ++n) atoms.push_back(jitter(rng), jitter(rng), jitter(rng), 0.1, radius(rng));
  atoms.push_back(4.0, 0.0, 0.0, -1.0, 1.7);
  const GridSpec grid = centred_grid(atoms, {33, 29, 31}, {0.4, 0.45, 0.5});
  for (PbSurface srfm : {PbSurface::spl2, PbSurface::spl4})
    for (bool ions : {false, true}) expect_maps_as_cpu(atoms, grid, options_for(srfm, ions));
}

TEST(PbDiscretizeCuda, RefusesAtomsWithoutRadii) {
  // Checked before any device work: runs without a GPU too.
  AtomSet atoms;
  atoms.push_back(0, 0, 0, 1);
  const GridSpec grid = centred_grid(random_molecule(1, 10, 2.0), {9, 9, 9}, {1, 1, 1});
  const std::string message = test::error_message(
      [&] { pb_dielectric_cuda(atoms, grid, PbOptions{}, nullptr, nullptr, nullptr, nullptr); });
  EXPECT_NE(message.find("pb_dielectric_cuda: the atoms have no radii"), std::string::npos) << message;
  const std::string empty = test::error_message(
      [&] { pb_boundary_cuda(AtomSet{}, grid, PbOptions{}, 1.0, nullptr, nullptr); });
  EXPECT_NE(empty.find("pb_boundary_cuda: no atoms"), std::string::npos) << empty;
}
