// Comparing two maps (compare.hpp).
#include "dcsgrid/analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::analysis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void validate(const CompareOptions& o) {
  validate_shell_edges(o.shell_edges);
  if (o.histogram_bins < 1) throw Error("compare: the error histogram needs at least one bin");
}

std::string grid_vector(const std::array<double, 3>& v) {
  return fmt::format("({:g}, {:g}, {:g})", v[0], v[1], v[2]);
}

// Every digit needed to tell two doubles apart (fmt's shortest round-trip form).
std::string full_precision(const std::array<double, 3>& v) {
  return fmt::format("({}, {}, {})", v[0], v[1], v[2]);
}

// JSON numbers cannot be infinite: null stands for +inf (the open last shell).
nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

// Symmetric range just past the largest error, so that it falls in the last bin.
double histogram_range(double max_abs_error) {
  return max_abs_error > 0 ? max_abs_error * (1 + 1e-6) : 1.0;
}

}  // namespace

void ErrorSums::merge(const ErrorSums& other) {
  points += other.points;
  error2 += other.error2;
  reference2 += other.reference2;
  max_abs = std::max(max_abs, other.max_abs);
}

void ErrorSums::add(double reference, double error) {
  ++points;
  error2 += error * error;
  reference2 += reference * reference;
  max_abs = std::max(max_abs, std::abs(error));
}

ErrorSummary ErrorSums::summary() const {
  ErrorSummary s;
  s.points = points;
  if (points == 0) return s;
  s.rms_error = std::sqrt(error2 / double(points));
  s.rms_reference = std::sqrt(reference2 / double(points));
  s.max_abs_error = max_abs;
  s.relative_l2 = reference2 > 0 ? std::sqrt(error2 / reference2) : std::sqrt(error2);
  return s;
}

nlohmann::json ErrorSummary::to_json() const {
  return {{"points", points},           {"rms_error", rms_error}, {"max_abs_error", max_abs_error},
          {"relative_l2", relative_l2}, {"rms_reference", rms_reference}};
}

void require_same_grid(const GridSpec& reference, const GridSpec& test, double tolerance) {
  if (!(tolerance >= 0 && tolerance <= 1))  // NaN too, which would pass every comparison below
    throw Error(fmt::format("the grid tolerance must be a fraction of the spacing from 0 to 1, "
                            "got {}",
                            tolerance));
  if (reference.dims != test.dims)
    throw Error(fmt::format("the maps are on different grids: points {}x{}x{} against {}x{}x{}",
                            reference.nx(), reference.ny(), reference.nz(), test.nx(), test.ny(),
                            test.nz()));
  // Along each axis the points may drift apart by the origin's difference at the first point and
  // by that plus (n − 1) times the spacing's difference at the last: both within tolerance
  // spacings (text formats such as APBS's DX print 7 significant digits).
  std::string origin_axes, spacing_axes;
  for (int a = 0; a < 3; ++a) {
    const double allowed = tolerance * std::min(reference.spacing[a], test.spacing[a]);
    const double d_origin = test.origin[a] - reference.origin[a];
    const double d_last = d_origin + double(reference.dims[a] - 1) * (test.spacing[a] - reference.spacing[a]);
    if (std::abs(d_origin) > allowed) origin_axes += "xyz"[a];
    else if (std::abs(d_last) > allowed) spacing_axes += "xyz"[a];
  }
  std::string problems;
  if (!origin_axes.empty())
    problems += fmt::format("; the origins differ along {}: {} Å against {}", origin_axes,
                            full_precision(reference.origin), full_precision(test.origin));
  if (!spacing_axes.empty())
    problems += fmt::format("; the spacings differ along {}: {} Å against {}", spacing_axes,
                            full_precision(reference.spacing), full_precision(test.spacing));
  if (!problems.empty())
    throw Error(fmt::format("the maps are on different grids (beyond {:g} of the spacing){}",
                            tolerance, problems));
}

MapComparison::MapComparison(const GridSpec& grid, const AtomSet* atoms, const CompareOptions& options)
    : MapComparison(grid,
                    atoms && !atoms->empty()
                        ? std::make_shared<const AtomShells>(atom_shells(*atoms, grid, options.shell_edges))
                        : nullptr,
                    options) {}

MapComparison::MapComparison(const GridSpec& grid, std::shared_ptr<const AtomShells> shells,
                             const CompareOptions& options)
    : grid_(grid), options_(options), atom_shells_(std::move(shells)),
      parts_per_plane_(std::size_t((grid.ny() + kRowsPerPart - 1) / kRowsPerPart)),
      sums_per_part_(1 + (atom_shells_ ? options.shell_edges.size() : 0)) {
  validate(grid);
  validate(options);
  const auto same_grid = [&](const GridSpec& g) {
    return g.dims == grid.dims && g.origin == grid.origin && g.spacing == grid.spacing;
  };
  if (atom_shells_ && (!same_grid(atom_shells_->grid) || atom_shells_->edges != options.shell_edges))
    throw Error("compare: the atoms' shells were computed for another grid or other shell edges");
  const std::size_t parts = std::size_t(grid.nz()) * parts_per_plane_;
  part_sums_.resize(parts * sums_per_part_);
  part_figures_.resize(parts);
  plane_added_.resize(std::size_t(grid.nz()));
}

void MapComparison::hold_differences(std::span<float> buffer) {
  if (planes_added_ > 0) throw Error("compare: hold_differences() after add()");
  if (buffer.empty()) {
    own_differences_.reset(new float[grid_.point_count()]);
    differences_ = own_differences_.get();
    return;
  }
  if (buffer.size() != grid_.point_count())
    throw Error(fmt::format("compare: a buffer of {} values for the differences of {} points", buffer.size(),
                            grid_.point_count()));
  differences_ = buffer.data();
}

// The point count of planes [z_begin, z_begin+planes), which must lie in the grid.
std::size_t MapComparison::slab_points(std::int64_t z_begin, std::int64_t planes) const {
  if (z_begin < 0 || planes <= 0 || z_begin + planes > grid_.nz())
    throw Error(fmt::format("compare: planes {}..{} lie outside the grid's {} planes", z_begin,
                            z_begin + planes - 1, grid_.nz()));
  return grid_.plane_size() * std::size_t(planes);
}

// Part `part` of the grid (rows [r·kRowsPerPart, ...) of plane part / parts_per_plane_); the maps'
// pointers at its first point.
void MapComparison::add_part(std::size_t part, const float* reference, const float* test) {
  const std::size_t row = std::size_t(kRowsPerPart) * (part % parts_per_plane_);
  const std::size_t n = std::size_t(grid_.nx()) * std::min(std::size_t(kRowsPerPart), std::size_t(grid_.ny()) - row);
  const std::size_t offset = (part / parts_per_plane_) * grid_.plane_size() + row * std::size_t(grid_.nx());
  const std::uint8_t* shell = atom_shells_ ? atom_shells_->shell.data() + offset : nullptr;
  ErrorSums* sums = part_sums_.data() + part * sums_per_part_;
  ErrorSums& overall = sums[0];
  PartFigures& figures = part_figures_[part];
  if (differences_) {
    float* difference = differences_ + offset;
    for (std::size_t i = 0; i < n; ++i) difference[i] = test[i] - reference[i];
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(reference[i]) || !std::isfinite(test[i])) {
      ++figures.non_finite;
      continue;
    }
    const double error = double(test[i]) - double(reference[i]);
    if (std::abs(error) > overall.max_abs || overall.points == 0) {
      figures.max_index = offset + i;
      figures.reference_at_max = reference[i];
      figures.test_at_max = test[i];
    }
    overall.add(reference[i], error);
    if (shell) sums[1 + shell[i]].add(reference[i], error);
  }
}

void MapComparison::add(std::int64_t z_begin, std::int64_t planes, const float* reference,
                        const float* test) {
  if (histogram_started_) throw Error("compare: add() after the histogram sweep began");
  slab_points(z_begin, planes);
  for (std::int64_t p = 0; p < planes; ++p)
    if (plane_added_[std::size_t(z_begin + p)])
      throw Error(fmt::format("compare: plane {} was added twice", z_begin + p));
  const std::int64_t first = z_begin * std::int64_t(parts_per_plane_);
  const std::int64_t parts = planes * std::int64_t(parts_per_plane_);
  const std::size_t slab_offset = std::size_t(z_begin) * grid_.plane_size();
  const std::size_t part_rows = std::size_t(kRowsPerPart) * std::size_t(grid_.nx());
  const int threads = threads_ > 0 ? threads_ : team_size();
#pragma omp parallel for schedule(dynamic, 4) num_threads(int(std::min<std::int64_t>(parts, threads)))
  for (std::int64_t p = first; p < first + parts; ++p) {
    const std::size_t part = std::size_t(p);
    const std::size_t offset = (part / parts_per_plane_) * grid_.plane_size() +
                               (part % parts_per_plane_) * part_rows - slab_offset;
    add_part(part, reference + offset, test + offset);
  }
  for (std::int64_t p = 0; p < planes; ++p) plane_added_[std::size_t(z_begin + p)] = 1;
  planes_added_ += planes;
}

double MapComparison::max_abs_error() const {
  double most = 0;
  for (std::size_t part = 0; part < part_figures_.size(); ++part)
    most = std::max(most, part_sums_[part * sums_per_part_].max_abs);
  return most;
}

void MapComparison::add_histogram_part(prims::ValueHistogram part) {
  if (!histogram_started_) {
    histogram_ = std::move(part);
    histogram_started_ = true;
    return;
  }
  for (std::size_t b = 0; b < part.counts.size(); ++b) histogram_.counts[b] += part.counts[b];
  histogram_.underflow += part.underflow;
  histogram_.overflow += part.overflow;
  histogram_.nan += part.nan;
}

void MapComparison::add_to_histogram(std::int64_t z_begin, std::int64_t planes, const float* reference,
                                     const float* test) {
  const std::size_t n = slab_points(z_begin, planes);
  std::vector<float> difference(n);
  for (std::size_t i = 0; i < n; ++i) difference[i] = test[i] - reference[i];
  const double range = histogram_range(max_abs_error());
  add_histogram_part(prims::histogram_values_cpu(difference.data(), n, -range, range, options_.histogram_bins));
}

void MapComparison::histogram_of_held_differences() {
  if (!differences_) throw Error("compare: no differences are held (hold_differences())");
  if (histogram_started_) throw Error("compare: the histogram sweep was already made");
  if (planes_added_ != grid_.nz())
    throw Error(fmt::format("compare: the histogram of the differences needs every plane; {} of {} were "
                            "added",
                            planes_added_, grid_.nz()));
  const double range = histogram_range(max_abs_error());
  add_histogram_part(prims::histogram_values_cpu(differences_, grid_.point_count(), -range, range,
                                                 options_.histogram_bins));
}

CompareReport MapComparison::report(bool with_difference) const {
  if (planes_added_ != grid_.nz())
    throw Error(fmt::format("compare: {} of the grid's {} planes were compared", planes_added_, grid_.nz()));
  if (!histogram_started_) throw Error("compare: the histogram sweep was not made");
  if (with_difference && !differences_)
    throw Error("compare: the differences were not held (hold_differences())");
  // The parts' sums in grid order; the first part holding the largest error gives its place.
  ErrorSums overall;
  std::vector<ErrorSums> shells(sums_per_part_ - 1);
  CompareReport report;
  const PartFigures* at_max = nullptr;
  for (std::size_t part = 0; part < part_figures_.size(); ++part) {
    const ErrorSums* sums = part_sums_.data() + part * sums_per_part_;
    if (sums[0].points > 0 && (overall.points == 0 || sums[0].max_abs > overall.max_abs))
      at_max = &part_figures_[part];
    overall.merge(sums[0]);
    for (std::size_t s = 0; s < shells.size(); ++s) shells[s].merge(sums[1 + s]);
    report.non_finite += part_figures_[part].non_finite;
  }
  report.grid = grid_;
  report.overall = overall.summary();
  const auto& edges = options_.shell_edges;
  for (std::size_t s = 0; s < shells.size(); ++s)
    report.shells.push_back({edges[s], s + 1 < edges.size() ? edges[s + 1] : kInf, shells[s].summary()});
  if (at_max) {
    report.max_index = at_max->max_index;
    report.max_ijk = grid_.ijk(at_max->max_index);
    report.max_position = grid_.position(report.max_ijk[0], report.max_ijk[1], report.max_ijk[2]);
    report.reference_at_max = at_max->reference_at_max;
    report.test_at_max = at_max->test_at_max;
  }
  report.error_histogram = histogram_;
  if (with_difference) report.difference.assign(differences_, differences_ + grid_.point_count());
  return report;
}

CompareReport compare_maps(const GridSpec& grid, std::span<const float> reference,
                           std::span<const float> test, const AtomSet* atoms,
                           const CompareOptions& options) {
  MapComparison comparison(grid, atoms, options);
  const std::size_t n = grid.point_count();
  if (reference.size() != n || test.size() != n)
    throw Error(fmt::format("compare: a map of {} points needs {} values, got {} and {}",
                            grid.describe(), n, reference.size(), test.size()));
  comparison.hold_differences();
  comparison.add(0, grid.nz(), reference.data(), test.data());
  comparison.histogram_of_held_differences();
  return comparison.report(options.keep_difference);
}

CompareReport compare_maps(const io::MapFile& reference, const io::MapFile& test, const AtomSet* atoms,
                           const CompareOptions& options) {
  require_same_grid(reference.grid, test.grid, options.grid_tolerance);
  // Empty units: a format that records none (CCP4/MRC, foreign cube files) takes the other's.
  const std::string& ref_units = reference.meta.units;
  const std::string& test_units = test.meta.units;
  if (!ref_units.empty() && !test_units.empty() && ref_units != test_units)
    throw Error("the maps are in different units: " + ref_units + " against " + test_units);
  CompareReport report = compare_maps(reference.grid, reference.data, test.data, atoms, options);
  report.units = ref_units.empty() ? test_units : ref_units;
  return report;
}

nlohmann::json CompareReport::to_json() const {
  nlohmann::json j;
  j["grid"] = {{"dims", grid.dims}, {"origin", grid.origin}, {"spacing", grid.spacing}};
  j["units"] = units;
  j["overall"] = overall.to_json();
  j["non_finite_points"] = non_finite;
  j["max_error"] = {{"index", max_index},
                    {"ijk", max_ijk},
                    {"position", max_position},
                    {"reference", reference_at_max},
                    {"test", test_at_max}};
  j["error_histogram"] = {{"lo", error_histogram.lo},
                          {"hi", error_histogram.hi},
                          {"counts", error_histogram.counts},
                          {"underflow", error_histogram.underflow},
                          {"overflow", error_histogram.overflow},
                          {"nan", error_histogram.nan}};
  nlohmann::json shell_list = nlohmann::json::array();
  for (const ShellError& s : shells) {
    nlohmann::json e = s.error.to_json();
    e["r_lo"] = s.r_lo;
    e["r_hi"] = finite_or_null(s.r_hi);
    shell_list.push_back(e);
  }
  j["shells"] = shell_list;
  return j;
}

std::string CompareReport::table() const {
  const std::string unit = units.empty() ? "" : " " + units;
  std::string out = fmt::format("Test minus reference on {}; errors in{}\n", grid.describe(),
                                unit.empty() ? " map units" : unit);
  out += fmt::format("  {:<14} {:>10} {:>11} {:>11} {:>11} {:>11}\n", "points", "count", "RMS error",
                     "max |error|", "rel. L2", "RMS value");
  const auto row = [&](const std::string& name, const ErrorSummary& e) {
    out += fmt::format("  {:<14} {:>10} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e}\n", name, e.points,
                       e.rms_error, e.max_abs_error, e.relative_l2, e.rms_reference);
  };
  row("all", overall);
  for (const ShellError& s : shells)
    row(std::isfinite(s.r_hi) ? fmt::format("{:g}-{:g} Å", s.r_lo, s.r_hi) : fmt::format(">{:g} Å", s.r_lo),
        s.error);
  if (non_finite) out += fmt::format("  {} points where a map is NaN or infinite were left out\n", non_finite);
  if (overall.points)
    out += fmt::format("  largest error {:.4g} at point ({}, {}, {}), {} Å: reference {:.6g}, test {:.6g}\n",
                       test_at_max - reference_at_max, max_ijk[0], max_ijk[1], max_ijk[2],
                       grid_vector(max_position), reference_at_max, test_at_max);
  const auto& h = error_histogram;
  const std::uint64_t most = h.counts.empty() ? 0 : *std::max_element(h.counts.begin(), h.counts.end());
  out += fmt::format("  error histogram, {} bins over [{:.3g}, {:.3g}]:\n", h.counts.size(), h.lo, h.hi);
  const double width = (h.hi - h.lo) / double(std::max<std::size_t>(1, h.counts.size()));
  for (std::size_t b = 0; b < h.counts.size(); ++b) {
    if (h.counts[b] == 0) continue;
    const int bar = most ? int(std::lround(40.0 * double(h.counts[b]) / double(most))) : 0;
    out += fmt::format("  {:>11.3e} {:>10} {}\n", h.lo + (b + 0.5) * width, h.counts[b],
                       std::string(std::size_t(std::max(bar, 1)), '#'));
  }
  return out;
}

}  // namespace dcsgrid::analysis
