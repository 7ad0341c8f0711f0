// The running sums of `batch --average`, and their file: an interrupted run (a failed frame with
// --fail-fast, an error, a kill) keeps what it had summed, and --resume continues from it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "app/batch/resume.hpp"
#include "dcsgrid/analysis/frame_table.hpp"
#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/grid.hpp"

namespace dcsgrid::app {

struct AverageSums {
  std::vector<float> shift;          // s: the first map added
  std::vector<double> sum, squares;  // Σ (v − s) and Σ (v − s)² per point
  std::size_t count = 0;             // maps added
  std::vector<std::int8_t> added;    // per frame of the batch's table: 1 once its map is in the sums
  // Periodic frames of changing cells: Σ of the maps from the reference cell's lattice to theirs
  // (lower triangular): the diagonal in scale_sum, the rest (m10, m20, m21) in shear_sum.
  Vec3 scale_sum{};
  Vec3 shear_sum{};
  std::size_t scaled_frames = 0;
  bool cells_varied = false;
  std::optional<UnitCell> reference;  // the cell those scalings are from

  AverageSums(std::size_t points, std::size_t frames)
      : shift(points), sum(points), squares(points), added(frames, 0) {}
};

// "<output>.sums.h5", beside the output.
std::filesystem::path average_sums_path(const std::filesystem::path& output);

// Writes the sums of a run on `grid` to `path` (a temporary renamed over it, so a kill leaves the
// last whole file) with the options' fingerprint and the inputs' checksums.
void save_average_sums(const std::filesystem::path& path, const AverageSums& sums, const GridSpec& grid,
                       const nlohmann::json& fingerprint, const Checksums& inputs);

// Reads the sums `path` keeps into `sums` (sized for the batch's grid and table). Throws Error when
// an option differs from the fingerprint, the grid from `grid`, or the input of a summed frame
// has changed; InputError when the file is not such sums or does not fit the table.
void load_average_sums(const std::filesystem::path& path, AverageSums& sums, const GridSpec& grid,
                       const analysis::FrameTable& frames, const nlohmann::json& fingerprint,
                       const Checksums& inputs);

}  // namespace dcsgrid::app
