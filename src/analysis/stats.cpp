// Map statistics: block partial sums in double combined in block order (deterministic for any
// thread count), the histogram from prims' histogram_values_cpu.
#include "dcsgrid/analysis/stats.hpp"

#include <algorithm>
#include <cstring>
#include <cmath>

#include <spdlog/fmt/fmt.h>

#include "batch_hdf5.hpp"
#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/files/output_checks.hpp"
#include "dcsgrid/prims/histogram.hpp"
#include "dcsgrid/io/maps/reader.hpp"

namespace dcsgrid::analysis {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kBlock = std::size_t(1) << 16;

struct Partial {
  std::size_t count = 0, nan = 0, neg_inf = 0, pos_inf = 0;
  double min = INFINITY, max = -INFINITY, sum = 0;
};

// A block is summed in 8 lanes of GCC/Clang vector types, combined in lane order: scalar loops
// with branches ran at 4 ns a value (a 1HPV frame on a 1 Å grid: 1.3 ms of stats), and GCC
// vectorises no form of them that keeps NaN and infinities apart. The order depends on the block
// only, not on the threads.
using Floats = float __attribute__((vector_size(32)));
using Doubles = double __attribute__((vector_size(32)));
using Ints = std::int32_t __attribute__((vector_size(32)));
using Longs = std::int64_t __attribute__((vector_size(32)));
constexpr std::size_t kLanes = 8;

Floats load(const float* v) {
  Floats x;
  std::memcpy(&x, v, sizeof x);
  return x;
}
Doubles low_half(Floats x) { return __builtin_convertvector(__builtin_shufflevector(x, x, 0, 1, 2, 3), Doubles); }
Doubles high_half(Floats x) { return __builtin_convertvector(__builtin_shufflevector(x, x, 4, 5, 6, 7), Doubles); }
Longs low_half(Ints m) { return __builtin_convertvector(__builtin_shufflevector(m, m, 0, 1, 2, 3), Longs); }
Longs high_half(Ints m) { return __builtin_convertvector(__builtin_shufflevector(m, m, 4, 5, 6, 7), Longs); }
// -1 where x is finite (x - x is 0 there, NaN for NaN and ±inf), else 0.
Ints finite_mask(Floats x) { return x - x == 0; }

void add_value(Partial& p, float x) {
  if (std::isfinite(x)) {
    ++p.count;
    p.sum += x;
    p.min = std::min(p.min, double(x));
    p.max = std::max(p.max, double(x));
  } else {
    ++(std::isnan(x) ? p.nan : x < 0 ? p.neg_inf : p.pos_inf);
  }
}

Partial block_partial(const float* v, std::size_t begin, std::size_t end) {
  Doubles sum_low{}, sum_high{};
  Floats lo = Floats{} + INFINITY, hi = Floats{} - INFINITY;
  Ints count{}, nan{}, neg_inf{};
  std::size_t i = begin;
  for (; i + kLanes <= end; i += kLanes) {
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
  Partial p;
  for (std::size_t l = 0; l < kLanes; ++l) {
    p.sum += l < 4 ? sum_low[l] : sum_high[l - 4];
    p.min = std::min(p.min, double(lo[l]));
    p.max = std::max(p.max, double(hi[l]));
    p.count += std::size_t(count[l]);
    p.nan += std::size_t(nan[l]);
    p.neg_inf += std::size_t(neg_inf[l]);
  }
  p.pos_inf = (i - begin) - p.count - p.nan - p.neg_inf;  // the rest of the lanes' values
  for (; i < end; ++i) add_value(p, v[i]);
  return p;
}

// Sum of (x - mean)^2 over the finite values of [begin, end), in lanes as block_partial.
double block_squares(const float* v, std::size_t begin, std::size_t end, double mean) {
  Doubles sum_low{}, sum_high{};
  std::size_t i = begin;
  for (; i + kLanes <= end; i += kLanes) {
    const Floats x = load(v + i);
    const Ints f = finite_mask(x);
    const Doubles d_low = low_half(x) - mean, d_high = high_half(x) - mean;
    sum_low += low_half(f) ? d_low * d_low : Doubles{};
    sum_high += high_half(f) ? d_high * d_high : Doubles{};
  }
  double total = 0;
  for (std::size_t l = 0; l < 4; ++l) total += sum_low[l] + sum_high[l];
  for (; i < end; ++i)
    if (std::isfinite(v[i])) total += (double(v[i]) - mean) * (double(v[i]) - mean);
  return total;
}

// Runs block(b, begin, end) for every block of n values on OpenMP threads, then returns the
// per-block results in block order.
template <typename T, typename F>
std::vector<T> per_block(std::size_t n, F&& block) {
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<T> out(blocks);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::size_t b = 0; b < blocks; ++b) out[b] = block(b * kBlock, std::min(n, (b + 1) * kBlock));
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

MapStats map_stats(std::span<const float> values, const HistogramOptions& options) {
  validate(options);
  const std::size_t n = values.size();
  const float* v = values.data();
  const std::vector<Partial> partials = per_block<Partial>(
      n, [&](std::size_t b, std::size_t e) { return block_partial(v, b, e); });
  Partial all;
  for (const Partial& p : partials) {
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
    const std::vector<double> squares = per_block<double>(
        n, [&](std::size_t b, std::size_t e) { return block_squares(v, b, e, s.mean); });
    double m2 = 0;
    for (double q : squares) m2 += q;
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
  const prims::ValueHistogram h =
      prims::histogram_values_cpu(v, n, lo, hi, std::uint32_t(options.bins));
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
