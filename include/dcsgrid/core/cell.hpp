// UnitCell: the periodic lattice of an MD box or a crystal, triclinic included.
// Lattice vectors in the PDB/GROMACS convention: a along x, b in the xy plane, c completing a
// right-handed set (the convention of PDB CRYST1, mmCIF _cell, DCD, XTC/TRR and AMBER NetCDF).
#pragma once
#include <array>
#include <optional>
#include <string>

namespace dcsgrid {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<Vec3, 3>;  // rows

struct UnitCell {
  Vec3 lengths{};             // a, b, c, Å
  Vec3 angles{90, 90, 90};    // alpha (b,c), beta (a,c), gamma (a,b), degrees
  Mat3 vectors{};             // rows: lattice vectors a, b, c in Å (lower triangular)
  Mat3 reciprocal{};          // rows: a*, b*, c* with a_i · a*_j = δ_ij (no 2π)
  double volume = 0;          // Å³

  bool orthorhombic() const;  // every angle 90° (to 1e-9)
  Vec3 fractional(const Vec3& p) const;  // p = f · vectors
  Vec3 cartesian(const Vec3& f) const;
  // The image of p in the cell [0,1)³ of fractional space.
  Vec3 wrap(const Vec3& p) const;
  std::string describe() const;  // "a 62.2 b 62.2 c 62.2 Å, α 90 β 90 γ 90°"
};

// A cell from lengths (Å) and angles (degrees). Throws Error for a length that is not positive
// and finite, an angle outside (0, 180), or angles that close no volume (a flat cell).
UnitCell make_cell(const Vec3& lengths, const Vec3& angles = {90, 90, 90});
// A cell from three lattice vectors (any orientation; rotated into the convention above).
// nullopt when a vector is zero or the three are coplanar.
std::optional<UnitCell> cell_from_vectors(const Mat3& vectors);
// Parses "A,B,C[,ALPHA,BETA,GAMMA]" (Å, degrees; angles default to 90). Throws Error naming
// the text and what is wrong.
UnitCell parse_cell(const std::string& text);

}  // namespace dcsgrid
