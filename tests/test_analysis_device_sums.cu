// DeviceMapSums (analysis/device_sums.hpp) against the host loop it promises, written here:
// d = double(v) − double(s), sum += d, squares += d·d, each rounded, s the first map; sums loaded
// from elsewhere continue as if they had been added here.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "dcsgrid/analysis/device_sums.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "helpers.hpp"

namespace dcsgrid::test {
namespace {

// Maps of values near 100 with spreads of a few units, and a few large values.
std::vector<std::vector<float>> random_maps(std::size_t count, std::size_t n) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> spread(0, 3);
  std::vector<std::vector<float>> maps(count, std::vector<float>(n));
  for (auto& m : maps)
    for (std::size_t p = 0; p < n; ++p) m[p] = float(100 + 40 * std::cos(0.01 * double(p)) + spread(rng) * (p % 97 == 0 ? 1e4 : 1));
  return maps;
}

struct HostSums {
  std::vector<float> shift;
  std::vector<double> sum, squares;
};

HostSums host_sums(const std::vector<std::vector<float>>& maps, std::size_t begin, std::size_t end) {
  const std::size_t n = maps.front().size();
  HostSums h{maps[begin], std::vector<double>(n), std::vector<double>(n)};
  for (std::size_t f = begin; f < end; ++f)
    for (std::size_t p = 0; p < n; ++p) {
      const double d = double(maps[f][p]) - double(h.shift[p]);
      volatile double d2 = d * d;  // rounded before the add
      h.sum[p] += d;
      h.squares[p] += d2;
    }
  return h;
}

std::unique_ptr<engine::CudaDeviceMap> upload(const std::vector<float>& v) {
  auto map = std::make_unique<engine::CudaDeviceMap>(v.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(map->data(), v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  // From pageable memory cudaMemcpy may return before the data lands, and the sums' stream does
  // not wait for the default stream: wait for the device.
  DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
  return map;
}

HostSums download(const analysis::DeviceMapSums& sums, std::size_t n) {
  HostSums h{std::vector<float>(n), std::vector<double>(n), std::vector<double>(n)};
  sums.download(h.shift, h.sum, h.squares);
  return h;
}

// The device's sums equal the host loop's over every map, bit for bit.
void expect_the_host_loops(const analysis::DeviceMapSums& sums, const std::vector<std::vector<float>>& maps) {
  const HostSums expected = host_sums(maps, 0, maps.size());
  const HostSums got = download(sums, expected.shift.size());
  EXPECT_TRUE(got.shift == expected.shift);
  EXPECT_TRUE(got.sum == expected.sum);
  EXPECT_TRUE(got.squares == expected.squares);
}

TEST(DeviceMapSums, AddsAsTheHostLoop) {
  DCSGRID_REQUIRE_GPU();
  DCSGRID_CUDA_CHECK(cudaSetDevice(0));
  const std::size_t n = 100'003;
  const auto maps = random_maps(9, n);
  analysis::DeviceMapSums sums(0, n);
  EXPECT_EQ(sums.count(), 0u);
  for (const auto& m : maps) {
    const auto map = upload(m);
    sums.add(*map);
    sums.synchronize();  // before the map is freed
  }
  EXPECT_EQ(sums.count(), maps.size());
  expect_the_host_loops(sums, maps);
}

TEST(DeviceMapSums, LoadedSumsContinueAsIfAddedHere) {
  DCSGRID_REQUIRE_GPU();
  DCSGRID_CUDA_CHECK(cudaSetDevice(0));
  const std::size_t n = 4099;
  const auto maps = random_maps(7, n);
  const HostSums first = host_sums(maps, 0, 3);
  analysis::DeviceMapSums sums(0, n);
  sums.load(first.shift, first.sum, first.squares, 3);
  std::vector<std::unique_ptr<engine::CudaDeviceMap>> held;
  for (std::size_t f = 3; f < maps.size(); ++f) {
    held.push_back(upload(maps[f]));
    sums.add(*held.back());
  }
  EXPECT_EQ(sums.count(), 7u);
  expect_the_host_loops(sums, maps);
}

// Maps on a second GPU are copied to the sums' GPU and added in turn with its own: the same sums as
// the host loop over all of them.
TEST(DeviceMapSums, MapsFromAnotherGpuMakeTheSameSums) {
  DCSGRID_REQUIRE_GPU();
  int gpus = 0;
  DCSGRID_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  if (gpus < 2) GTEST_SKIP() << "one CUDA device: multi-GPU test skipped";
  const std::size_t n = 50'021;
  const auto maps = random_maps(6, n);
  analysis::DeviceMapSums sums(0, n);
  std::vector<std::unique_ptr<engine::CudaDeviceMap>> held;
  for (std::size_t f = 0; f < maps.size(); ++f) {
    DCSGRID_CUDA_CHECK(cudaSetDevice(f % 2 == 0 ? 1 : 0));  // the first map from the other GPU
    held.push_back(upload(maps[f]));
    sums.add(*held.back());
  }
  sums.synchronize();
  expect_the_host_loops(sums, maps);
}

TEST(DeviceMapSums, RefusesMapsOfOtherSizes) {
  DCSGRID_REQUIRE_GPU();
  DCSGRID_CUDA_CHECK(cudaSetDevice(0));
  analysis::DeviceMapSums sums(0, 100);
  const auto small = upload(std::vector<float>(99, 1.0f));
  EXPECT_THROW(sums.add(*small), Error);
  std::vector<float> shift(99);
  std::vector<double> sum(99), squares(99);
  EXPECT_THROW(sums.load(shift, sum, squares, 1), Error);
  EXPECT_THROW(sums.download(shift, sum, squares), Error);
}

}  // namespace
}  // namespace dcsgrid::test
