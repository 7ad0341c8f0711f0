// The per-node formulas of the molecular surface's distance fields (surface_field.hpp), shared by
// the CPU (surface_field.cpp) and the device (surface_field.cu) so that both compute the same
// field bit for bit: both files compile without floating-point contraction (CMakeLists.txt), and
// each decision (within reach, which atom or sample is nearest) is taken on the same rounded
// numbers. Private to src/analysis.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "dcsgrid/core/scalar_math.hpp"  // DCSGRID_HD

namespace dcsgrid::analysis::detail {

using Vec3 = std::array<double, 3>;

// Planes a CPU thread fills at a time (atoms and samples are visited once per block); the SES's
// nearest sample is chosen among equals by the block its z falls in, then its number.
inline constexpr std::int64_t kBlockPlanes = 8;
// The atom cells' edge, Å: about the fewest atoms and cells visited for the reaches used here.
inline constexpr double kCellEdge = 1.5;

// A cubic grid, x fastest.
struct FieldGrid {
  Vec3 origin{};
  double h = 0.5;
  std::array<std::int64_t, 3> n{};
  DCSGRID_HD std::size_t count() const { return std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]); }
  DCSGRID_HD std::size_t at(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return (std::size_t(k) * std::size_t(n[1]) + std::size_t(j)) * std::size_t(n[0]) + std::size_t(i);
  }
  DCSGRID_HD Vec3 position(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return {origin[0] + h * double(i), origin[1] + h * double(j), origin[2] + h * double(k)};
  }
  // Node n's indices (x fastest), the inverse of at().
  DCSGRID_HD std::array<std::int64_t, 3> ijk(std::size_t node) const {
    const std::size_t nx = std::size_t(n[0]), ny = std::size_t(n[1]);
    return {std::int64_t(node % nx), std::int64_t(node / nx % ny), std::int64_t(node / (nx * ny))};
  }
  // From node i along axis d to c.
  DCSGRID_HD double offset(int d, std::int64_t i, double c) const { return origin[d] + h * double(i) - c; }
  // The first and last node along axis d within reach of c (unclamped).
  DCSGRID_HD std::int64_t first_within(int d, double c, double reach) const {
    return std::int64_t(ceil((c - reach - origin[d]) / h));
  }
  DCSGRID_HD std::int64_t last_within(int d, double c, double reach) const {
    return std::int64_t(floor((c + reach - origin[d]) / h));
  }
  // Whether node (i, j, k) lies within reach of c, as the CPU's ball visits decide it: inside the
  // ball's box of nodes and at squared distance d2 ≤ reach² (d2 set either way).
  DCSGRID_HD bool within(const Vec3& c, double reach, std::int64_t i, std::int64_t j, std::int64_t k,
                         double& d2) const {
    const double dz = offset(2, k, c[2]), dy = offset(1, j, c[1]), dx = offset(0, i, c[0]);
    d2 = squared_distance(dx, dy, dz);
    if (!(d2 <= reach * reach)) return false;
    const std::int64_t ijk[3] = {i, j, k};
    for (int d = 0; d < 3; ++d)
      if (ijk[d] < first_within(d, c[d], reach) || ijk[d] > last_within(d, c[d], reach)) return false;
    return true;
  }
  DCSGRID_HD static double squared_distance(double dx, double dy, double dz) {
    const double dyz2 = dy * dy + dz * dz;
    return dyz2 + dx * dx;
  }
  // The CPU's block of planes that a sample at height z is filed under.
  DCSGRID_HD std::int64_t block_of(double z) const {
    const std::int64_t blocks = (n[2] + kBlockPlanes - 1) / kBlockPlanes;
    const std::int64_t b = std::int64_t((z - origin[2]) / h) / kBlockPlanes;
    return b < 0 ? 0 : b > blocks - 1 ? blocks - 1 : b;
  }
};

DCSGRID_HD double point_distance(const Vec3& p, const Vec3& q) {
  return sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
}

// The SAS field at a node at squared distance d2 from an atom whose SAS sphere has radius big_r.
DCSGRID_HD float sas_value(double d2, double big_r) { return float(sqrt(d2) - big_r); }

// Where the edge from a node of value fa to the next along an axis (fb, the other sign) crosses
// zero, linearly: the distance from the first node.
DCSGRID_HD double crossing_offset(double h, float fa, float fb) { return h * double(fa) / double(fa - fb); }

// q moved onto the sphere of centre c and radius big_r (|q − c| = len > 0).
DCSGRID_HD Vec3 onto_sphere(const Vec3& q, const Vec3& c, double big_r, double len) {
  const double s = big_r / len;
  return {c[0] + s * (q[0] - c[0]), c[1] + s * (q[1] - c[1]), c[2] + s * (q[2] - c[2])};
}

// The SES field at a node: probe outside the SAS (sas ≥ 0), else probe − the distance to the
// nearest sample (squared, as a float), or 2 spacings inside where no sample is within reach.
DCSGRID_HD float ses_value(double probe, double h, float sas, std::int32_t nearest, float d2) {
  return sas >= 0 ? float(probe) : nearest < 0 ? float(-2 * h) : float(probe - sqrt(double(d2)));
}

}  // namespace dcsgrid::analysis::detail
