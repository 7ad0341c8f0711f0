// CPU scan and histograms (OpenMP threads + SIMD) against plain single-threaded loops.
//   bench_prims_scan_hist_cpu [log2_items (default 26)]     (threads: OMP_NUM_THREADS)
// Writes prims_scan_hist_cpu.json (see report.hpp).
#include <omp.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "dcsgrid/prims/histogram.hpp"
#include "dcsgrid/prims/scan.hpp"
#include "report.hpp"

namespace dcsgrid::bench {
namespace {

using prims::ScanKind;
constexpr int repeats = 5;

template <typename T>
void naive_exclusive_scan(const T* in, T* out, std::size_t n) {
  T sum = T(0);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = sum;
    sum += in[i];
  }
}

void naive_histogram(const std::uint32_t* keys, std::size_t n, std::uint32_t* counts, std::uint32_t bins) {
  std::fill(counts, counts + bins, 0u);
  for (std::size_t i = 0; i < n; ++i)
    if (keys[i] < bins) ++counts[keys[i]];
}

class Bench {
 public:
  explicit Bench(std::size_t n)
      : n_(n), report_("prims_scan_hist_cpu", {"operation", "implementation", "data", "items", "ms",
                                                "Gitems/s", "GB/s", "speed-up", "check"}) {
    report_.set_context("cpu", cpu_description());
    report_.set_context("threads", omp_get_max_threads());
    report_.set_context("items", n);
    report_.set_context("timing", "best of " + std::to_string(repeats) + " (std::chrono)");
  }

  template <typename T>
  void scan(const std::string& type) {
    std::vector<T> in(n_), out(n_), ref(n_);
    std::mt19937 rng(1);
    for (auto& x : in) x = T(rng() % 201) - T(100);
    const double naive = best_seconds(repeats, [&] { naive_exclusive_scan(in.data(), ref.data(), n_); });
    const double ours = best_seconds(repeats, [&] { prims::scan_cpu(in.data(), out.data(), n_, ScanKind::exclusive); });
    // Integer-valued inputs with small sums: exact for floats as well.
    const std::string check = out == ref ? "= naive" : "DIFFERS";
    add("scan exclusive " + type, "naive loop", "random", naive, 2.0 * n_ * sizeof(T), 1.0, "");
    add("scan exclusive " + type, "dcsgrid", "random", ours, 2.0 * n_ * sizeof(T), naive / ours, check);
  }

  void histogram(std::uint32_t bins, bool one_bin) {
    std::vector<std::uint32_t> keys(n_), counts(bins), ref(bins);
    std::mt19937 rng(2);
    for (auto& k : keys) k = one_bin ? bins / 3 : std::uint32_t(rng() % bins);
    const double naive = best_seconds(repeats, [&] { naive_histogram(keys.data(), n_, ref.data(), bins); });
    const double ours = best_seconds(repeats, [&] { prims::histogram_cpu(keys.data(), n_, counts.data(), bins); });
    const std::string op = "histogram " + std::to_string(bins) + " bins";
    const std::string data = one_bin ? "all one bin" : "uniform";
    add(op, "naive loop", data, naive, 4.0 * n_, 1.0, "");
    add(op, "dcsgrid", data, ours, 4.0 * n_, naive / ours, counts == ref ? "= naive" : "DIFFERS");
  }

  void value_histogram(std::uint32_t bins) {
    std::vector<float> values(n_);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> d(-0.1f, 1.1f);
    for (auto& v : values) v = d(rng);
    std::vector<std::uint64_t> ref(bins + 3);
    const double naive = best_seconds(repeats, [&] {
      std::fill(ref.begin(), ref.end(), 0);
      for (const float v : values) {
        if (v < 0.0) ++ref[bins];
        else if (v >= 1.0) ++ref[bins + 1];
        else if (v != v) ++ref[bins + 2];
        else ++ref[std::min<std::uint32_t>(bins - 1, std::uint32_t(double(v) * bins))];
      }
    });
    prims::ValueHistogram h;
    const double ours = best_seconds(repeats, [&] { h = prims::histogram_values_cpu(values.data(), n_, 0.0, 1.0, bins); });
    const bool same = std::equal(h.counts.begin(), h.counts.end(), ref.begin()) && h.underflow == ref[bins] &&
                      h.overflow == ref[bins + 1] && h.nan == ref[bins + 2];
    const std::string op = "value histogram " + std::to_string(bins) + " bins";
    add(op, "naive loop", "uniform [-0.1,1.1)", naive, 4.0 * n_, 1.0, "");
    add(op, "dcsgrid", "uniform [-0.1,1.1)", ours, 4.0 * n_, naive / ours, same ? "= naive" : "DIFFERS");
  }

  void finish() const { report_.finish(); }

 private:
  void add(const std::string& op, const std::string& impl, const std::string& data, double seconds,
           double bytes, double speedup, const std::string& check) {
    report_.add_row({op, impl, data, double(n_), seconds * 1e3, n_ / seconds * 1e-9, bytes / seconds * 1e-9,
                     speedup, check.empty() ? "-" : check});
  }
  std::size_t n_;
  Report report_;
};

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) {
  using namespace dcsgrid::bench;
  const int log2_items = argc > 1 ? std::atoi(argv[1]) : 26;
  Bench bench(std::size_t(1) << log2_items);
  bench.scan<std::int32_t>("int32");
  bench.scan<float>("float");
  for (const std::uint32_t bins : {256u, 4096u}) {
    bench.histogram(bins, false);
    bench.histogram(bins, true);
  }
  bench.value_histogram(256);
  bench.finish();
}
