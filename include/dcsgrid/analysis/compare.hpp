// How far one potential map (the test) is from another (the reference) on the same grid: RMS,
// maximum and relative L2 error, where the largest error is, an error histogram, and the error by
// distance from the nearest atom (in shells), for `dcsgrid compare REFERENCE TEST`.
// The error is test − reference; relative errors are taken against the reference.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/maps/io.hpp"
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
  void merge(const ErrorSums& other);  // other's points after these
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

// Which shell of distance from the nearest atom each grid point lies in, one byte a point (x
// fastest): computed once for a grid and shared by every comparison on it (the passes of one job).
// The rule, the same as the float64 brute force's: d2 = min over atoms of (Δx² + Δy² + Δz²) in
// float64 (Δ = point − atom, point at GridSpec::position), the point's distance d = float(√d2),
// and the shell s with edges[s] ≤ d < edges[s+1]; d2 ≥ edges.back()² counts as beyond the last
// edge. A point exactly on an edge (up to that float rounding) belongs to the shell above it.
struct AtomShells {
  GridSpec grid;
  std::vector<double> edges;
  std::vector<std::uint8_t> shell;
};
inline constexpr std::size_t kMaxShells = 256;  // shell indices are bytes

// Throws Error unless the edges rise strictly from 0, finite, at most kMaxShells of them.
void validate_shell_edges(const std::vector<double>& edges);

// Exact and about linear in points plus atoms: blocks of points are halved down to single points
// only where a shell edge passes near them (compare_distance.cpp); OpenMP threads over blocks.
AtomShells atom_shells(const AtomSet& atoms, const GridSpec& grid, const std::vector<double>& edges);

// A comparison built slab by slab, so that neither map need be held whole (the maps of one run
// streamed to disk). Two sweeps over the planes: add() gathers the errors; the histogram, whose
// range is the largest error, needs add_to_histogram() over every plane once add() has seen them
// all, or histogram_of_held_differences() after hold_differences(). Slabs come in any order, each
// plane once per sweep, and give the same report whatever the order, the slabs' sizes and the
// threads: the sums run in point order over parts of kRowsPerPart rows of a plane (OpenMP threads
// take a slab's parts apart), and report() adds the parts' sums in grid order.
class MapComparison {
 public:
  static constexpr std::int64_t kRowsPerPart = 16;

  // atoms (optional, may be empty): the structure, for the shells (computed here).
  MapComparison(const GridSpec& grid, const AtomSet* atoms = nullptr, const CompareOptions& options = {});
  // The shells computed once for the grid (atom_shells, with options.shell_edges).
  MapComparison(const GridSpec& grid, std::shared_ptr<const AtomShells> shells,
                const CompareOptions& options = {});
  // Keep test − reference (float32, a map's size) as add() computes it, so that the histogram
  // needs neither map again: in `buffer` (the grid's point count, kept alive by the caller, who may
  // have touched its pages ahead) or, when it is empty, in memory of its own. Before the first add().
  void hold_differences(std::span<float> buffer = {});
  // The OpenMP threads add() takes (0, the default: team_size()); fewer leave cores to the caller's
  // other threads, such as one writing the slab meanwhile.
  void set_threads(int threads) { threads_ = threads; }
  // Planes [z_begin, z_begin+planes) of both maps, x fastest.
  void add(std::int64_t z_begin, std::int64_t planes, const float* reference, const float* test);
  void add_to_histogram(std::int64_t z_begin, std::int64_t planes, const float* reference,
                        const float* test);
  // The histogram sweep over the held differences, all planes at once.
  void histogram_of_held_differences();
  // Throws Error unless both sweeps covered every plane. With `with_difference`, the held
  // differences are copied into CompareReport::difference.
  CompareReport report(bool with_difference = false) const;

 private:
  // One part's figures, in point order.
  struct PartFigures {
    std::size_t non_finite = 0;
    std::size_t max_index = 0;  // the part's first point with its largest |error|
    double reference_at_max = 0, test_at_max = 0;
  };
  std::size_t slab_points(std::int64_t z_begin, std::int64_t planes) const;
  void add_part(std::size_t part, const float* reference, const float* test);
  void add_histogram_part(prims::ValueHistogram part);
  double max_abs_error() const;

  GridSpec grid_;
  CompareOptions options_;
  std::shared_ptr<const AtomShells> atom_shells_;  // null without atoms
  std::size_t parts_per_plane_;
  std::size_t sums_per_part_;                      // 1 + the shells' count
  std::vector<ErrorSums> part_sums_;               // a part's overall sums, then its shells', parts in grid order
  std::vector<PartFigures> part_figures_;
  std::vector<std::uint8_t> plane_added_;
  std::int64_t planes_added_ = 0;
  int threads_ = 0;
  std::unique_ptr<float[]> own_differences_;       // when no buffer is given: not zeroed, add() fills it
  float* differences_ = nullptr;                   // a map's size once held
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

}  // namespace dcsgrid::analysis
