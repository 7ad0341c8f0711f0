// Map statistics: min, max, mean, standard deviation and a histogram of one map, or of every
// frame of a batch file. Sums are taken in double over fixed blocks combined in block order, so
// the result does not depend on the thread count (a resumed batch stores the same numbers).
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dcsgrid::analysis {

struct HistogramOptions {
  int bins = 100;
  // Range of the histogram. Both NaN: each map's own [min, max]. Values outside the range are
  // counted in below/above, not in the bins.
  double lo = std::numeric_limits<double>::quiet_NaN();
  double hi = std::numeric_limits<double>::quiet_NaN();
};
// Throws Error for bins < 1, a half-given range or lo >= hi.
void validate(const HistogramOptions& options);

struct MapStats {
  std::size_t count = 0;       // finite values (the statistics cover these only)
  std::size_t non_finite = 0;  // NaN/inf values, skipped
  double min = 0, max = 0, mean = 0;
  double stddev = 0;            // population standard deviation (divides by count)
  std::vector<double> edges;    // bins + 1, ascending
  // Bin b counts edges[b] <= v < edges[b+1]. With the automatic range [min, max] the maximum
  // itself goes into the last bin; with a given range, v = hi counts as above.
  std::vector<std::uint64_t> counts;
  std::uint64_t below = 0, above = 0;  // finite values outside the range
  nlohmann::json to_json() const;
};

// Statistics of one map's values on the CPU (histogram from prims' histogram_values_cpu).
MapStats map_stats(std::span<const float> values, const HistogramOptions& options = {});

// Statistics of every map in an HDF5 file written by dcsgrid (one for a single map, one per
// complete frame of a batch file; pending/failed frames are left out).
struct FileStatsOptions {
  std::filesystem::path file;
  HistogramOptions histogram;
  // Store them under /analysis (stats, histogram, histogram_edges) in the file. The file is
  // rewritten under a temporary name and renamed, so a crash leaves the original intact.
  bool write = false;
};
struct FileStats {
  std::string file;
  std::string units;
  std::vector<std::size_t> frames;  // frame index of each entry (0 for a single map)
  std::vector<MapStats> maps;
  nlohmann::json to_json() const;
};
FileStats file_stats(const FileStatsOptions& options);
// What a file stores under /analysis (written by file_stats or run_batch), nullopt when nothing.
std::optional<FileStats> read_stored_stats(const std::filesystem::path& file);

}  // namespace dcsgrid::analysis
