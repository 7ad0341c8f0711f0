#include "surface_field.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <spdlog/spdlog.h>

#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "parallel_concatenate.hpp"

namespace dcsgrid::analysis::detail {
namespace {

double max_radius(const AtomSet& atoms) { return *std::max_element(atoms.r.begin(), atoms.r.end()); }

Vec3 atom_position(const AtomSet& atoms, std::size_t a) { return {atoms.x[a], atoms.y[a], atoms.z[a]}; }

// Calls visit(node, squared distance) for the nodes of planes [k0, k1) within reach of centre
// (FieldGrid::within's decision, node by node in the ball's box).
template <class Visit>
void visit_ball(const FieldGrid& g, const Vec3& c, double reach, std::int64_t k0, std::int64_t k1,
                Visit visit) {
  std::array<std::int64_t, 3> lo, hi;
  for (int d = 0; d < 3; ++d) {
    lo[d] = std::max<std::int64_t>(0, g.first_within(d, c[d], reach));
    hi[d] = std::min<std::int64_t>(g.n[d] - 1, g.last_within(d, c[d], reach));
  }
  lo[2] = std::max(lo[2], k0);
  hi[2] = std::min(hi[2], k1 - 1);
  const double reach2 = reach * reach;
  for (std::int64_t k = lo[2]; k <= hi[2]; ++k) {
    const double dz = g.offset(2, k, c[2]);
    for (std::int64_t j = lo[1]; j <= hi[1]; ++j) {
      const double dy = g.offset(1, j, c[1]);
      if (FieldGrid::squared_distance(0, dy, dz) > reach2) continue;
      for (std::int64_t i = lo[0]; i <= hi[0]; ++i) {
        const double d2 = FieldGrid::squared_distance(g.offset(0, i, c[0]), dy, dz);
        if (d2 <= reach2) visit(g.at(i, j, k), d2);
      }
    }
  }
}

// min over atoms of |x − a| − (r + probe), within 2 spacings of each sphere; 2 spacings elsewhere.
std::vector<float> sas_values(const AtomSet& atoms, const SurfaceOptions& o, const FieldGrid& g) {
  const double band = 2 * g.h;
  std::vector<float> f(g.count(), float(band));
  const std::int64_t blocks = (g.n[2] + kBlockPlanes - 1) / kBlockPlanes;
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t k0 = b * kBlockPlanes, k1 = std::min(g.n[2], k0 + kBlockPlanes);
    const double z0 = g.origin[2] + g.h * k0, z1 = g.origin[2] + g.h * (k1 - 1);
    for (std::size_t a = 0; a < atoms.size(); ++a) {
      const double big_r = atoms.r[a] + o.probe_radius, reach = big_r + band;
      if (atoms.z[a] + reach < z0 || atoms.z[a] - reach > z1) continue;
      visit_ball(g, atom_position(atoms, a), reach, k0, k1, [&](std::size_t n, double d2) {
        f[n] = std::min(f[n], sas_value(d2, big_r));
      });
    }
  }
  return f;
}

// Points where the grid's axis edges cross the SAS boundary, put onto the sphere of the atom that
// bounds the SAS there.
std::vector<Vec3> sas_boundary_samples(const AtomSet& atoms, const SurfaceOptions& o,
                                       const FieldGrid& g, const std::vector<float>& f,
                                       const engine::AtomCells& cells) {
  std::vector<std::vector<Vec3>> per_plane(std::size_t(g.n[2]));
  const std::array<std::size_t, 3> stride = {1, std::size_t(g.n[0]), std::size_t(g.n[0] * g.n[1])};
#pragma omp parallel num_threads(team_size())
  {
    std::vector<std::size_t> near;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t k = 0; k < g.n[2]; ++k)
      for (std::int64_t j = 0; j < g.n[1]; ++j)
        for (std::int64_t i = 0; i < g.n[0]; ++i) {
          const std::size_t n = g.at(i, j, k);
          const std::array<std::int64_t, 3> ijk = {i, j, k};
          for (int d = 0; d < 3; ++d) {
            if (ijk[d] + 1 >= g.n[d] || (f[n] < 0) == (f[n + stride[d]] < 0)) continue;
            Vec3 q = g.position(i, j, k);
            q[d] += crossing_offset(g.h, f[n], f[n + stride[d]]);
            cells.near(q, o.probe_radius + g.h, atoms.size(), near);
            double best = std::numeric_limits<double>::infinity();
            std::size_t atom = 0;
            for (const std::size_t a : near)
              if (const double v = point_distance(q, atom_position(atoms, a)) - atoms.r[a] - o.probe_radius; v < best)
                best = v, atom = a;
            const Vec3 c = atom_position(atoms, atom);
            const double len = point_distance(q, c);
            if (near.empty() || len == 0) continue;
            per_plane[std::size_t(k)].push_back(onto_sphere(q, c, atoms.r[atom] + o.probe_radius, len));
          }
        }
  }
  std::vector<Vec3> samples;
  concatenate_in_parallel(per_plane, samples);
  return samples;
}

// probe − the distance to the nearest sample, at nodes inside the SAS (probe outside it;
// −2 spacings beyond the samples' reach, probe + 1 spacing: only the sign matters that deep, and
// a smaller reach halves the nodes each sample visits); nearest[n] the sample.
void ses_values(const SurfaceOptions& o, const FieldGrid& g, const std::vector<Vec3>& samples,
                std::vector<float>& f, std::vector<std::int32_t>& nearest) {
  const double reach = o.probe_radius + g.h;
  const std::int64_t blocks = (g.n[2] + kBlockPlanes - 1) / kBlockPlanes;
  std::vector<std::vector<std::int32_t>> by_block{std::size_t(blocks)};
  for (std::size_t s = 0; s < samples.size(); ++s)
    by_block[std::size_t(g.block_of(samples[s][2]))].push_back(std::int32_t(s));
  const std::int64_t span = std::int64_t(std::ceil(reach / g.h / kBlockPlanes)) + 1;
  std::vector<float> d2(g.count(), std::numeric_limits<float>::infinity());
  nearest.assign(g.count(), -1);
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t k0 = b * kBlockPlanes, k1 = std::min(g.n[2], k0 + kBlockPlanes);
    for (std::int64_t other = std::max<std::int64_t>(0, b - span); other <= std::min(blocks - 1, b + span); ++other)
      for (const std::int32_t s : by_block[std::size_t(other)])
        visit_ball(g, samples[std::size_t(s)], reach, k0, k1, [&](std::size_t n, double dist2) {
          if (float(dist2) < d2[n]) d2[n] = float(dist2), nearest[n] = s;
        });
  }
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t n = 0; n < std::int64_t(f.size()); ++n) f[n] = ses_value(o.probe_radius, g.h, f[n], nearest[n], d2[n]);
}

}  // namespace

FieldGrid field_grid(const AtomSet& atoms, const SurfaceOptions& o) {
  const Box box = bounding_box(atoms);
  const double margin = max_radius(atoms) + o.probe_radius + 3 * o.spacing;
  FieldGrid g;
  g.h = o.spacing;
  for (int d = 0; d < 3; ++d) {
    g.origin[d] = box.lo[d] - margin;
    g.n[d] = std::int64_t(std::ceil((box.hi[d] - box.lo[d] + 2 * margin) / g.h)) + 1;
  }
  GridSpec spec;
  spec.origin = g.origin;
  spec.spacing = {g.h, g.h, g.h};
  spec.dims = g.n;
  validate(spec);
  // The field, the nearest samples and the mesh's per-node edge masks and vertex numbers.
  require_host_memory(spec, 4);
  return g;
}

SurfaceField surface_field(const AtomSet& atoms, const SurfaceOptions& o, const std::string& device) {
  SurfaceField field;
  field.grid = field_grid(atoms, o);
  LapTimer timer;
  if (engine::use_gpu(device)) {
#ifdef DCSGRID_HAVE_CUDA
    surface_field_cuda(atoms, o, field);
    spdlog::debug("surface: fields on the GPU {:.3f} s", timer.lap());
    return field;
#endif
  }
  field.value = sas_values(atoms, o, field.grid);
  spdlog::debug("surface: SAS field {:.3f} s", timer.lap());
  if (o.kind == SurfaceKind::ses && o.probe_radius > 0) {
    const engine::AtomCells cells(atoms, kCellEdge);
    field.samples = sas_boundary_samples(atoms, o, field.grid, field.value, cells);
    spdlog::debug("surface: SAS boundary samples {:.3f} s", timer.lap());
    check_sample_count(field.samples.size());
    ses_values(o, field.grid, field.samples, field.value, field.nearest_sample);
    spdlog::debug("surface: SES field from the samples {:.3f} s", timer.lap());
  }
  return field;
}

void check_sample_count(std::size_t samples) {
  if (samples >= std::size_t(std::numeric_limits<std::int32_t>::max()))
    throw Error("the SES needs more than 2^31 boundary samples: raise --mesh-spacing");
}

SurfaceEvaluator::SurfaceEvaluator(const AtomSet& atoms, const SurfaceOptions& options,
                                   const SurfaceField& field)
    : atoms_(atoms), options_(options), field_(field), cells_(atoms, kCellEdge) {
  if (!ses()) return;
  std::vector<std::vector<Neighbour>> lists(atoms.size());
#pragma omp parallel num_threads(team_size())
  {
    std::vector<std::size_t> near;
    std::vector<std::pair<double, std::size_t>> by_distance;
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t a = 0; a < std::int64_t(atoms.size()); ++a) {
      const Vec3 c = atom_position(atoms, std::size_t(a));
      cells_.near(c, atoms.r[a] + 2 * options.probe_radius, std::size_t(a), near);
      by_distance.clear();
      for (const std::size_t b : near) by_distance.push_back({point_distance(c, atom_position(atoms, b)), b});
      std::sort(by_distance.begin(), by_distance.end());
      auto& list = lists[std::size_t(a)];
      for (const auto& [d, b] : by_distance) {
        const double reach = atoms.r[b] + options.probe_radius - 1e-9;
        list.push_back({atoms.x[b], atoms.y[b], atoms.z[b], reach * reach});
      }
    }
  }
  neighbour_start_ = concatenate_in_parallel(lists, neighbours_);
}

bool SurfaceEvaluator::ses() const { return !field_.samples.empty(); }

void SurfaceEvaluator::gather(std::size_t node, Local& local) const {
  const FieldGrid& g = field_.grid;
  const std::array<std::int64_t, 3> ijk = g.ijk(node);
  const Vec3 x = g.position(ijk[0], ijk[1], ijk[2]);
  cells_.near(x, options_.probe_radius + std::sqrt(3.0) * g.h + 1e-6, atoms_.size(), local.atoms);
  local.samples = {-1, -1};
}

void SurfaceEvaluator::set_edge(std::size_t node_a, std::size_t node_b, Local& local) const {
  if (ses()) local.samples = {field_.nearest_sample[node_a], field_.nearest_sample[node_b]};
}

bool SurfaceEvaluator::exposed(const Vec3& q, std::size_t atom) const {
  for (std::size_t m = neighbour_start_[atom]; m < neighbour_start_[atom + 1]; ++m) {
    const Neighbour& b = neighbours_[m];
    const double dx = q[0] - b.x, dy = q[1] - b.y, dz = q[2] - b.z;
    if (dx * dx + dy * dy + dz * dz < b.reach2) return false;
  }
  return true;
}

double SurfaceEvaluator::boundary_distance(const Vec3& x, const Local& local, std::int64_t& feature) const {
  double best = std::numeric_limits<double>::infinity();
  feature = -1;
  for (const std::int32_t s : local.samples)
    if (s >= 0)
      if (const double d = point_distance(x, field_.samples[std::size_t(s)]); d < best) best = d, feature = s;
  // The sphere nearest from inside first: the first exposed one is the nearest of them all.
  thread_local std::vector<std::pair<double, std::size_t>> spheres;
  spheres.clear();
  for (const std::size_t a : local.atoms) {
    const double big_r = atoms_.r[a] + options_.probe_radius;
    const double dx = x[0] - atoms_.x[a], dy = x[1] - atoms_.y[a], dz = x[2] - atoms_.z[a];
    if (dx * dx + dy * dy + dz * dz > big_r * big_r) continue;  // outside: no depth
    const double depth = big_r - point_distance(x, atom_position(atoms_, a));
    if (depth >= 0 && depth < best) spheres.push_back({depth, a});
  }
  std::sort(spheres.begin(), spheres.end());
  for (const auto& [depth, a] : spheres) {
    const Vec3 c = atom_position(atoms_, a);
    const double len = point_distance(x, c);
    if (len == 0) continue;
    const double s = (atoms_.r[a] + options_.probe_radius) / len;
    const Vec3 q = {c[0] + s * (x[0] - c[0]), c[1] + s * (x[1] - c[1]), c[2] + s * (x[2] - c[2])};
    if (exposed(q, a)) {
      feature = -2 - std::int64_t(a);
      return depth;
    }
  }
  return best;
}

double SurfaceEvaluator::value(const Vec3& x, const Local& local, Sphere* sphere) const {
  Sphere found;
  double best = 2 * field_.grid.h;
  if (ses()) {
    std::int64_t feature;
    const double d = boundary_distance(x, local, feature);
    if (feature >= 0) found = {field_.samples[std::size_t(feature)], options_.probe_radius, true};
    else if (feature <= -2) found = {atom_position(atoms_, std::size_t(-2 - feature)), atoms_.r[std::size_t(-2 - feature)]};
    best = feature == -1 ? -2 * field_.grid.h : options_.probe_radius - d;
  } else {
    for (const std::size_t a : local.atoms)
      if (const double v = point_distance(x, atom_position(atoms_, a)) - atoms_.r[a] - options_.probe_radius; v < best)
        best = v, found = {atom_position(atoms_, a), atoms_.r[a] + options_.probe_radius};
  }
  if (sphere) *sphere = found;
  return best;
}

void SurfaceEvaluator::describe(const Vec3& x, const Local& local, const Sphere& sphere,
                                std::array<float, 3>& normal, std::uint32_t& atom) const {
  double best = std::numeric_limits<double>::infinity();
  for (const std::size_t a : local.atoms)
    if (const double v = point_distance(x, atom_position(atoms_, a)) - atoms_.r[a]; v < best)
      best = v, atom = std::uint32_t(a);
  outward_normal(x, atom_position(atoms_, atom), sphere, normal.data());
}

SurfaceEvaluator::Sphere SurfaceEvaluator::atom_sphere(std::size_t atom) const {
  return {atom_position(atoms_, atom), atoms_.r[atom] + options_.probe_radius};
}

void SurfaceEvaluator::spheres_near(const Vec3& x, double distance, std::vector<std::size_t>& out) const {
  cells_.near(x, options_.probe_radius + distance, atoms_.size(), out);
}

}  // namespace dcsgrid::analysis::detail
