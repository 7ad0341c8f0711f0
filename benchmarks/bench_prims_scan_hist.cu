// In-house CUDA scan and histograms against CUB in the same process, and the scan against a
// device-to-device copy of the same bytes. Best of several repeats timed with cudaEvents.
//   bench_prims_scan_hist [log2_items (default 28)]
// Targets (issue 4): scan ≥ 90 % of CUB and ≥ 75 % of the copy bandwidth; each histogram
// ≥ 90 % of CUB. Writes prims_scan_hist.json (targets) and prims_hist_methods.json (every
// histogram method, for choosing the default), see report.hpp.
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/prims/histogram.hpp"
#include "dcsgrid/prims/scan.hpp"
#include "report.hpp"

namespace dcsgrid::bench {
namespace {

using prims::HistogramAggregation;
using prims::HistogramCopies;
using prims::HistogramMethod;
using prims::ScanKind;

constexpr int repeats = 10;

// Milliseconds of the fastest of `reps` runs of fn on the default stream (after one warm-up).
double best_ms(int reps, const std::function<void()>& fn) {
  cudaEvent_t start, stop;
  DCSGRID_CUDA_CHECK(cudaEventCreate(&start));
  DCSGRID_CUDA_CHECK(cudaEventCreate(&stop));
  fn();
  DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int r = 0; r < reps; ++r) {
    DCSGRID_CUDA_CHECK(cudaEventRecord(start));
    fn();
    DCSGRID_CUDA_CHECK(cudaEventRecord(stop));
    DCSGRID_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    DCSGRID_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms);
  }
  DCSGRID_CUDA_CHECK(cudaEventDestroy(start));
  DCSGRID_CUDA_CHECK(cudaEventDestroy(stop));
  return best;
}

__device__ std::uint32_t hash(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return std::uint32_t((x ^ (x >> 31)) >> 32);
}

// hot_percent % of the keys are `hot`, the rest uniform in [0, bins).
__global__ void make_keys(std::uint32_t* keys, std::size_t n, std::uint32_t bins,
                          std::uint32_t hot_percent, std::uint32_t hot) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    keys[i] = hash(2 * i) % 100 < hot_percent ? hot : hash(2 * i + 1) % bins;
}

template <typename T>
__global__ void make_scan_input(T* v, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t h = hash(i);
    if constexpr (std::is_same_v<T, float>)
      v[i] = float(h >> 8) * (1.0f / 16777216.0f);
    else
      v[i] = T(h % 201) - T(100);
  }
}

template <typename T>
__global__ void count_differences(const T* a, const T* b, std::size_t n, unsigned long long* count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (a[i] != b[i]) atomicAdd(count, 1ull);
}

template <typename T>
unsigned long long differences(const T* a, const T* b, std::size_t n) {
  cuda::DeviceBuffer<unsigned long long> count(1);
  DCSGRID_CUDA_CHECK(cudaMemset(count.data(), 0, count.bytes()));
  count_differences<<<1024, 256>>>(a, b, n, count.data());
  DCSGRID_CHECK_LAUNCH();
  unsigned long long h = 0;
  DCSGRID_CUDA_CHECK(cudaMemcpy(&h, count.data(), sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

std::vector<std::uint32_t> download(const cuda::DeviceBuffer<std::uint32_t>& d, std::size_t n) {
  std::vector<std::uint32_t> h(n);
  DCSGRID_CUDA_CHECK(cudaMemcpy(h.data(), d.data(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  return h;
}

const char* kind_name(ScanKind k) { return k == ScanKind::inclusive ? "inclusive" : "exclusive"; }
std::string method_name(HistogramMethod m) {
  const char* c[] = {"global", "per_block", "per_warp"};
  const char* a[] = {"none", "adaptive", "always"};
  return std::string(c[int(m.copies)]) + "/" + a[int(m.aggregation)];
}

struct Row {
  std::string op, impl, data;
  double items = 0, ms = 0, bytes = 0;
  double vs_cub = 0, vs_copy = 0;  // 0: not applicable
  std::string target;              // "" when the row has none
  bool met = true;
  std::string valid;
};

class Bench {
 public:
  explicit Bench(std::size_t n) : n_(n) {}

  template <typename T>
  void scan(ScanKind kind, double copy_ms) {
    cuda::DeviceBuffer<T> in(n_), out(n_), cub_out(n_);
    cuda::DeviceBuffer<unsigned char> workspace(prims::scan_cuda_workspace_bytes(n_));
    make_scan_input<<<1024, 256>>>(in.data(), n_);
    DCSGRID_CHECK_LAUNCH();
    std::size_t cub_bytes = 0;
    const auto cub_scan = [&](void* temp) {
      if (kind == ScanKind::exclusive)
        DCSGRID_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, cub_bytes, in.data(), cub_out.data(), n_));
      else
        DCSGRID_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp, cub_bytes, in.data(), cub_out.data(), n_));
    };
    cub_scan(nullptr);
    cuda::DeviceBuffer<unsigned char> cub_temp(cub_bytes);
    const double cub_ms = best_ms(repeats, [&] { cub_scan(cub_temp.data()); });
    const double ours_ms = best_ms(repeats, [&] {
      prims::scan_cuda(in.data(), out.data(), n_, kind, workspace.data(), nullptr);
    });
    const std::string type = std::is_same_v<T, float> ? "float" : "int32";
    const std::string op = std::string("scan ") + kind_name(kind) + " " + type;
    const double bytes = 2.0 * n_ * sizeof(T);
    const bool exact = !std::is_same_v<T, float>;
    const std::string valid =
        exact ? (differences(out.data(), cub_out.data(), n_) == 0 ? "= CUB" : "DIFFERS") : "(float)";
    add({op, "CUB", "random", double(n_), cub_ms, bytes, 0, copy_ms / cub_ms, "", true, ""});
    const double vs_cub = cub_ms / ours_ms, vs_copy = copy_ms / ours_ms;
    const bool target_row = kind == ScanKind::exclusive && exact;
    add({op, "dcsgrid", "random", double(n_), ours_ms, bytes, vs_cub, vs_copy,
         target_row ? ">=0.90 CUB, >=0.75 copy" : "", !target_row || (vs_cub >= 0.9 && vs_copy >= 0.75), valid});
  }

  double copy() {
    cuda::DeviceBuffer<std::int32_t> a(n_), b(n_);
    DCSGRID_CUDA_CHECK(cudaMemset(a.data(), 0, a.bytes()));
    const double ms = best_ms(repeats, [&] {
      DCSGRID_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice));
    });
    add({"copy device to device", "cudaMemcpy", "int32", double(n_), ms, 2.0 * a.bytes(), 0, 1, "", true, ""});
    return ms;
  }

  void histogram(std::uint32_t bins, std::uint32_t hot_percent, const std::string& data) {
    cuda::DeviceBuffer<std::uint32_t> keys(n_), counts(bins), cub_counts(bins);
    make_keys<<<1024, 256>>>(keys.data(), n_, bins, hot_percent, bins / 3);
    DCSGRID_CHECK_LAUNCH();
    std::size_t cub_bytes = 0;
    const auto cub_hist = [&](void* temp) {
      DCSGRID_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
          temp, cub_bytes, keys.data(), cub_counts.data(), int(bins) + 1, 0u, bins, std::int64_t(n_)));
    };
    cub_hist(nullptr);
    cuda::DeviceBuffer<unsigned char> cub_temp(cub_bytes);
    const double cub_ms = best_ms(repeats, [&] { cub_hist(cub_temp.data()); });
    const auto reference = download(cub_counts, bins);
    const std::string op = "histogram " + std::to_string(bins) + " bins";
    const double bytes = double(n_) * sizeof(std::uint32_t);
    add({op, "CUB", data, double(n_), cub_ms, bytes, 0, 0, "", true, ""});

    const auto run = [&](const HistogramMethod* m, const std::string& name) {
      const auto call = [&] {
        if (m) prims::histogram_cuda(keys.data(), n_, counts.data(), bins, *m, nullptr);
        else prims::histogram_cuda(keys.data(), n_, counts.data(), bins, nullptr);
      };
      try {
        call();
      } catch (const Error&) {
        return;  // copies do not fit shared memory
      }
      const double ms = best_ms(m ? repeats / 2 : repeats, call);
      const std::string valid = download(counts, bins) == reference ? "= CUB" : "DIFFERS";
      Row row{op, name, data, double(n_), ms, bytes, cub_ms / ms, 0, m ? "" : ">=0.90 CUB",
              m || cub_ms / ms >= 0.9, valid};
      if (m) variants_.push_back(row);
      else add(row);
    };
    run(nullptr, "dcsgrid (" + method_name(prims::histogram_cuda_default_method(bins)) + ")");
    // Every method, for choosing the default: a table of their own.
    for (const auto c : {HistogramCopies::global, HistogramCopies::per_block, HistogramCopies::per_warp})
      for (const auto a : {HistogramAggregation::none, HistogramAggregation::adaptive, HistogramAggregation::always}) {
        const HistogramMethod m{c, a};
        run(&m, method_name(m));
      }
  }

  void value_histogram(std::uint32_t bins) {
    cuda::DeviceBuffer<float> values(n_);
    cuda::DeviceBuffer<std::uint32_t> counts(bins + 3), cub_counts(bins);
    make_scan_input<<<1024, 256>>>(values.data(), n_);  // uniform in [0, 1)
    DCSGRID_CHECK_LAUNCH();
    std::size_t cub_bytes = 0;
    const auto cub_hist = [&](void* temp) {
      DCSGRID_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
          temp, cub_bytes, values.data(), cub_counts.data(), int(bins) + 1, 0.0f, 1.0f, std::int64_t(n_)));
    };
    cub_hist(nullptr);
    cuda::DeviceBuffer<unsigned char> cub_temp(cub_bytes);
    const double cub_ms = best_ms(repeats, [&] { cub_hist(cub_temp.data()); });
    const double ms = best_ms(repeats, [&] {
      prims::histogram_values_cuda(values.data(), n_, 0.0f, 1.0f, bins, counts.data(), nullptr);
    });
    const auto ours = download(counts, bins + 3), theirs = download(cub_counts, bins);
    long long worst = 0;  // CUB bins in float too, but may round an edge value the other way
    for (std::uint32_t b = 0; b < bins; ++b) worst = std::max(worst, std::llabs((long long)ours[b] - theirs[b]));
    const std::string op = "value histogram " + std::to_string(bins) + " bins";
    const double bytes = double(n_) * sizeof(float);
    add({op, "CUB", "uniform [0,1)", double(n_), cub_ms, bytes, 0, 0, "", true, ""});
    add({op, "dcsgrid", "uniform [0,1)", double(n_), ms, bytes, cub_ms / ms, 0, "", true,
         "max |bin - CUB| = " + std::to_string(worst)});
  }

  // Prints the table of histogram methods, then the main table with the targets; returns
  // whether every target is met and every result agrees with CUB.
  bool finish() {
    cudaDeviceProp prop;
    DCSGRID_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const auto table = [&](const std::string& name, const std::vector<Row>& rows) {
      Report report(name, {"operation", "implementation", "data", "items", "ms", "Gitems/s", "GB/s",
                           "vs CUB", "vs copy", "target", "target met", "check"});
      report.set_context("device", prop.name);
      report.set_context("items", n_);
      report.set_context("repeats", repeats);
      report.set_context("timing", "best of repeats, cudaEvents; GB/s = bytes read + written / time");
      bool all_met = true;
      for (const Row& r : rows) {
        const auto ratio = [](double v) -> nlohmann::json { return v > 0 ? nlohmann::json(v) : nlohmann::json("-"); };
        report.add_row({r.op, r.impl, r.data, r.items, r.ms, r.items / r.ms * 1e-6, r.bytes / r.ms * 1e-6,
                        ratio(r.vs_cub), ratio(r.vs_copy), r.target.empty() ? "-" : r.target,
                        r.target.empty() ? "-" : (r.met ? "yes" : "NO"), r.valid.empty() ? "-" : r.valid});
        all_met = all_met && r.met && r.valid != "DIFFERS";
      }
      report.set_context("all_targets_met", all_met);
      report.finish();
      return all_met;
    };
    table("prims_hist_methods", variants_);
    const bool met = table("prims_scan_hist", rows_);
    std::printf("targets met and results equal to CUB: %s\n", met ? "yes" : "NO");
    return met;
  }

 private:
  void add(Row r) { rows_.push_back(std::move(r)); }
  std::size_t n_;
  std::vector<Row> rows_, variants_;
};

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) {
  using namespace dcsgrid::bench;
  const int log2_items = argc > 1 ? std::atoi(argv[1]) : 28;
  try {
    Bench bench(std::size_t(1) << log2_items);
    const double copy_ms = bench.copy();
    bench.scan<std::int32_t>(ScanKind::exclusive, copy_ms);
    bench.scan<std::int32_t>(ScanKind::inclusive, copy_ms);
    bench.scan<float>(ScanKind::exclusive, copy_ms);
    for (const std::uint32_t bins : {256u, 4096u}) {
      bench.histogram(bins, 0, "uniform");
      bench.histogram(bins, 90, "90% one bin");
      bench.histogram(bins, 100, "all one bin");
    }
    bench.value_histogram(256);
    bench.finish();  // targets are reported, not turned into a failure
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_prims_scan_hist: %s\n", e.what());
    return 2;
  }
}
