// The Poisson–Boltzmann coefficient maps as APBS's mg-manual fills them (docs/pb.md): dielectric on
// the three face-centred grids, ion accessibility and spread charge on the grid's points, and the
// boundary values on its outer faces. Every array has one value per grid point, x fastest.
#pragma once
#include <cstdint>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/engine/pb.hpp"
#include "dcsgrid/engine/pb_multigrid.hpp"

namespace dcsgrid::engine {

// eps_x[i,j,k] is ε at (i+½, j, k), eps_y at (i, j+½, k), eps_z at (i, j, k+½) (the last entry
// along its axis lies outside the grid and is unused).
struct PbDielectric {
  std::vector<double> eps_x, eps_y, eps_z;
};

// srfm mol: solvent everywhere; pdie within radius + srad of each atom; then solvent again
// within srad of each of the atoms' probe-sphere points that no other atom's probe sphere covers
// (APBS's reference sphere of ceil(4π·R²·sdens) points, R the largest radius plus the larger of
// srad and the ion radius plus 0.5 Å). smol: then each face value becomes the harmonic mean of
// itself and its neighbouring faces of the other two grids (APBS's 9-point smoothing).
PbDielectric pb_dielectric(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options);

// 1 where mobile ions reach, 0 within radius + max ion radius of an atom; all 0 without ions.
std::vector<double> pb_ion_accessibility(const AtomSet& atoms, const GridSpec& grid,
                                         const PbOptions& options);

// Each atom's charge (e) spread over the grid points by chgm; atoms whose stencil leaves the grid
// lose the points outside (as APBS, which clamps them onto the faces).
std::vector<double> pb_charge(const AtomSet& atoms, const GridSpec& grid, PbChargeMap chgm);
// The same spread as the terms pb_charge adds, in its order (atom by atom, each atom's stencil
// point by point), for atoms [first, end): a point's charge is the sum, in this order, of its
// shares over the atoms taken in turn. A few dozen shares an atom instead of an array of the grid;
// callers take the atoms kPbShareAtoms at a time, so memory stays bounded.
struct PbChargeShare {
  std::size_t index;  // the grid point
  double charge;      // e
};
inline constexpr std::size_t kPbShareAtoms = 8192;
std::size_t pb_max_shares_per_atom(PbChargeMap chgm);  // 8, 64, 216: a stencil's points
void pb_charge_shares(const AtomSet& atoms, std::size_t first, std::size_t end, const GridSpec& grid,
                      PbChargeMap chgm, std::vector<PbChargeShare>& shares);
// The same shares as two arrays (points, charges) for a device, made by all threads in blocks of
// kPbBlockAtoms atoms and laid end to end in pb_charge_shares' order. Grids of up to 2^32 points.
inline constexpr std::size_t kPbBlockAtoms = 64;
void pb_charge_share_arrays(const AtomSet& atoms, std::size_t first, std::size_t end, const GridSpec& grid,
                            PbChargeMap chgm, std::vector<std::uint32_t>& points, std::vector<double>& charges);

// The right-hand side 4π·scale·ρ: the charges spread by options.chgm, per unit cell volume (each
// point's charge times pb_source_factor).
std::vector<double> pb_source(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options,
                              double scale);
double pb_source_factor(const GridSpec& grid, double scale);

// The points of the grid's six outer faces, in grid order: the order of a boundary's values.
std::vector<std::size_t> pb_face_points(const GridSpec& grid);
// The same, once face_values is checked to hold one value a point (Error otherwise).
std::vector<std::size_t> pb_face_points_for(const GridSpec& grid, const std::vector<double>& face_values);
// An array of the grid holding face_values (pb_face_points' order) on its faces and 0 inside.
std::vector<double> pb_with_faces(const GridSpec& grid, const std::vector<double>& face_values);
// Whether the solve is Newton's (nonlinear requested, and ions present), and the ions' term for it
// (scale as solve_pb's).
bool solves_nonlinear(const PbOptions& options);
IonTerm pb_ion_term(const PbOptions& options, double scale);

// Sets the boundary values on the outer faces of phi (interior untouched): mdh sums
// scale·q·exp(−κ(d − a))/((1 + κa)·sdie·d) over the atoms, a the atom's radius (float32 terms
// summed in double, about 1e-7 relative); sdh puts the molecule's charge, dipole and quadrupole
// at the centre of its atoms' box in a sphere of pdie (radius: the farthest atom's surface) in
// salt, as APBS does; zero leaves phi as it is.
void pb_boundary(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                 std::vector<double>& phi);

// Focusing (APBS's focusFillBound): coarse_phi interpolated trilinearly at the face points of
// `fine` (pb_face_points' order), the grid solver's boundary. Throws Error naming the point when
// a face point lies off the coarse grid.
std::vector<double> pb_focus_boundary(const GridSpec& coarse, const std::vector<double>& coarse_phi,
                                      const GridSpec& fine);

}  // namespace dcsgrid::engine
