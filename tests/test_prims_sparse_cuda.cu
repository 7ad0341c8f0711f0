// CUDA sparse products against a float64 loop: CSR (uniform rows, binned rows, long rows split
// over chunks), ELL and hybrid SpMV, CSR SpMM, determinism. Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/prims/sparse.hpp"
#include "helpers.hpp"
#include "test_prims_sparse_reference.hpp"

namespace dcsgrid::test {
namespace {

cuda::DeviceBuffer<float> to_device(const std::vector<float>& host) {
  cuda::DeviceBuffer<float> d(host.size());
  if (!host.empty())
    DCSGRID_CUDA_CHECK(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(float),
                                  cudaMemcpyHostToDevice));
  return d;
}

std::vector<float> to_host(const cuda::DeviceBuffer<float>& d) {
  std::vector<float> host(d.size());
  DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
  if (!host.empty())
    DCSGRID_CUDA_CHECK(cudaMemcpy(host.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

// y filled with NaN first, so a row the kernels forget shows.
cuda::DeviceBuffer<float> nan_buffer(std::size_t count) {
  cuda::DeviceBuffer<float> d(count);
  if (count) DCSGRID_CUDA_CHECK(cudaMemset(d.data(), 0xff, d.bytes()));
  return d;
}

// Rows at the plan's boundaries: 32 entries (last short), 33 (first chunked), 1024 (one whole
// chunk), 1025 and 3000 (split over chunks), between runs of short rows of every group size.
prims::CsrMatrix boundary_lengths() {
  const std::vector<std::int64_t> lengths = {32, 33, 1, 0, 1024, 2, 1025, 3, 5, 9, 17, 3000, 0, 16, 4};
  return random_csr(static_cast<std::int64_t>(lengths.size()) * 40, 5000,
                    [&](std::int64_t r) { return lengths[r % lengths.size()]; }, 21);
}

std::vector<NamedCsr> gpu_test_matrices() {
  auto all = sparse_test_matrices();
  all.push_back({"boundary lengths", boundary_lengths()});
  all.push_back({"power law, long tail", random_csr(30011, 50000, power_law_lengths(40000, 22), 22)});
  return all;
}

TEST(SparseCuda, CsrSpmvMatchesFloat64) {
  DCSGRID_REQUIRE_GPU();
  std::uint64_t seed = 100;
  for (const auto& [name, a] : gpu_test_matrices()) {
    const std::vector<float> x = random_vector(a.cols, seed++);
    const SpmvReference ref = reference_spmv(a, x.data());
    const prims::DeviceCsr d(a);
    EXPECT_EQ(d.rows(), a.rows);
    EXPECT_EQ(d.nnz(), a.nnz());
    auto dx = to_device(x);
    auto dy = nan_buffer(a.rows);
    prims::spmv_cuda(d, dx.data(), dy.data());
    const std::vector<float> first = to_host(dy);
    expect_spmv_matches(ref, first.data(), name + " (CSR)");
    prims::spmv_cuda(d, dx.data(), dy.data());
    EXPECT_EQ(first, to_host(dy)) << name << ": CSR SpMV is not deterministic";
  }
}

TEST(SparseCuda, EllAndHybridSpmvMatchFloat64) {
  DCSGRID_REQUIRE_GPU();
  std::uint64_t seed = 200;
  for (const auto& [name, a] : gpu_test_matrices()) {
    const std::vector<float> x = random_vector(a.cols, seed++);
    const SpmvReference ref = reference_spmv(a, x.data());
    auto dx = to_device(x);
    if (ell_is_practical(a)) {
      auto dy = nan_buffer(a.rows);
      prims::spmv_cuda(prims::DeviceEll(prims::csr_to_ell(a)), dx.data(), dy.data());
      expect_spmv_matches(ref, to_host(dy).data(), name + " (ELL)");
    }
    for (std::int64_t width : {-1, 0, 2}) {
      auto dy = nan_buffer(a.rows);
      const prims::DeviceHybrid h(prims::csr_to_hybrid(a, width));
      prims::spmv_cuda(h, dx.data(), dy.data());
      expect_spmv_matches(ref, to_host(dy).data(), name + " (hybrid, width " + std::to_string(width) + ")");
    }
  }
}

// Several right-hand sides, with leading dimensions past the matrix and counts that leave a
// partial pass of four; Y's padding must stay untouched.
TEST(SparseCuda, CsrSpmmMatchesColumnByColumn) {
  DCSGRID_REQUIRE_GPU();
  for (const auto& [name, a] : gpu_test_matrices()) {
    const prims::DeviceCsr d(a);
    for (std::int64_t count : {1, 3, 4, 9}) {
      const std::int64_t ldx = a.cols + 5, ldy = a.rows + 3;
      const std::vector<float> x = random_vector(ldx * count, 300 + count);
      auto dx = to_device(x);
      auto dy = to_device(std::vector<float>(ldy * count, -7.0f));
      prims::spmm_cuda(d, dx.data(), ldx, count, dy.data(), ldy);
      const std::vector<float> y = to_host(dy);
      for (std::int64_t j = 0; j < count; ++j) {
        expect_spmv_matches(reference_spmv(a, x.data() + j * ldx), y.data() + j * ldy,
                            name + " (SpMM " + std::to_string(count) + ", column " + std::to_string(j) + ")");
        for (std::int64_t r = a.rows; r < ldy; ++r) ASSERT_EQ(y[j * ldy + r], -7.0f) << name << ": padding written";
      }
    }
  }
}

// A large trilinear matrix (uniform plan, 32-bit offsets): against the loop, and applied to a
// constant field it gives that constant, since the 8 weights of a row sum to one.
TEST(SparseCuda, LargeTrilinearMatrix) {
  DCSGRID_REQUIRE_GPU();
  const std::int64_t n = 64, points = 500000;
  const prims::CsrMatrix a = trilinear_matrix(points, n, 31);
  const prims::DeviceCsr d(a);
  const std::vector<float> field = random_vector(n * n * n, 32);
  auto dx = to_device(field);
  auto dy = nan_buffer(points);
  prims::spmv_cuda(d, dx.data(), dy.data());
  expect_spmv_matches(reference_spmv(a, field.data()), to_host(dy).data(), "trilinear");
  auto ones = to_device(std::vector<float>(n * n * n, 1.0f));
  prims::spmv_cuda(d, ones.data(), dy.data());
  for (float v : to_host(dy)) ASSERT_NEAR(v, 1.0f, 1e-6f);
}

TEST(SparseCuda, RejectsMalformedInput) {
  prims::CsrMatrix bad = random_csr(4, 4, [](std::int64_t) { return 2; }, 3);
  bad.columns[1] = 4;
  EXPECT_THROW(prims::DeviceCsr{bad}, Error);
  prims::EllMatrix ell;
  ell.rows = 2;
  ell.width = 1;
  EXPECT_THROW(prims::DeviceEll{ell}, Error);
}

}  // namespace
}  // namespace dcsgrid::test
