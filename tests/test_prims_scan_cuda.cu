// CUDA scan against the naive sequential loop: every size class (up to many thousand tiles), all
// types and kinds, in place, unaligned pointers, a stream, workspace reuse, more than 2^31 items;
// and BlockScan on its own inside a kernel, in several shapes.
#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>
#include <utility>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/prims/block_scan.cuh"
#include "helpers.hpp"
#include "test_prims_scan_cases.hpp"

namespace dcsgrid::test {
namespace {

using prims::ScanKind;

template <typename T>
void upload(cuda::DeviceBuffer<T>& d, const std::vector<T>& h, std::size_t offset = 0) {
  if (!h.empty())
    DCSGRID_CUDA_CHECK(cudaMemcpy(d.data() + offset, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
}
template <typename T>
std::vector<T> download(const T* d, std::size_t n) {
  std::vector<T> h(n);
  if (n) DCSGRID_CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// Scans `in` on the device with the given element offsets of input and output (offsets that are
// not multiples of 4 make the pointers unaligned for vector loads); returns the output.
template <typename T>
std::vector<T> scan_on_device(const std::vector<T>& in, ScanKind kind, std::size_t in_offset = 0,
                              std::size_t out_offset = 0, cudaStream_t stream = nullptr) {
  const std::size_t n = in.size();
  cuda::DeviceBuffer<T> d_in(n + in_offset + 1), d_out(n + out_offset + 1);
  cuda::DeviceBuffer<unsigned char> workspace(prims::scan_cuda_workspace_bytes(n));
  upload(d_in, in, in_offset);
  DCSGRID_CUDA_CHECK(cudaMemset(d_out.data(), 0xff, d_out.bytes()));
  prims::scan_cuda(d_in.data() + in_offset, d_out.data() + out_offset, n, kind, workspace.data(), stream);
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  // The item after the output must be untouched.
  const T guard = download(d_out.data() + out_offset + n, 1)[0];
  std::uint32_t guard_bits;
  std::memcpy(&guard_bits, &guard, sizeof guard_bits);
  EXPECT_EQ(guard_bits, 0xffffffffu) << "wrote past the end, n=" << n;
  return download(d_out.data() + out_offset, n);
}

template <typename T>
class CudaScan : public ::testing::Test {};
using ScanTypes = ::testing::Types<std::int32_t, std::uint32_t, float>;
TYPED_TEST_SUITE(CudaScan, ScanTypes);

TYPED_TEST(CudaScan, MatchesNaiveLoopForAllSizes) {
  DCSGRID_REQUIRE_GPU();
  for (const ScanKind kind : {ScanKind::exclusive, ScanKind::inclusive})
    for (const std::size_t n : scan_test_sizes(24)) {
      const auto in = random_scan_input<TypeParam>(n, n * 17 + 1);
      expect_scan_matches(in, scan_on_device(in, kind), kind,
                          std::string(kind_name(kind)) + " n=" + std::to_string(n));
    }
}

TYPED_TEST(CudaScan, UnalignedPointers) {
  DCSGRID_REQUIRE_GPU();
  for (const std::size_t n : {std::size_t(5), std::size_t(4096), std::size_t(4097), std::size_t(1000003)})
    for (const auto [in_offset, out_offset] : {std::pair{1, 0}, std::pair{0, 3}, std::pair{2, 2}}) {
      const auto in = random_scan_input<TypeParam>(n, n + 11);
      for (const ScanKind kind : {ScanKind::exclusive, ScanKind::inclusive})
        expect_scan_matches(in, scan_on_device(in, kind, in_offset, out_offset), kind,
                            "offsets " + std::to_string(in_offset) + "," + std::to_string(out_offset) +
                                " n=" + std::to_string(n));
    }
}

TYPED_TEST(CudaScan, InPlaceOnAStreamReusingTheWorkspace) {
  DCSGRID_REQUIRE_GPU();
  const std::size_t n = 3000017;
  const auto in = random_scan_input<TypeParam>(n, 4);
  cuda::DeviceBuffer<TypeParam> d(n);
  cuda::DeviceBuffer<unsigned char> workspace(prims::scan_cuda_workspace_bytes(n));
  cudaStream_t stream;
  DCSGRID_CUDA_CHECK(cudaStreamCreate(&stream));
  for (const ScanKind kind : {ScanKind::exclusive, ScanKind::inclusive}) {
    upload(d, in);
    // Two scans back to back on one workspace: the second must see a clean one.
    prims::scan_cuda(d.data(), d.data(), n, kind, workspace.data(), stream);
    std::vector<TypeParam> once = download(d.data(), n);
    upload(d, in);
    prims::scan_cuda(d.data(), d.data(), n / 2, kind, workspace.data(), stream);
    prims::scan_cuda(d.data() + n / 2, d.data() + n / 2, n - n / 2, kind, workspace.data(), stream);
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
    expect_scan_matches(in, once, kind, std::string("in place ") + kind_name(kind));
    const auto halves = download(d.data(), n);
    const std::vector<TypeParam> first(in.begin(), in.begin() + n / 2), second(in.begin() + n / 2, in.end());
    expect_scan_matches(first, std::vector<TypeParam>(halves.begin(), halves.begin() + n / 2), kind, "first half");
    expect_scan_matches(second, std::vector<TypeParam>(halves.begin() + n / 2, halves.end()), kind, "second half");
  }
  DCSGRID_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(CudaScan, IntegerValuedFloatsAreExact) {
  DCSGRID_REQUIRE_GPU();
  for (const ScanKind kind : {ScanKind::exclusive, ScanKind::inclusive})
    for (const std::size_t n : {std::size_t(4096), std::size_t(1) << 20, std::size_t(5000011)}) {
      const auto in = random_scan_input<float>(n, 98, /*exact_floats=*/true);
      expect_scan_matches(in, scan_on_device(in, kind), kind,
                          std::string("exact ") + kind_name(kind), /*exact=*/true);
    }
}

TEST(CudaScan, ZeroItemsTouchesNothing) {
  DCSGRID_REQUIRE_GPU();
  prims::scan_cuda<float>(nullptr, nullptr, 0, ScanKind::inclusive, nullptr, nullptr);
  DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_THROW(prims::scan_cuda<float>(nullptr, nullptr, 10, ScanKind::inclusive, nullptr, nullptr), Error);
}

__global__ void count_wrong_exclusive(const std::uint32_t* out, std::size_t n, std::uint32_t item,
                                      unsigned long long* wrong) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (out[i] != std::uint32_t(i) * item) atomicAdd(wrong, 1ull);
}

// More than 2^31 items (8.6 GB in place): 64-bit indexing and more than 2^19 tiles.
TEST(CudaScan, MoreThanTwoToThe31Items) {
  DCSGRID_REQUIRE_GPU();
  const std::size_t n = (std::size_t(1) << 31) + 5;
  std::size_t free_bytes = 0, total = 0;
  DCSGRID_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < n * 4 + (std::size_t(1) << 30)) GTEST_SKIP() << "needs 9.6 GB of free device memory";
  cuda::DeviceBuffer<std::uint32_t> d(n);
  cuda::DeviceBuffer<unsigned char> workspace(prims::scan_cuda_workspace_bytes(n));
  cuda::DeviceBuffer<unsigned long long> wrong(1);
  DCSGRID_CUDA_CHECK(cudaMemset(d.data(), 1, d.bytes()));  // every item 0x01010101
  DCSGRID_CUDA_CHECK(cudaMemset(wrong.data(), 0, wrong.bytes()));
  prims::scan_cuda(d.data(), d.data(), n, ScanKind::exclusive, workspace.data(), nullptr);
  count_wrong_exclusive<<<1024, 256>>>(d.data(), n, 0x01010101u, wrong.data());
  DCSGRID_CHECK_LAUNCH();
  EXPECT_EQ(download(wrong.data(), 1)[0], 0ull);
}

// One tile per block, in BlockScan's arrangement; writes the exclusive and inclusive scans of
// each tile and the tile totals.
template <int THREADS, int ITEMS, typename T, int VEC>
__global__ void block_scan_tiles(const T* in, T* exclusive, T* inclusive, T* totals) {
  using Scan = prims::BlockScan<THREADS, ITEMS, T, VEC>;
  __shared__ typename Scan::TempStorage storage;
  const std::size_t tile = std::size_t(blockIdx.x) * THREADS * ITEMS;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const auto position = [&](int i) {
    const int r = i / VEC, j = i % VEC;
    return tile + (std::size_t(warp) * Scan::groups * 32 + std::size_t(r) * 32 + lane) * VEC + j;
  };
  T a[ITEMS], b[ITEMS];
  for (int i = 0; i < ITEMS; ++i) a[i] = b[i] = in[position(i)];
  T total_a, total_b;
  Scan(storage).exclusive_sum(a, total_a);
  __syncthreads();  // the storage is reused
  Scan(storage).inclusive_sum(b, total_b);
  for (int i = 0; i < ITEMS; ++i) {
    exclusive[position(i)] = a[i];
    inclusive[position(i)] = b[i];
  }
  if (threadIdx.x == THREADS - 1) totals[blockIdx.x] = total_a == total_b ? total_a : T(-1);
}

template <int THREADS, int ITEMS, typename T, int VEC = ITEMS>
void check_block_scan() {
  constexpr int tile = THREADS * ITEMS, tiles = 37;
  const auto in = random_scan_input<T>(std::size_t(tile) * tiles, THREADS * 1000 + ITEMS);
  cuda::DeviceBuffer<T> d_in(in.size()), d_exc(in.size()), d_inc(in.size()), d_tot(tiles);
  upload(d_in, in);
  block_scan_tiles<THREADS, ITEMS, T, VEC><<<tiles, THREADS>>>(d_in.data(), d_exc.data(), d_inc.data(), d_tot.data());
  DCSGRID_CHECK_LAUNCH();
  const auto exc = download(d_exc.data(), in.size()), inc = download(d_inc.data(), in.size());
  const auto tot = download(d_tot.data(), tiles);
  const std::string shape = std::to_string(THREADS) + "x" + std::to_string(ITEMS) + "/" + std::to_string(VEC);
  for (int t = 0; t < tiles; ++t) {
    const std::vector<T> tile_in(in.begin() + t * tile, in.begin() + (t + 1) * tile);
    expect_scan_matches(tile_in, std::vector<T>(exc.begin() + t * tile, exc.begin() + (t + 1) * tile),
                        ScanKind::exclusive, "BlockScan " + shape);
    const std::vector<T> tile_inc(inc.begin() + t * tile, inc.begin() + (t + 1) * tile);
    expect_scan_matches(tile_in, tile_inc, ScanKind::inclusive, "BlockScan " + shape);
    if constexpr (std::is_same_v<T, float>)  // summed in another order than the last item
      EXPECT_NEAR(tot[t], tile_inc.back(), 1e-5 * tile_inc.back()) << "block total " << shape;
    else
      EXPECT_EQ(tot[t], tile_inc.back()) << "block total " << shape;
  }
}

TEST(BlockScan, AllShapes) {
  DCSGRID_REQUIRE_GPU();
  check_block_scan<32, 1, std::int32_t>();
  check_block_scan<96, 5, std::int32_t>();  // three warps, odd item count
  check_block_scan<128, 3, std::uint32_t>();
  check_block_scan<256, 8, float, 4>();     // warp-striped vectors
  check_block_scan<256, 16, std::int32_t, 4>();
  check_block_scan<1024, 2, std::uint32_t>();
}

}  // namespace
}  // namespace dcsgrid::test
