// Ensemble mean and standard-deviation maps, Welford's streaming update in double.
#include "dcsgrid/analysis/ensemble.hpp"

#include <algorithm>
#include <cmath>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/maps/reader.hpp"

namespace dcsgrid::analysis {

EnsembleAccumulator::EnsembleAccumulator(std::size_t points) : mean_(points, 0.0), m2_(points, 0.0) {}

void EnsembleAccumulator::add(const float* map) {
  ++count_;
  const double inv = 1.0 / double(count_);
  const std::size_t n = mean_.size();
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    const double x = map[i];
    const double delta = x - mean_[i];
    mean_[i] += delta * inv;
    m2_[i] += delta * (x - mean_[i]);
  }
}

std::vector<float> EnsembleAccumulator::mean() const {
  return std::vector<float>(mean_.begin(), mean_.end());
}

std::vector<float> EnsembleAccumulator::stddev() const {
  std::vector<float> out(m2_.size(), 0.0f);
  if (count_ == 0) return out;
  std::transform(m2_.begin(), m2_.end(), out.begin(),
                 [&](double m2) { return float(std::sqrt(std::max(m2, 0.0) / double(count_))); });
  return out;
}

nlohmann::json EnsembleResult::to_json() const {
  return {{"frames", frames}, {"units", units}, {"mean_of_std", mean_of_std}, {"max_std", max_std}};
}

EnsembleResult compute_ensemble(const EnsembleOptions& options) {
  const bool into_batch = options.output_mean.empty() && options.output_std.empty();
  if (!into_batch && (options.output_mean.empty() || options.output_std.empty()))
    throw Error("ensemble: give both the mean and the std output, or neither (into the batch file)");
  EnsembleResult result;
  GridSpec grid;
  io::MapMetadata meta;
  std::vector<float> mean, stddev;
  {
    io::MapReader reader(options.input);
    if (reader.size() == 0) throw Error(options.input.string() + ": no complete map to average");
    grid = reader.grid();
    meta = reader.meta();
    EnsembleAccumulator acc(grid.point_count());
    std::vector<float> map(grid.point_count());
    for (std::size_t i = 0; i < reader.size(); ++i) {
      reader.read(i, map.data());
      acc.add(map.data());
    }
    result.frames = acc.count();
    mean = acc.mean();
    stddev = acc.stddev();
  }
  result.units = meta.units;
  double sum = 0;
  for (float s : stddev) {
    sum += s;
    result.max_std = std::max(result.max_std, double(s));
  }
  result.mean_of_std = stddev.empty() ? 0.0 : sum / double(stddev.size());

  if (into_batch) {
    BatchFile file(options.input, true);
    file.write_ensemble(mean.data(), stddev.data(), result.frames);
  } else {
    meta.atom_count = 0;
    meta.total_charge = 0;
    meta.input_file = options.input.string();
    meta.input_sha256.clear();
    io::write_map(options.output_mean, grid, mean.data(), meta);
    io::write_map(options.output_std, grid, stddev.data(), meta);
  }
  return result;
}

}  // namespace dcsgrid::analysis
