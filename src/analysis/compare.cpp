// Comparing two maps (compare.hpp).
#include "dcsgrid/analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::analysis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Running sums for an ErrorSummary.
struct ErrorSums {
  std::size_t points = 0;
  double error2 = 0, reference2 = 0, max_abs = 0;
  void add(double reference, double error) {
    ++points;
    error2 += error * error;
    reference2 += reference * reference;
    max_abs = std::max(max_abs, std::abs(error));
  }
  void merge(const ErrorSums& o) {
    points += o.points;
    error2 += o.error2;
    reference2 += o.reference2;
    max_abs = std::max(max_abs, o.max_abs);
  }
  ErrorSummary summary() const {
    ErrorSummary s;
    s.points = points;
    if (points == 0) return s;
    s.rms_error = std::sqrt(error2 / double(points));
    s.rms_reference = std::sqrt(reference2 / double(points));
    s.max_abs_error = max_abs;
    s.relative_l2 = reference2 > 0 ? std::sqrt(error2 / reference2) : std::sqrt(error2);
    return s;
  }
};

void validate(const CompareOptions& o) {
  const auto& e = o.shell_edges;
  if (e.empty() || e.front() != 0 || !std::is_sorted(e.begin(), e.end()) ||
      std::adjacent_find(e.begin(), e.end()) != e.end() || !std::isfinite(e.back()))
    throw Error("compare: shell edges must rise strictly from 0, in Å (for example 0,2,4,8,12,20)");
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

}  // namespace

nlohmann::json ErrorSummary::to_json() const {
  return {{"points", points},           {"rms_error", rms_error}, {"max_abs_error", max_abs_error},
          {"relative_l2", relative_l2}, {"rms_reference", rms_reference}};
}

void require_same_grid(const GridSpec& reference, const GridSpec& test, double tolerance) {
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

CompareReport compare_maps(const GridSpec& grid, std::span<const float> reference,
                           std::span<const float> test, const AtomSet* atoms,
                           const CompareOptions& options) {
  validate(grid);
  validate(options);
  const std::size_t n = grid.point_count();
  if (reference.size() != n || test.size() != n)
    throw Error(fmt::format("compare: a map of {} points needs {} values, got {} and {}",
                            grid.describe(), n, reference.size(), test.size()));
  CompareReport report;
  report.grid = grid;

  std::vector<float> difference(n);
  const auto& edges = options.shell_edges;
  const std::vector<float> distance =
      atoms && !atoms->empty() ? nearest_atom_distance(*atoms, grid, edges.back()) : std::vector<float>();
  std::vector<ErrorSums> shells(distance.empty() ? 0 : edges.size());
  ErrorSums overall;
  for (std::size_t i = 0; i < n; ++i) {
    difference[i] = test[i] - reference[i];
    if (!std::isfinite(reference[i]) || !std::isfinite(test[i])) {
      ++report.non_finite;
      continue;
    }
    const double error = double(test[i]) - double(reference[i]);
    if (std::abs(error) > overall.max_abs || overall.points == 0) report.max_index = i;
    overall.add(reference[i], error);
    if (!shells.empty()) {
      // Shell s holds [edges[s], edges[s+1]); the last is open (distance +inf included).
      const std::size_t s = std::size_t(std::upper_bound(edges.begin(), edges.end(), double(distance[i])) -
                                        edges.begin()) - 1;
      shells[s].add(reference[i], error);
    }
  }
  report.overall = overall.summary();
  for (std::size_t s = 0; s < shells.size(); ++s)
    report.shells.push_back({edges[s], s + 1 < edges.size() ? edges[s + 1] : kInf, shells[s].summary()});

  if (overall.points > 0) {
    const auto ijk = grid.ijk(report.max_index);
    report.max_ijk = ijk;
    report.max_position = grid.position(ijk[0], ijk[1], ijk[2]);
    report.reference_at_max = reference[report.max_index];
    report.test_at_max = test[report.max_index];
  }
  // Symmetric range just past the largest error, so that it falls in the last bin.
  const double range = overall.max_abs > 0 ? overall.max_abs * (1 + 1e-6) : 1.0;
  report.error_histogram =
      prims::histogram_values_cpu(difference.data(), n, -range, range, options.histogram_bins);
  if (options.keep_difference) report.difference = std::move(difference);
  return report;
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
