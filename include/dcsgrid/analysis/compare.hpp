// How far one potential map (the test) is from another (the reference) on the same grid: RMS,
// maximum and relative L2 error, where the largest error is, an error histogram, and the error by
// distance from the nearest atom (in shells), for `dcsgrid compare REFERENCE TEST`.
// The error is test − reference; relative errors are taken against the reference.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/map_io.hpp"
#include "dcsgrid/prims/histogram.hpp"

namespace dcsgrid::analysis {

struct CompareOptions {
  // Shells of distance from the nearest atom, Å: [e0, e1), [e1, e2), ..., [e_last, ∞). Ascending,
  // starting at 0.
  std::vector<double> shell_edges{0, 2, 4, 8, 12, 20};
  std::uint32_t histogram_bins = 40;  // over [−max |error|, max |error|]
  bool keep_difference = false;       // fill CompareReport::difference
  // In spacings: grids whose points lie within this fraction of the spacing of each other are the
  // same (the origins, and the last points, which spacings' differences move farthest).
  double grid_tolerance = 1e-3;
};

// Errors over a set of points (sums in double).
struct ErrorSummary {
  std::size_t points = 0;
  double rms_error = 0;      // sqrt(mean (test − reference)²)
  double max_abs_error = 0;
  double relative_l2 = 0;    // ‖test − reference‖ / ‖reference‖ (‖test − reference‖ when ‖reference‖ = 0)
  double rms_reference = 0;  // sqrt(mean reference²), for scale
  nlohmann::json to_json() const;
};

// Running sums for an ErrorSummary.
struct ErrorSums {
  std::size_t points = 0;
  double error2 = 0, reference2 = 0, max_abs = 0;
  void add(double reference, double error);
  ErrorSummary summary() const;
};

struct ShellError {
  double r_lo = 0, r_hi = 0;  // Å; r_hi is +inf for the last shell
  ErrorSummary error;
};

struct CompareReport {
  GridSpec grid;
  std::string units;
  ErrorSummary overall;         // over the points where both maps are finite
  std::size_t non_finite = 0;   // points where either map is NaN or ±inf (left out)
  // The largest |error|: its index (x fastest), grid indices, position (Å) and the two values.
  std::size_t max_index = 0;
  std::array<std::int64_t, 3> max_ijk{};
  std::array<double, 3> max_position{};
  double reference_at_max = 0, test_at_max = 0;
  prims::ValueHistogram error_histogram;  // of test − reference, finite points
  std::vector<ShellError> shells;         // by distance from the nearest atom; empty without atoms
  std::vector<float> difference;          // test − reference, when CompareOptions::keep_difference

  nlohmann::json to_json() const;  // everything but the difference map
  std::string table() const;       // for a terminal
};

// A comparison built slab by slab, so that neither map need be held whole (the maps of one run
// streamed to disk). Two sweeps over the planes: add() gathers the errors; the histogram, whose
// range is the largest error, needs add_to_histogram() over every plane once add() has seen them
// all. Slabs come in any order, each once per sweep.
class MapComparison {
 public:
  MapComparison(const GridSpec& grid, const AtomSet* atoms = nullptr, const CompareOptions& options = {});
  // Planes [z_begin, z_begin+planes) of both maps, x fastest.
  void add(std::int64_t z_begin, std::int64_t planes, const float* reference, const float* test);
  void add_to_histogram(std::int64_t z_begin, std::int64_t planes, const float* reference,
                        const float* test);
  // Throws Error unless both sweeps covered every plane.
  CompareReport report() const;

 private:
  GridSpec slab_grid(std::int64_t z_begin, std::int64_t planes) const;
  double histogram_range() const;

  GridSpec grid_;
  const AtomSet* atoms_;
  CompareOptions options_;
  ErrorSums overall_;
  std::vector<ErrorSums> shells_;
  std::size_t non_finite_ = 0;
  std::size_t max_index_ = 0;
  double reference_at_max_ = 0, test_at_max_ = 0;
  std::int64_t planes_added_ = 0;
  bool histogram_started_ = false;
  prims::ValueHistogram histogram_;
};

// Throws Error saying how the grids differ: point counts, or which of origin and spacing moves a
// point by more than tolerance spacings (along which axes; both grids' values printed in full).
void require_same_grid(const GridSpec& reference, const GridSpec& test, double tolerance = 1e-3);

// Both maps on grid (x fastest). atoms (optional): the structure, for the shells. Throws Error when
// a map's size does not match the grid or the options are invalid.
CompareReport compare_maps(const GridSpec& grid, std::span<const float> reference,
                           std::span<const float> test, const AtomSet* atoms = nullptr,
                           const CompareOptions& options = {});
// Two map files (io::read_map): the grids must match (require_same_grid) and so must the units
// where both files record them.
CompareReport compare_maps(const io::MapFile& reference, const io::MapFile& test,
                           const AtomSet* atoms = nullptr, const CompareOptions& options = {});

// Distance (Å) from every grid point to the nearest atom, +inf where none lies within
// max_distance. A cell list searched ring by ring, with empty regions skipped through each cell's
// distance to the nearest occupied cell; OpenMP threads over planes.
std::vector<float> nearest_atom_distance(const AtomSet& atoms, const GridSpec& grid,
                                         double max_distance);

}  // namespace dcsgrid::analysis
