// Periodic methods: the Ewald sum (ewald) and smooth particle-mesh Ewald (pme), and the
// Gaussian-smeared reciprocal part alone (--smooth, what VMD's PMEpot writes). docs/periodic.md
// gives the formulas, defaults and measured accuracy. In Gaussian units, with scale the Coulomb
// factor of the physics (PairKernel::scale_d), the potential of charges q_i at r_i in a cell of
// volume V is
//   φ(r) = scale·[ Σ_i Σ_n q_i erfc(β|r − r_i − n|)/|r − r_i − n|      real part, images n
//                + (4π/V) Σ_{k≠0} e^{−k²/4β²}/k² Re[S(k) e^{ik·r}]       reciprocal part
//                − π Q/(β² V) ]                                          neutralising background
// with S(k) = Σ_i q_i e^{−ik·r_i}, k = 2π m·reciprocal (m integer), Q = Σ q_i: tin-foil boundary,
// k = 0 left out, so the potential averages to zero over the cell. The real part is the cutoff
// engines' ewald_real form summed over periodic_images; the reciprocal part is EwaldReciprocal
// (exact) or PmeReciprocal (B-spline mesh and FFT). The smooth map is the reciprocal part alone
// (PmeReciprocal without background): the potential of Gaussian charges of Ewald factor β.
#pragma once
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/engine/periodic_options.hpp"
#include "dcsgrid/engine/pme_math.hpp"
#include "dcsgrid/prims/fft.hpp"

namespace dcsgrid::engine {

// The β with erfc(β·real_cutoff) = tolerance, Å⁻¹.
double ewald_beta_for(double real_cutoff, double tolerance);

// The exact Ewald sum's parameters for a cell: β (options.beta, or from the cutoff and
// tolerance), the real cutoff, and the k vectors summed: |k| ≤ k_cutoff = 2β·√(−ln tolerance)
// (e^{−k²/4β²} ≥ tolerance), which lie within |m_i| ≤ kmax[i] = ⌈k_cutoff·|a_i|/2π⌉.
struct EwaldParameters {
  double beta = 0;         // Å⁻¹
  double real_cutoff = 0;  // Å
  double k_cutoff = 0;     // Å⁻¹
  std::array<int, 3> kmax{};
};
EwaldParameters resolve_ewald(const UnitCell& cell, const PeriodicOptions& options);

// PME's parameters: β and the real cutoff as for Ewald (for the smooth map β = smooth_beta and
// no real part, real_cutoff 0), the B-spline order, and the mesh: along each lattice vector
// fft_good_size(⌈|a_i| / mesh_spacing⌉) points, at least the order.
struct PmeParameters {
  double beta = 0;         // Å⁻¹
  double real_cutoff = 0;  // Å; 0: the reciprocal part only (smooth map)
  int order = 6;
  std::array<std::size_t, 3> mesh{};
};
PmeParameters resolve_pme(const UnitCell& cell, const PeriodicOptions& options);

// The cutoff options of the real-space part: the ewald_real form at real_cutoff.
CutoffOptions ewald_real_space(double beta, double real_cutoff);

// The most atom images periodic_images makes by default: 2^27 (2 GiB of float32 x, y, z, q).
inline constexpr std::size_t kMaxPeriodicImages = std::size_t(1) << 27;

// Every image r_i + n (n a lattice translation, n = 0 included) closer than `reach` to the box
// `region`, so that the non-periodic cutoff engine with the ewald_real form at radius reach sums
// the real-space part at any point of the region, points outside the cell included. Atoms may lie
// anywhere (they are not wrapped first). Memory: 16 bytes an image, at most max_images images;
// throws Error, with the count, when there would be more.
AtomSet periodic_images(const AtomSet& atoms, const UnitCell& cell, const Box& region, double reach,
                        std::size_t max_images = kMaxPeriodicImages);

// The box holding a grid's points.
Box grid_box(const GridSpec& grid);

// The exact sum's k vectors, half of k space (S(−k) = conj S(k)): each one's m offset by kmax
// (m[a] + kmax[a] ∈ [0, 2·kmax[a]]) and its coefficient 2·(4π/V)·e^{−k²/4β²}/k² (k and −k
// together). Throws Error beyond kMaxEwaldVectors.
struct EwaldVectors {
  std::vector<std::array<int, 3>> m;
  std::vector<double> coefficient;
};
EwaldVectors ewald_vectors(const UnitCell& cell, const EwaldParameters& parameters);

// The exact reciprocal part (and background), the reference for PME: S(k) for every k vector of
// the parameters, in double, summed at each output point. Cost: atoms × k vectors to build,
// points × k vectors to evaluate (OpenMP threads over k vectors, then over rows of points).
class EwaldReciprocal {
 public:
  // scale: the physics' Coulomb factor (PairKernel::scale_d); background: add −πQ/(β²V).
  // Throws Error when the k vectors would exceed kMaxEwaldVectors.
  EwaldReciprocal(const UnitCell& cell, const EwaldParameters& parameters, double scale,
                  bool background = true);
  // Computes S(k) for these atoms (they may lie anywhere: only their fractional coordinates
  // modulo 1 matter).
  void set_atoms(const AtomSet& atoms);
  // Adds scale·(reciprocal part + background) at planes [slab.z_begin, slab.z_end) of grid to out
  // (plane_size · planes floats, x fastest). Threads may call it at once for disjoint slabs.
  void add_to(const GridSpec& grid, Slab slab, float* out) const;

  std::size_t vector_count() const { return coefficient_.size(); }

 private:
  UnitCell cell_;
  EwaldParameters parameters_;
  double scale_;
  bool background_;
  double total_charge_ = 0;
  std::vector<std::array<int, 3>> m_;  // ewald_vectors
  std::vector<double> coefficient_;
  std::vector<std::complex<double>> structure_factor_;  // S(k)
};

// The most k vectors EwaldReciprocal takes (half of k space): 2^24, 0.4 GiB.
inline constexpr std::size_t kMaxEwaldVectors = std::size_t(1) << 24;
// The most mesh points PmeReciprocal takes: 2^28 (8 GiB of mesh, spectrum and influence function).
inline constexpr std::size_t kMaxPmeMeshPoints = std::size_t(1) << 28;

// The seconds of PmeReciprocal's stages: its construction, and the last set_atoms.
struct PmeStageTimes {
  double plan = 0;     // FFT plan and influence function (the constructor)
  double spread = 0;   // charges onto the mesh
  double forward = 0;  // real-to-complex FFT
  double solve = 0;    // times the influence function
  double inverse = 0;  // complex-to-real FFT
};

// An atom as PME spreads it: its charge and, along each mesh axis, the spline's first point
// floor(u) wrapped into the mesh and u − floor(u), u the mesh coordinate.
struct PmeSplineOrigin {
  double offset[3];
  double q;
  std::int32_t first[3];
};

// Smooth particle-mesh Ewald's reciprocal part (Essmann et al., J. Chem. Phys. 103 (1995) 8577):
// charges spread onto a K1×K2×K3 mesh in fractional coordinates (triclinic cells included) with
// cardinal B-splines of order p, transformed (real-to-complex FFT), multiplied by the influence
// function (4π/V)·e^{−k²/4β²}/k² · |b1|²|b2|²|b3|² (the B-spline moduli), transformed back: the
// potential on the mesh, which add_to interpolates at any output point with the same B-splines.
class PmeReciprocal {
 public:
  // Builds the FFT plan and the influence function for the cell. scale as for EwaldReciprocal.
  // Throws Error for an order outside 4..12 or a mesh beyond kMaxPmeMeshPoints.
  PmeReciprocal(const UnitCell& cell, const PmeParameters& parameters, double scale,
                bool background = true);
  // Spreads the atoms' charges and solves for the mesh potential.
  void set_atoms(const AtomSet& atoms);
  // Adds scale·(interpolated mesh potential + background) at planes [slab.z_begin, slab.z_end)
  // of grid to out. Threads may call it at once for disjoint slabs.
  void add_to(const GridSpec& grid, Slab slab, float* out) const;

  const PmeParameters& parameters() const { return parameters_; }
  const PmeStageTimes& stage_times() const { return times_; }
  // The mesh potential without scale or background (K1·K2·K3, x fastest), for tests; empty for
  // the smooth map, whose mesh is in float.
  const std::vector<double>& mesh_potential() const { return mesh_; }

 private:
  // The smooth map (parameters.real_cutoff 0) is spread, transformed and interpolated in float,
  // PME's reciprocal part in double (docs/periodic.md: the smooth map's accuracy against its cost).
  bool single() const { return parameters_.real_cutoff == 0; }
  template <typename T>
  void solve(const AtomSet& atoms, std::vector<T>& padded, std::vector<T>& mesh, std::vector<std::complex<T>>& spectrum);
  template <typename T>
  void spread(const AtomSet& atoms, std::vector<T>& padded, std::vector<T>& mesh);
  // Fills origins_ and, in spread_order_, the atoms sorted by the slab of mesh planes their spline
  // starts in (stable); returns each slab's first place in spread_order_ and the end.
  std::vector<std::int64_t> sort_by_slab(const AtomSet& atoms, std::int64_t slabs);
  UnitCell cell_;
  PmeParameters parameters_;
  double scale_;
  bool background_;
  double total_charge_ = 0;
  prims::FftPlan3d fft_;
  std::vector<double> influence_;  // on the half spectrum
  std::vector<double> mesh_;       // charges, then potential
  std::vector<std::complex<double>> spectrum_;
  std::vector<float> single_mesh_;  // the same in float, for the smooth map
  std::vector<std::complex<float>> single_spectrum_;
  // Spreading's scratch, kept between frames: the atoms' spline origins, the order they are
  // spread in, and the padded mesh they are spread onto (pme.cpp).
  std::vector<PmeSplineOrigin> origins_;
  std::vector<std::uint32_t> spread_order_;
  std::vector<double> padded_;
  std::vector<float> padded_single_;
  PmeStageTimes times_;
};

// Throws Error unless PME can run with these parameters on this cell: order 4..12, β positive, a
// mesh of at most kMaxPmeMeshPoints and at least the order along each vector, the lattice in the
// lower triangular convention.
void validate_pme(const UnitCell& cell, const PmeParameters& parameters);
// |b(m)|² = 1/|Σ_{j=0}^{p−2} M_p(j+1) e^{2πi m j/K}|² for m = 0..K−1: the B-spline moduli of one
// mesh axis of K points, order p.
std::vector<double> bspline_moduli(std::int64_t k, int order);
// πQ/(β²V): the cell average of the real part that the neutralising background removes.
double background_potential(double total_charge, double beta, double volume);

// How a periodic method splits the potential for a cell: the reciprocal part's parameters, the
// real-space part's β and cutoff (0: none, the smooth map), and whether the neutralising
// background is added. The smooth map (options.smooth_beta > 0) is the reciprocal part of
// Gaussian charges of Ewald factor smooth_beta alone, without background (as VMD's PMEpot).
template <typename Reciprocal>
struct PeriodicSplit {
  std::conditional_t<std::is_same_v<Reciprocal, PmeReciprocal>, PmeParameters, EwaldParameters> parameters;
  double beta = 0;
  double real_cutoff = 0;
  bool background = true;
};
template <typename Reciprocal>
PeriodicSplit<Reciprocal> periodic_split(const UnitCell& cell, const PeriodicOptions& options);
template <>
PeriodicSplit<EwaldReciprocal> periodic_split(const UnitCell& cell, const PeriodicOptions& options);
template <>
PeriodicSplit<PmeReciprocal> periodic_split(const UnitCell& cell, const PeriodicOptions& options);

// The key under which a backend's MethodCache keeps the reciprocal part made for this cell, split
// and Coulomb factor: every number exactly, so only an identical set-up is reused.
std::string reciprocal_key(const UnitCell& cell, const PeriodicSplit<EwaldReciprocal>& split, double scale);
std::string reciprocal_key(const UnitCell& cell, const PeriodicSplit<PmeReciprocal>& split, double scale);

}  // namespace dcsgrid::engine
