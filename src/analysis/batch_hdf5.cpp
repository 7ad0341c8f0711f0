#include "batch_hdf5.hpp"

#include <algorithm>
#include <limits>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::analysis::h5 {

namespace {

constexpr std::size_t kStatsColumns = 6;  // min max mean std count non_finite

[[noreturn]] void fail(const Path& path, const std::string& problem) {
  throw InputError(path.string(), 0, problem);
}

}  // namespace

void create_stats_datasets(hid_t file, std::size_t frames, std::size_t bins, const std::string& units,
                           const Path& path) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> stats(frames * kStatsColumns, nan), edges(frames * (bins + 1), nan);
  const std::vector<std::uint64_t> counts(frames * (bins + 2), 0);
  Handle s = create_column(file, names::stats, {frames, kStatsColumns}, H5T_IEEE_F64LE,
                           H5T_NATIVE_DOUBLE, stats.data(), path);
  write_attribute(s.get(), "columns", std::string("min max mean std count non_finite"),
                            path);
  write_attribute(s.get(), "units", units, path);
  Handle h = create_column(file, names::histogram, {frames, bins + 2}, H5T_STD_U64LE,
                           H5T_NATIVE_UINT64, counts.data(), path);
  write_attribute(h.get(), "columns",
                            std::string("bins, then the counts below and above the range"), path);
  create_column(file, names::edges, {frames, bins + 1}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                edges.data(), path);
}

void write_stats_rows(hid_t file, std::span<const std::size_t> frames,
                      std::span<const MapStats* const> stats, std::size_t bins, const Path& path) {
  const std::size_t n = frames.size();
  std::vector<double> rows(n * kStatsColumns), edges(n * (bins + 1));
  std::vector<std::uint64_t> counts(n * (bins + 2));
  for (std::size_t k = 0; k < n; ++k) {
    const MapStats& s = *stats[k];
    if (s.counts.size() != bins || s.edges.size() != bins + 1)
      throw Error(path.string() + ": frame " + std::to_string(frames[k]) + " needs a histogram of " +
                  std::to_string(bins) + " bins");
    const double row[kStatsColumns] = {s.min,    s.max,          s.mean,
                                       s.stddev, double(s.count), double(s.non_finite)};
    std::copy_n(row, kStatsColumns, rows.begin() + std::ptrdiff_t(k * kStatsColumns));
    const auto c = counts.begin() + std::ptrdiff_t(k * (bins + 2));
    std::copy(s.counts.begin(), s.counts.end(), c);
    c[std::ptrdiff_t(bins)] = s.below;
    c[std::ptrdiff_t(bins) + 1] = s.above;
    std::copy(s.edges.begin(), s.edges.end(), edges.begin() + std::ptrdiff_t(k * (bins + 1)));
  }
  write_rows(open_dataset(file, names::stats, path), frames, H5T_NATIVE_DOUBLE, rows.data(), path);
  write_rows(open_dataset(file, names::histogram, path), frames, H5T_NATIVE_UINT64, counts.data(), path);
  write_rows(open_dataset(file, names::edges, path), frames, H5T_NATIVE_DOUBLE, edges.data(), path);
}

std::vector<MapStats> read_stats_rows(hid_t file, const Path& path) {
  Dataset s = open_dataset(file, names::stats, path);
  Dataset h = open_dataset(file, names::histogram, path);
  Dataset e = open_dataset(file, names::edges, path);
  const std::vector<hsize_t> ss = shape(s.get(), path), hs = shape(h.get(), path);
  if (ss.size() != 2 || ss[1] != kStatsColumns || hs.size() != 2 || hs[0] != ss[0] || hs[1] < 3)
    fail(path, "/analysis/stats and /analysis/histogram have unexpected shapes");
  const std::size_t frames = ss[0], bins = hs[1] - 2;
  check_fits_in_file(h.get(), frames, (bins + 2) * sizeof(std::uint64_t), path);
  check_fits_in_file(s.get(), frames, kStatsColumns * sizeof(double), path);
  std::vector<double> stats(frames * kStatsColumns), edges(frames * (bins + 1));
  std::vector<std::uint64_t> counts(frames * (bins + 2));
  read_column(s, stats.size(), H5T_NATIVE_DOUBLE, stats.data(), path);
  read_column(h, counts.size(), H5T_NATIVE_UINT64, counts.data(), path);
  read_column(e, edges.size(), H5T_NATIVE_DOUBLE, edges.data(), path);
  std::vector<MapStats> rows(frames);
  for (std::size_t f = 0; f < frames; ++f) {
    MapStats& m = rows[f];
    const double* row = stats.data() + f * kStatsColumns;
    m.min = row[0];
    m.max = row[1];
    m.mean = row[2];
    m.stddev = row[3];
    m.count = row[4] >= 0 ? std::size_t(row[4]) : 0;  // NaN in rows never written
    m.non_finite = row[5] >= 0 ? std::size_t(row[5]) : 0;
    const auto c = counts.begin() + std::ptrdiff_t(f * (bins + 2));
    m.counts.assign(c, c + std::ptrdiff_t(bins));
    m.below = c[std::ptrdiff_t(bins)];
    m.above = c[std::ptrdiff_t(bins) + 1];
    const auto b = edges.begin() + std::ptrdiff_t(f * (bins + 1));
    m.edges.assign(b, b + std::ptrdiff_t(bins + 1));
  }
  return rows;
}


}  // namespace dcsgrid::analysis::h5
