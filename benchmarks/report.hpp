// Helpers shared by the benchmark drivers: timing, a printed table, a JSON report.
#pragma once
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dcsgrid::bench {

// Seconds of the fastest of `repeats` calls of fn (after one warm-up call).
template <typename F>
double best_seconds(int repeats, F&& fn) {
  fn();
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  return best;
}

// A benchmark's results: rows of named values, printed as a table and written as JSON.
class Report {
 public:
  Report(std::string benchmark, std::vector<std::string> columns);
  // Values in column order; numbers are printed with 4 significant digits.
  void add_row(const std::vector<nlohmann::json>& values);
  // Facts about the run (machine, sizes, targets) stored under "context".
  void set_context(const std::string& key, nlohmann::json value);
  // Prints the table to stdout and writes <dir>/<benchmark>.json (dir: $DCSGRID_BENCH_OUT or .).
  void finish() const;

 private:
  std::string name_;
  std::vector<std::string> columns_;
  std::vector<std::vector<nlohmann::json>> rows_;
  nlohmann::json context_ = nlohmann::json::object();
};

// "AMD EPYC ..., 2 cores" or the GPU's name; for the context of a report.
std::string cpu_description();
// Lets the library's debug log (its stage timings) through, for a --verbose run.
void log_debug();

}  // namespace dcsgrid::bench
