// The Poisson–Boltzmann coefficient maps as APBS's mg-manual fills them (docs/pb.md): dielectric on
// the three face-centred grids, ion accessibility and spread charge on the grid's points, and the
// boundary values on its outer faces. Every array has one value per grid point, x fastest.
#pragma once
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

// The right-hand side 4π·scale·ρ: the charges spread by options.chgm, per unit cell volume.
std::vector<double> pb_source(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options,
                              double scale);
// Zeroes phi inside the grid's outer faces (a given boundary's values kept, the interior's guess 0).
void pb_keep_faces(const GridSpec& grid, std::vector<double>& phi);
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

// Focusing (APBS's focusFillBound): an array of every point of `fine` whose outer faces hold
// coarse_phi interpolated trilinearly (the interior 0), for the grid solver's boundary. Throws
// Error naming the point when a face point lies off the coarse grid.
std::vector<double> pb_focus_boundary(const GridSpec& coarse, const std::vector<double>& coarse_phi,
                                      const GridSpec& fine);

}  // namespace dcsgrid::engine
