// Ensemble maps: the mean and standard deviation of the potential at every grid point over the
// maps of a batch (or several map files on one grid), streamed one map at a time with Welford's
// update in double.
#pragma once
#include <cstddef>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace dcsgrid::analysis {

// Accumulates maps of n points; memory: two doubles per point.
class EnsembleAccumulator {
 public:
  explicit EnsembleAccumulator(std::size_t points);
  void add(const float* map);
  std::size_t count() const { return count_; }
  std::size_t points() const { return mean_.size(); }
  // Mean and population standard deviation (divides by count) per point, as float32.
  std::vector<float> mean() const;
  std::vector<float> stddev() const;

 private:
  std::size_t count_ = 0;
  std::vector<double> mean_, m2_;
};

struct EnsembleOptions {
  std::filesystem::path input;  // batch file (complete frames) or a single map
  // Where to write: empty = into the batch file's /analysis/mean and /analysis/std (which must
  // have been reserved: run_batch with ensemble); else two map files (format from the extension).
  std::filesystem::path output_mean, output_std;
};
struct EnsembleResult {
  std::size_t frames = 0;
  double mean_of_std = 0;  // average over points of the std map, in the map's units
  double max_std = 0;
  std::string units;
  nlohmann::json to_json() const;
};
EnsembleResult compute_ensemble(const EnsembleOptions& options);

}  // namespace dcsgrid::analysis
