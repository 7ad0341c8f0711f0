// Map statistics: block partial sums in double combined in block order (deterministic for any
// thread count; stats_blocks.hpp), the histogram from prims' histogram_values_cpu.
#include "dcsgrid/analysis/stats.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <cmath>

#include <spdlog/fmt/fmt.h>

#include "batch_hdf5.hpp"
#include "stats_blocks.hpp"
#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/analysis/device_stats.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/files/output_checks.hpp"
#include "dcsgrid/prims/histogram.hpp"
#include "dcsgrid/io/maps/reader.hpp"

namespace dcsgrid::analysis {

namespace fs = std::filesystem;

namespace {

using detail::kStatsBlock;
using detail::kStatsLanes;
using detail::StatsLane;
using detail::StatsPartial;

// A block is summed in 8 lanes of GCC/Clang vector types, combined in lane order: scalar loops
// with branches ran at 4 ns a value (a 1HPV frame on a 1 Å grid: 1.3 ms of stats), and GCC
// vectorises no form of them that keeps NaN and infinities apart. The order depends on the block
// only, not on the threads (stats_blocks.hpp).
using Floats = float __attribute__((vector_size(32)));
using Doubles = double __attribute__((vector_size(32)));
using Ints = std::int32_t __attribute__((vector_size(32)));
static_assert(sizeof(Floats) / sizeof(float) == kStatsLanes);

Floats load(const float* v) {
  Floats x;
  std::memcpy(&x, v, sizeof x);
  return x;
}
Doubles low_half(Floats x) { return __builtin_convertvector(__builtin_shufflevector(x, x, 0, 1, 2, 3), Doubles); }
Doubles high_half(Floats x) { return __builtin_convertvector(__builtin_shufflevector(x, x, 4, 5, 6, 7), Doubles); }
using Longs = std::int64_t __attribute__((vector_size(32)));
Longs low_half(Ints m) { return __builtin_convertvector(__builtin_shufflevector(m, m, 0, 1, 2, 3), Longs); }
Longs high_half(Ints m) { return __builtin_convertvector(__builtin_shufflevector(m, m, 4, 5, 6, 7), Longs); }
// -1 where x is finite (x - x is 0 there, NaN for NaN and ±inf), else 0.
Ints finite_mask(Floats x) { return x - x == 0; }

void add_value(StatsPartial& p, float x) {
  if (std::isfinite(x)) {
    ++p.count;
    p.sum += x;
    p.min = std::min(p.min, double(x));
    p.max = std::max(p.max, double(x));
  } else {
    ++(std::isnan(x) ? p.nan : x < 0 ? p.neg_inf : p.pos_inf);
  }
}

StatsPartial block_partial(const float* v, std::size_t begin, std::size_t end) {
  Doubles sum_low{}, sum_high{};
  Floats lo = Floats{} + INFINITY, hi = Floats{} - INFINITY;
  Ints count{}, nan{}, neg_inf{};
  const std::size_t in_lanes = detail::lane_values(begin, end);
  for (std::size_t i = begin; i < begin + in_lanes; i += kStatsLanes) {
    const Floats x = load(v + i);
    const Ints f = finite_mask(x);
    const Floats kept = f ? x : Floats{};
    sum_low += low_half(kept);
    sum_high += high_half(kept);
    lo = (f & (x < lo)) ? x : lo;
    hi = (f & (x > hi)) ? x : hi;
    count -= f;
    nan -= x != x;
    neg_inf -= x == -INFINITY;
  }
  std::array<StatsLane, kStatsLanes> lanes;
  for (std::size_t l = 0; l < kStatsLanes; ++l)
    lanes[l] = {l < 4 ? sum_low[l] : sum_high[l - 4], lo[l], hi[l], std::uint32_t(count[l]),
                std::uint32_t(nan[l]), std::uint32_t(neg_inf[l])};
  return detail::combine_lanes(lanes, in_lanes, v + begin + in_lanes, end - begin - in_lanes);
}

// Sum of (x - mean)^2 over the finite values of [begin, end), in lanes as block_partial.
double block_squares(const float* v, std::size_t begin, std::size_t end, double mean) {
  Doubles sum_low{}, sum_high{};
  const std::size_t in_lanes = detail::lane_values(begin, end);
  for (std::size_t i = begin; i < begin + in_lanes; i += kStatsLanes) {
    const Floats x = load(v + i);
    const Ints f = finite_mask(x);
    const Doubles d_low = low_half(x) - mean, d_high = high_half(x) - mean;
    sum_low += low_half(f) ? d_low * d_low : Doubles{};
    sum_high += high_half(f) ? d_high * d_high : Doubles{};
  }
  std::array<double, kStatsLanes> lanes;
  for (std::size_t l = 0; l < kStatsLanes; ++l) lanes[l] = l < 4 ? sum_low[l] : sum_high[l - 4];
  return detail::combine_square_lanes(lanes, v + begin + in_lanes, end - begin - in_lanes, mean);
}

// Runs block(b, begin, end) for every block of n values on OpenMP threads, then returns the
// per-block results in block order.
template <typename T, typename F>
std::vector<T> per_block(std::size_t n, F&& block) {
  const std::size_t blocks = (n + kStatsBlock - 1) / kStatsBlock;
  std::vector<T> out(blocks);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::size_t b = 0; b < blocks; ++b) out[b] = block(b * kStatsBlock, std::min(n, (b + 1) * kStatsBlock));
  return out;
}

// The statistics are written into a copy of the file, renamed over it when complete. A copy that
// meets a full disk reports only "Input/output error" on some file systems (tmpfs), so the free
// space is compared with the file's size first, and again when a copy fails.
void copy_for_statistics(const fs::path& path, const fs::path& copy) {
  const fs::path folder = fs::absolute(path).parent_path();
  const std::uint64_t size = fs::file_size(path);
  const auto refuse_when_full = [&](const std::string& what) {
    const std::uint64_t free = io::free_bytes(folder);
    if (size >= free)
      throw Error(fmt::format("cannot add statistics to {}: {}the copy they are written into needs "
                              "{} bytes, but the disk holding {} has {} bytes free (disk full)",
                              path.string(), what, size, folder.string(), free));
  };
  refuse_when_full("");
  std::error_code ec;
  fs::copy_file(path, copy, ec);
  if (!ec) return;
  refuse_when_full(ec.message() + ": ");
  throw Error("cannot copy " + path.string() + " to add statistics: " + ec.message());
}

}  // namespace

void validate(const HistogramOptions& o) {
  if (o.bins < 1) throw Error(fmt::format("histogram bins must be at least 1, got {}", o.bins));
  const bool lo_set = !std::isnan(o.lo), hi_set = !std::isnan(o.hi);
  if (lo_set != hi_set) throw Error("histogram range: give both ends or neither");
  if (lo_set && !(std::isfinite(o.lo) && std::isfinite(o.hi) && o.lo < o.hi))
    throw Error(fmt::format("histogram range [{}, {}] must be finite with low < high", o.lo, o.hi));
}

namespace detail {

StatsPartial combine_lanes(std::span<const StatsLane, kStatsLanes> lanes, std::size_t in_lanes,
                           const float* tail, std::size_t tail_count) {
  StatsPartial p;
  for (const StatsLane& l : lanes) {
    p.sum += l.sum;
    p.min = std::min(p.min, double(l.lo));
    p.max = std::max(p.max, double(l.hi));
    p.count += l.count;
    p.nan += l.nan;
    p.neg_inf += l.neg_inf;
  }
  p.pos_inf = in_lanes - p.count - p.nan - p.neg_inf;  // the rest of the lanes' values
  for (std::size_t i = 0; i < tail_count; ++i) add_value(p, tail[i]);
  return p;
}

double combine_square_lanes(std::span<const double, kStatsLanes> lanes, const float* tail,
                            std::size_t tail_count, double mean) {
  double total = 0;
  for (std::size_t l = 0; l < 4; ++l) total += lanes[l] + lanes[l + 4];
  for (std::size_t i = 0; i < tail_count; ++i)
    if (std::isfinite(tail[i])) total += (double(tail[i]) - mean) * (double(tail[i]) - mean);
  return total;
}

MapStats stats_from_blocks(std::span<const StatsPartial> blocks, const HistogramOptions& options,
                           const std::function<std::vector<double>(double mean)>& squares,
                           const std::function<prims::ValueHistogram(double lo, double hi, std::uint32_t bins)>& histogram) {
  StatsPartial all;
  for (const StatsPartial& p : blocks) {
    all.count += p.count;
    all.nan += p.nan;
    all.neg_inf += p.neg_inf;
    all.pos_inf += p.pos_inf;
    all.sum += p.sum;
    all.min = std::min(all.min, p.min);
    all.max = std::max(all.max, p.max);
  }
  MapStats s;
  s.count = all.count;
  s.non_finite = all.nan + all.neg_inf + all.pos_inf;
  if (all.count > 0) {
    s.min = all.min;
    s.max = all.max;
    s.mean = all.sum / double(all.count);
    double m2 = 0;
    for (double q : squares(s.mean)) m2 += q;
    s.stddev = std::sqrt(m2 / double(all.count));
  } else {
    s.min = s.max = s.mean = s.stddev = NAN;
  }

  // Range: the given one, or [min, max]; a constant map's is widened each way by 0.5, or by
  // 2^-20 of the value where 0.5 would vanish in its rounding (a map of 1e20 everywhere).
  const bool automatic = std::isnan(options.lo);
  double lo = options.lo, hi = options.hi;
  if (automatic) {
    lo = all.count ? all.min : 0.0;
    hi = all.count ? all.max : 1.0;
    if (!(lo < hi)) {
      const double widening = std::max(0.5, std::abs(lo) * 0x1p-20);
      lo -= widening;
      hi += widening;
    }
  }
  const prims::ValueHistogram h = histogram(lo, hi, std::uint32_t(options.bins));
  s.counts = h.counts;
  // Infinities land in under/overflow; they are not finite values outside the range.
  s.below = h.underflow - all.neg_inf;
  s.above = h.overflow - all.pos_inf;
  if (automatic && all.count) {  // the maximum itself is v = hi: it belongs to the last bin
    s.counts.back() += s.above;
    s.above = 0;
  }
  s.edges.resize(std::size_t(options.bins) + 1);
  for (int b = 0; b <= options.bins; ++b) s.edges[std::size_t(b)] = lo + (hi - lo) * b / options.bins;
  return s;
}

}  // namespace detail

#ifndef DCSGRID_HAVE_CUDA
// device_stats.cu in CUDA builds.
struct DeviceMapStats::Impl {};
DeviceMapStats::DeviceMapStats() = default;
DeviceMapStats::~DeviceMapStats() = default;
MapStats DeviceMapStats::compute(const engine::DeviceMap&, std::size_t, const HistogramOptions&) {
  throw Error("statistics of a map on a GPU need a build with CUDA");
}
#endif

MapStats map_stats(std::span<const float> values, const HistogramOptions& options) {
  validate(options);
  const std::size_t n = values.size();
  const float* v = values.data();
  const std::vector<StatsPartial> partials = per_block<StatsPartial>(
      n, [&](std::size_t b, std::size_t e) { return block_partial(v, b, e); });
  return detail::stats_from_blocks(
      partials, options,
      [&](double mean) {
        return per_block<double>(n, [&](std::size_t b, std::size_t e) { return block_squares(v, b, e, mean); });
      },
      [&](double lo, double hi, std::uint32_t bins) { return prims::histogram_values_cpu(v, n, lo, hi, bins); });
}

nlohmann::json MapStats::to_json() const {
  return {{"count", count}, {"non_finite", non_finite}, {"min", min},     {"max", max},
          {"mean", mean},   {"std", stddev},           {"edges", edges}, {"counts", counts},
          {"below", below}, {"above", above}};
}

nlohmann::json FileStats::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < maps.size(); ++i) {
    nlohmann::json m = maps[i].to_json();
    m["frame"] = frames[i];
    list.push_back(std::move(m));
  }
  return {{"file", file}, {"units", units}, {"maps", list}};
}

FileStats file_stats(const FileStatsOptions& options) {
  validate(options.histogram);
  FileStats result;
  result.file = options.file.string();
  std::size_t frames_in_file = 1;
  {
    io::MapReader reader(options.file);
    result.units = reader.meta().units;
    std::vector<float> map(reader.grid().point_count());
    for (std::size_t i = 0; i < reader.size(); ++i) {
      reader.read(i, map.data());
      result.frames.push_back(reader.frame_index(i));
      result.maps.push_back(map_stats(map, options.histogram));
    }
    frames_in_file = reader.frame_count();
  }
  if (!options.write) return result;

  // Into a copy, renamed over the original when complete.
  const fs::path& path = options.file;
  io::AtomicFile atomic(path);
  copy_for_statistics(path, atomic.temp_path());
  io::hdf5::clear_write_mark(atomic.temp_path());  // a batch killed while writing: our copy opens
  {
    std::lock_guard lock(io::hdf5::library_mutex());
    io::hdf5::Handle file = h5::open_file(atomic.temp_path(), true);
    const hid_t f = file.get();
    if (!h5::exists(f, "analysis", path)) h5::create_group(f, "analysis", path);
    for (const char* name : {h5::names::stats, h5::names::histogram, h5::names::edges})
      if (h5::exists(f, name, path))
        io::hdf5::check(H5Ldelete(f, name, H5P_DEFAULT), path, std::string("replace /") + name);
    const std::size_t bins = std::size_t(options.histogram.bins);
    h5::create_stats_datasets(f, frames_in_file, bins, result.units, path);
    std::vector<const MapStats*> rows;
    for (const MapStats& m : result.maps) rows.push_back(&m);
    h5::write_stats_rows(f, result.frames, rows, bins, path);
    io::hdf5::check(io::hdf5::close_temporary_file(file), path, "finish writing the statistics");
  }
  atomic.commit();
  return result;
}

std::optional<FileStats> read_stored_stats(const fs::path& path) {
  io::MapReader reader(path);  // which frames are complete, and the units
  std::lock_guard lock(io::hdf5::library_mutex());
  io::hdf5::Handle file = h5::open_file(path, false);
  if (!h5::exists(file.get(), "analysis", path) || !h5::exists(file.get(), h5::names::stats, path))
    return std::nullopt;
  const std::vector<MapStats> rows = h5::read_stats_rows(file.get(), path);
  FileStats result;
  result.file = path.string();
  result.units = reader.meta().units;
  for (std::size_t i = 0; i < reader.size(); ++i) {
    const std::size_t frame = reader.frame_index(i);
    if (frame >= rows.size())
      throw InputError(path.string(), 0, "/analysis/stats has fewer rows than the file has frames");
    result.frames.push_back(frame);
    result.maps.push_back(rows[frame]);
  }
  return result;
}

}  // namespace dcsgrid::analysis
