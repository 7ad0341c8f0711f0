// The periodic methods' parameters and the atoms' images for the real-space part
// (engine/periodic.hpp).
#include "dcsgrid/engine/periodic.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::engine {
namespace {

double length(const Vec3& v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

bool positive_finite(double v) { return v > 0 && std::isfinite(v); }

// Squared distance from v to the interval [lo, hi].
double outside2(double v, double lo, double hi) {
  const double d = v < lo ? lo - v : (v > hi ? v - hi : 0.0);
  return d * d;
}

// The lattice translations n (fractional, integer) that can bring the point of fractional
// coordinates f into the region grown by reach: the bounds of the grown box's corners.
struct ImageRange {
  std::array<double, 3> lo, hi;  // fractional bounds of the grown region
};
ImageRange image_range(const UnitCell& cell, const Box& region, double reach) {
  ImageRange r{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  for (int corner = 0; corner < 8; ++corner) {
    Vec3 p;
    for (int a = 0; a < 3; ++a) p[a] = (corner >> a & 1) ? region.hi[a] + reach : region.lo[a] - reach;
    const Vec3 f = cell.fractional(p);
    for (int a = 0; a < 3; ++a) {
      r.lo[a] = std::min(r.lo[a], f[a]);
      r.hi[a] = std::max(r.hi[a], f[a]);
    }
  }
  return r;
}

// Calls fn(position) for every image of p within reach of region; returns how many.
template <typename Fn>
std::size_t for_each_image(const UnitCell& cell, const ImageRange& range, const Box& region,
                           double reach, const Vec3& p, Fn&& fn) {
  const Vec3 f = cell.fractional(p);
  std::array<double, 3> first, last;
  for (int a = 0; a < 3; ++a) {
    first[a] = std::ceil(range.lo[a] - f[a]);
    last[a] = std::floor(range.hi[a] - f[a]);
  }
  std::size_t count = 0;
  for (double n2 = first[2]; n2 <= last[2]; ++n2)
    for (double n1 = first[1]; n1 <= last[1]; ++n1)
      for (double n0 = first[0]; n0 <= last[0]; ++n0) {
        Vec3 q = p;
        for (int d = 0; d < 3; ++d)
          q[d] += n0 * cell.vectors[0][d] + n1 * cell.vectors[1][d] + n2 * cell.vectors[2][d];
        if (outside2(q[0], region.lo[0], region.hi[0]) + outside2(q[1], region.lo[1], region.hi[1]) +
                outside2(q[2], region.lo[2], region.hi[2]) >= reach * reach)
          continue;
        fn(q);
        ++count;
      }
  return count;
}

}  // namespace

void validate(const PeriodicOptions& o) {
  if (!positive_finite(o.real_cutoff))
    throw Error(fmt::format("periodic real-space cutoff must be positive and finite, got {:g} Å",
                            o.real_cutoff));
  if (!(o.tolerance > 1e-300 && o.tolerance < 1))
    throw Error(fmt::format("--pme-tolerance must lie strictly between 0 and 1, got {:g}",
                            o.tolerance));
  if (!(o.beta >= 0 && std::isfinite(o.beta)))
    throw Error(fmt::format("the Ewald coefficient must be positive (or 0: from the tolerance), "
                            "got {:g} Å⁻¹", o.beta));
  if (o.pme_order < kPmeMinOrder || o.pme_order > kPmeMaxOrder)
    throw Error(fmt::format("--pme-order must lie in {}..{}, got {}", kPmeMinOrder, kPmeMaxOrder, o.pme_order));
  if (!positive_finite(o.mesh_spacing))
    throw Error(fmt::format("--pme-spacing must be positive and finite, got {:g} Å", o.mesh_spacing));
  if (!(o.smooth_beta >= 0 && std::isfinite(o.smooth_beta)))
    throw Error(fmt::format("--smooth must be a positive Ewald factor in Å⁻¹, got {:g}",
                            o.smooth_beta));
}

double ewald_beta_for(double real_cutoff, double tolerance) {
  // erfc decreases: bisect x = β·rc on [0, 30] (erfc(30) = 2.6e-393, below every tolerance).
  double lo = 0, hi = 30;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::erfc(mid) > tolerance ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi) / real_cutoff;
}

EwaldParameters resolve_ewald(const UnitCell& cell, const PeriodicOptions& o) {
  validate(o);
  EwaldParameters p;
  p.real_cutoff = o.real_cutoff;
  p.beta = o.beta > 0 ? o.beta : ewald_beta_for(o.real_cutoff, o.tolerance);
  p.k_cutoff = 2 * p.beta * std::sqrt(-std::log(o.tolerance));
  for (int a = 0; a < 3; ++a)
    p.kmax[a] = int(std::ceil(p.k_cutoff * length(cell.vectors[a]) / (2 * std::numbers::pi)));
  return p;
}

PmeParameters resolve_pme(const UnitCell& cell, const PeriodicOptions& o) {
  validate(o);
  PmeParameters p;
  if (o.smooth_beta > 0) {
    p.beta = o.smooth_beta;
    p.real_cutoff = 0;
  } else {
    p.real_cutoff = o.real_cutoff;
    p.beta = o.beta > 0 ? o.beta : ewald_beta_for(o.real_cutoff, o.tolerance);
  }
  p.order = o.pme_order;
  for (int a = 0; a < 3; ++a) {
    const double points = std::ceil(length(cell.vectors[a]) / o.mesh_spacing);
    if (!(points < 1e9))
      throw Error(fmt::format("PME mesh: {:g} points along cell vector {} ({:g} Å at --pme-spacing "
                              "{:g} Å) is too many",
                              points, "abc"[a], length(cell.vectors[a]), o.mesh_spacing));
    p.mesh[a] = prims::fft_good_size(std::max<std::size_t>(std::size_t(points), std::size_t(p.order)));
  }
  return p;
}

template <>
PeriodicSplit<EwaldReciprocal> periodic_split(const UnitCell& cell, const PeriodicOptions& options) {
  PeriodicOptions o = options;
  const bool smooth = o.smooth_beta > 0;
  if (smooth) o.beta = o.smooth_beta;
  PeriodicSplit<EwaldReciprocal> s;
  s.parameters = resolve_ewald(cell, o);
  s.beta = s.parameters.beta;
  s.real_cutoff = smooth ? 0 : s.parameters.real_cutoff;
  s.background = !smooth;
  return s;
}

template <>
PeriodicSplit<PmeReciprocal> periodic_split(const UnitCell& cell, const PeriodicOptions& options) {
  PeriodicSplit<PmeReciprocal> s;
  s.parameters = resolve_pme(cell, options);
  s.beta = s.parameters.beta;
  s.real_cutoff = s.parameters.real_cutoff;
  s.background = options.smooth_beta <= 0;
  return s;
}

namespace {

// The lattice, Coulomb factor and background in hexadecimal floats (exact).
std::string cell_key(const UnitCell& cell, double scale, bool background) {
  std::string key;
  for (const Vec3& row : cell.vectors) key += fmt::format("{:a},{:a},{:a};", row[0], row[1], row[2]);
  return key + fmt::format("{:a};{}", scale, background);
}

}  // namespace

std::string reciprocal_key(const UnitCell& cell, const PeriodicSplit<EwaldReciprocal>& split, double scale) {
  const EwaldParameters& p = split.parameters;
  return fmt::format("ewald;{};{:a},{:a},{:a};{},{},{}", cell_key(cell, scale, split.background), p.beta,
                     p.real_cutoff, p.k_cutoff, p.kmax[0], p.kmax[1], p.kmax[2]);
}

std::string reciprocal_key(const UnitCell& cell, const PeriodicSplit<PmeReciprocal>& split, double scale) {
  const PmeParameters& p = split.parameters;
  return fmt::format("pme;{};{:a},{:a};{};{},{},{}", cell_key(cell, scale, split.background), p.beta,
                     p.real_cutoff, p.order, p.mesh[0], p.mesh[1], p.mesh[2]);
}

CutoffOptions ewald_real_space(double beta, double real_cutoff) {
  CutoffOptions c;
  c.radius = real_cutoff;
  c.form = CutoffForm::ewald_real;
  c.ewald_beta = beta;
  return c;
}

Box grid_box(const GridSpec& grid) { return grid.bounds(); }

AtomSet periodic_images(const AtomSet& atoms, const UnitCell& cell, const Box& region, double reach,
                        std::size_t max_images) {
  if (!(reach >= 0 && std::isfinite(reach)))
    throw Error(fmt::format("periodic images: the reach must be finite and not negative, got {:g} Å",
                            reach));
  const ImageRange range = image_range(cell, region, reach);
  const std::int64_t n = std::int64_t(atoms.size());
  const auto position = [&](std::int64_t a) { return Vec3{atoms.x[a], atoms.y[a], atoms.z[a]}; };
  // Count first (memory is allocated only for a count within the limit), then fill.
  std::vector<std::size_t> offset(atoms.size() + 1, 0);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t a = 0; a < n; ++a)
    offset[a + 1] = for_each_image(cell, range, region, reach, position(a), [](const Vec3&) {});
  for (std::size_t a = 0; a < atoms.size(); ++a) offset[a + 1] += offset[a];
  const std::size_t total = offset.back();
  if (total > max_images)
    throw Error(fmt::format("periodic images: {} images of the {} atoms lie within {:g} Å of the "
                            "grid, more than the {} this run may hold; use a smaller grid or "
                            "real-space cutoff",
                            total, atoms.size(), reach, max_images));
  AtomSet images;
  images.x.resize(total);
  images.y.resize(total);
  images.z.resize(total);
  images.q.resize(total);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t a = 0; a < n; ++a) {
    std::size_t i = offset[a];
    for_each_image(cell, range, region, reach, position(a), [&](const Vec3& q) {
      images.x[i] = float(q[0]);
      images.y[i] = float(q[1]);
      images.z[i] = float(q[2]);
      images.q[i] = atoms.q[a];
      ++i;
    });
  }
  return images;
}

}  // namespace dcsgrid::engine
