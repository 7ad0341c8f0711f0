// CUDA histograms against naive counting loops: every method (copies × aggregation), bin counts
// from 1 to 100000, adversarial key patterns, unaligned pointers, many grid-stride steps; value
// histograms with every special value, in float as documented.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/prims/histogram.hpp"
#include "helpers.hpp"
#include "test_prims_histogram_cases.hpp"

namespace dcsgrid::test {
namespace {

using prims::HistogramAggregation;
using prims::HistogramCopies;
using prims::HistogramMethod;

std::vector<HistogramMethod> all_methods() {
  std::vector<HistogramMethod> methods;
  for (const auto c : {HistogramCopies::global, HistogramCopies::per_block, HistogramCopies::per_warp})
    for (const auto a : {HistogramAggregation::none, HistogramAggregation::adaptive, HistogramAggregation::always})
      methods.push_back({c, a});
  return methods;
}
std::string method_name(HistogramMethod m) {
  const char* c[] = {"global", "per_block", "per_warp"};
  const char* a[] = {"none", "adaptive", "always"};
  return std::string(c[int(m.copies)]) + "/" + a[int(m.aggregation)];
}

template <typename T>
cuda::DeviceBuffer<T> to_device(const std::vector<T>& h, std::size_t offset = 0) {
  cuda::DeviceBuffer<T> d(h.size() + offset + 1);
  if (!h.empty())
    DCSGRID_CUDA_CHECK(cudaMemcpy(d.data() + offset, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
std::vector<std::uint32_t> to_host(const cuda::DeviceBuffer<std::uint32_t>& d, std::size_t n) {
  std::vector<std::uint32_t> h(n);
  DCSGRID_CUDA_CHECK(cudaMemcpy(h.data(), d.data(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  return h;
}

// Runs one key histogram (method: nullptr for the default) into a buffer that starts dirty and
// has a guard entry after the bins; returns the bins, or nothing when the method does not fit.
std::optional<std::vector<std::uint32_t>> device_key_histogram(
    const std::vector<std::uint32_t>& keys, std::uint32_t bins, const HistogramMethod* method,
    std::size_t offset = 0) {
  const auto d_keys = to_device(keys, offset);
  cuda::DeviceBuffer<std::uint32_t> d_counts(std::size_t(bins) + 1);
  DCSGRID_CUDA_CHECK(cudaMemset(d_counts.data(), 0x5a, d_counts.bytes()));
  try {
    if (method)
      prims::histogram_cuda(d_keys.data() + offset, keys.size(), d_counts.data(), bins, *method, nullptr);
    else
      prims::histogram_cuda(d_keys.data() + offset, keys.size(), d_counts.data(), bins, nullptr);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shared memory"), std::string::npos) << e.what();
    return std::nullopt;
  }
  DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
  auto counts = to_host(d_counts, std::size_t(bins) + 1);
  EXPECT_EQ(counts.back(), 0x5a5a5a5au) << "wrote past the bins";
  counts.pop_back();
  return counts;
}

TEST(CudaHistogram, EveryMethodMatchesNaiveLoop) {
  DCSGRID_REQUIRE_GPU();
  for (const std::uint32_t bins : {1u, 2u, 7u, 256u, 1000u, 1024u, 1025u, 4096u, 65536u, 100000u})
    for (const KeyPattern pattern : all_key_patterns)
      for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(5), std::size_t(4099), std::size_t(1000003)}) {
        const auto keys = make_keys(n, bins, pattern, n * 7 + bins);
        const auto expected = naive_key_histogram(keys, bins);
        const std::string what = pattern_name(pattern) + " bins=" + std::to_string(bins) + " n=" + std::to_string(n);
        EXPECT_EQ(device_key_histogram(keys, bins, nullptr), expected) << "default " << what;
        for (const HistogramMethod& m : all_methods()) {
          const auto counts = device_key_histogram(keys, bins, &m);
          if (!counts) {  // only a method whose copies outgrow shared memory may refuse
            EXPECT_TRUE(m.copies != HistogramCopies::global && bins > 1024) << method_name(m) << " " << what;
            continue;
          }
          EXPECT_EQ(*counts, expected) << method_name(m) << " " << what;
        }
      }
}

TEST(CudaHistogram, UnalignedKeysAndManyGridSteps) {
  DCSGRID_REQUIRE_GPU();
  const std::size_t n = (std::size_t(1) << 24) + 3;  // several grid-stride steps per warp
  for (const KeyPattern pattern : {KeyPattern::uniform, KeyPattern::ninety_one, KeyPattern::one_bin})
    for (const std::uint32_t bins : {256u, 4096u}) {
      const auto keys = make_keys(n, bins, pattern, bins);
      const auto expected = naive_key_histogram(keys, bins);
      for (const std::size_t offset : {0, 1, 2, 3})
        EXPECT_EQ(device_key_histogram(keys, bins, nullptr, offset), expected)
            << pattern_name(pattern) << " bins=" << bins << " offset=" << offset;
    }
}

// Threads counting at once with the same kernel and different bin counts (batch's frame workers on
// one GPU do): each launch must get the shared memory it asks for, whatever the others ask.
TEST(CudaHistogram, ThreadsWithOtherBinCountsDoNotDisturbEachOther) {
  DCSGRID_REQUIRE_GPU();
  const HistogramMethod per_block{HistogramCopies::per_block, HistogramAggregation::none};
  const std::uint32_t few = 100, many = 16000;  // 16000 counters need more than the default 48 KiB
  std::vector<std::string> failures(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < failures.size(); ++t)
    threads.emplace_back([&, t] {
      try {
        const std::uint32_t bins = t % 2 ? many : few;
        const auto keys = make_keys(200000, bins, KeyPattern::uniform, unsigned(t));
        const auto expected = naive_key_histogram(keys, bins);
        const auto d_keys = to_device(keys);
        cuda::DeviceBuffer<std::uint32_t> d_counts(bins);
        cudaStream_t stream = nullptr;
        DCSGRID_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        std::string failure;
        for (int i = 0; i < 40 && failure.empty(); ++i) {
          try {
            prims::histogram_cuda(d_keys.data(), keys.size(), d_counts.data(), bins, per_block, stream);
            DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
            if (to_host(d_counts, bins) != expected) failure = "counts differ at launch " + std::to_string(i);
          } catch (const std::exception& e) {
            failure = e.what();
          }
        }
        cudaStreamDestroy(stream);
        if (!failure.empty()) throw Error(failure);
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (std::size_t t = 0; t < failures.size(); ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(CudaHistogram, DefaultMethodFollowsBins) {
  DCSGRID_REQUIRE_GPU();
  EXPECT_EQ(prims::histogram_cuda_default_method(256).copies, HistogramCopies::per_warp);
  EXPECT_EQ(prims::histogram_cuda_default_method(4096).copies, HistogramCopies::per_block);
  EXPECT_EQ(prims::histogram_cuda_default_method(1u << 20).copies, HistogramCopies::global);
}

TEST(CudaHistogram, ValuesMatchNaiveFloatLoop) {
  DCSGRID_REQUIRE_GPU();
  for (const std::uint32_t bins : {1u, 3u, 100u, 1021u, 4096u, 100000u})
    for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1000003)})
      for (const std::size_t offset : {0, 1}) {
        const auto values = make_values(n, bins, n + bins);
        const auto ref = naive_value_histogram<float>(values, -2.0f, 3.0f, bins);
        const std::vector<std::uint32_t> expected(ref.begin(), ref.end());
        const auto d_values = to_device(values, offset);
        cuda::DeviceBuffer<std::uint32_t> d_counts(std::size_t(bins) + 3);
        const std::string what = "bins=" + std::to_string(bins) + " n=" + std::to_string(n) +
                                 " offset=" + std::to_string(offset);
        const auto run = [&](const HistogramMethod* m) {
          DCSGRID_CUDA_CHECK(cudaMemset(d_counts.data(), 0x5a, d_counts.bytes()));
          if (m)
            prims::histogram_values_cuda(d_values.data() + offset, n, -2.0f, 3.0f, bins, d_counts.data(), *m, nullptr);
          else
            prims::histogram_values_cuda(d_values.data() + offset, n, -2.0f, 3.0f, bins, d_counts.data(), nullptr);
          return to_host(d_counts, std::size_t(bins) + 3);
        };
        EXPECT_EQ(run(nullptr), expected) << "default " << what;
        if (bins <= 1021) {
          for (const HistogramMethod& m : all_methods()) EXPECT_EQ(run(&m), expected) << method_name(m) << " " << what;
        }
      }
}

// The exact variant bins in double: the naive double loop's counts (histogram_values_cpu's), values
// at and next to every bin edge included, where float binning may differ.
TEST(CudaHistogram, ExactValuesMatchNaiveDoubleLoop) {
  DCSGRID_REQUIRE_GPU();
  for (const std::uint32_t bins : {1u, 3u, 100u, 1021u, 100000u})
    for (const std::size_t n : {std::size_t(0), std::size_t(7), std::size_t(1000003)}) {
      const auto values = make_values(n, bins, 7 * n + bins);
      const auto expected = naive_value_histogram<double>(values, -2.0, 3.0, bins);
      const auto d_values = to_device(values);
      cuda::DeviceBuffer<std::uint32_t> d_counts(std::size_t(bins) + 3);
      DCSGRID_CUDA_CHECK(cudaMemset(d_counts.data(), 0x5a, d_counts.bytes()));
      prims::histogram_values_exact_cuda(d_values.data(), n, -2.0, 3.0, bins, d_counts.data(), nullptr);
      const auto got = to_host(d_counts, std::size_t(bins) + 3);
      EXPECT_EQ(std::vector<std::uint64_t>(got.begin(), got.end()), expected) << "bins=" << bins << " n=" << n;
      if (n > 0) {
        const prims::ValueHistogram cpu = prims::histogram_values_cpu(values.data(), n, -2.0, 3.0, bins);
        EXPECT_TRUE(std::equal(cpu.counts.begin(), cpu.counts.end(), got.begin())) << "bins=" << bins;
      }
    }
}

TEST(CudaHistogram, BadArgumentsAreErrors) {
  DCSGRID_REQUIRE_GPU();
  cuda::DeviceBuffer<std::uint32_t> counts(8);
  EXPECT_THROW(prims::histogram_values_cuda(nullptr, 0, 1.0f, 1.0f, 4, counts.data(), nullptr), Error);
  EXPECT_THROW(prims::histogram_values_cuda(nullptr, 0, 0.0f, INFINITY, 4, counts.data(), nullptr), Error);
  EXPECT_THROW(prims::histogram_values_cuda(nullptr, 0, 0.0f, 1.0f, 0, counts.data(), nullptr), Error);
  EXPECT_THROW(prims::histogram_values_exact_cuda(nullptr, 0, 1.0, 1.0, 4, counts.data(), nullptr), Error);
  EXPECT_THROW(prims::histogram_values_exact_cuda(nullptr, 0, 0.0, 1.0, 0, counts.data(), nullptr), Error);
  const HistogramMethod per_warp{HistogramCopies::per_warp, HistogramAggregation::adaptive};
  cuda::DeviceBuffer<std::uint32_t> keys(4), many(1u << 20);
  EXPECT_THROW(prims::histogram_cuda(keys.data(), 4, many.data(), 1u << 20, per_warp, nullptr), Error);
}

}  // namespace
}  // namespace dcsgrid::test
