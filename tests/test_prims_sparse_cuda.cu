// CUDA sparse products against a float64 loop: CSR (uniform rows, row blocks, long rows split
// into pieces), ELL and hybrid SpMV, CSR SpMM, determinism; the CSR row-block plan on the CPU.
// GPU tests skip without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

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

// Rows at the plan's boundaries: 32 entries (longest of rows alike), 33, 1024, 1025 and 3000
// (two pieces), between runs of short rows of every group size.
prims::CsrMatrix boundary_lengths() {
  const std::vector<std::int64_t> lengths = {32, 33, 1, 0, 1024, 2, 1025, 3, 5, 9, 17, 3000, 0, 16, 4};
  return random_csr(static_cast<std::int64_t>(lengths.size()) * 40, 5000,
                    [&](std::int64_t r) { return lengths[r % lengths.size()]; }, 21);
}

// Rows of the given lengths, in order.
prims::CsrMatrix rows_of_lengths(const std::vector<std::int64_t>& lengths, std::uint64_t seed) {
  return random_csr(static_cast<std::int64_t>(lengths.size()), 5000,
                    [&](std::int64_t r) { return lengths[r]; }, seed);
}

// Lengths around the row-block limits (2048 entries a block, longer rows cut into 2048-entry
// pieces) in increasing, decreasing and shuffled orders.
prims::CsrMatrix row_block_lengths() {
  std::vector<std::int64_t> lengths = {0, 1, 31, 33, 100, 257, 1000, 2047, 2048, 2049, 5000};
  std::vector<std::int64_t> rows(lengths.begin(), lengths.end());
  rows.insert(rows.end(), lengths.rbegin(), lengths.rend());
  std::mt19937_64 rng(23);
  for (int pass = 0; pass < 4; ++pass) {
    std::shuffle(lengths.begin(), lengths.end(), rng);
    rows.insert(rows.end(), lengths.begin(), lengths.end());
  }
  return rows_of_lengths(rows, 23);
}

// Blocks at their limits, in this order: a lone 2048-entry row; 256 rows of 8 (256 rows and 2048
// entries); 256 rows of 1; 256 rows of 0 or 2; a 2048-entry row with 255 empty rows (256 rows, one
// lane a row summing 2048 products); long rows with empty rows between them.
prims::CsrMatrix full_blocks() {
  std::vector<std::int64_t> rows = {2048};
  rows.insert(rows.end(), 256, 8);
  rows.insert(rows.end(), 256, 1);
  for (int r = 0; r < 256; ++r) rows.push_back(r % 2 * 2);
  rows.push_back(2048);
  rows.insert(rows.end(), 255, 0);
  for (std::int64_t length : {5000, 0, 0, 3000, 0, 2049, 0, 0, 0, 4097, 0, 1, 2048, 2047, 1, 2048})
    rows.push_back(length);
  return rows_of_lengths(rows, 24);
}

std::vector<NamedCsr> gpu_test_matrices() {
  auto all = sparse_test_matrices();
  all.push_back({"boundary lengths", boundary_lengths()});
  all.push_back({"row-block lengths", row_block_lengths()});
  all.push_back({"full row blocks", full_blocks()});
  all.push_back({"power law, long tail", random_csr(30011, 50000, power_law_lengths(40000, 22), 22)});
  return all;
}

// The plan covers every entry once, in order: whole rows in blocks of 1 to 256 rows and at most
// 2048 entries, each as long as those limits allow, and rows over 2048 entries alone in 2048-entry
// pieces (the last one shorter) with consecutive partial-sum slots.
void expect_row_blocks_cover(const prims::CsrMatrix& a, const std::string& name) {
  const std::vector<prims::CsrRowBlock> blocks = prims::csr_row_blocks(a);
  const auto length = [&](std::int64_t r) { return a.row_offsets[r + 1] - a.row_offsets[r]; };
  std::int64_t row = 0, entry = 0;
  std::int32_t slot = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const prims::CsrRowBlock& b = blocks[i];
    const std::string where = name + ", block " + std::to_string(i);
    ASSERT_EQ(b.entry_begin, entry) << where;
    ASSERT_LE(b.entry_begin, b.entry_end) << where;
    ASSERT_LE(b.entry_end - b.entry_begin, 2048) << where;
    entry = b.entry_end;
    if (b.partial < 0) {
      ASSERT_EQ(b.row_begin, row) << where;
      ASSERT_GE(b.row_end - b.row_begin, 1) << where;
      ASSERT_LE(b.row_end - b.row_begin, 256) << where;
      ASSERT_EQ(b.entry_begin, a.row_offsets[b.row_begin]) << where;
      ASSERT_EQ(b.entry_end, a.row_offsets[b.row_end]) << where;
      row = b.row_end;
      if (row < a.rows && length(row) <= 2048)
        EXPECT_TRUE(b.row_end - b.row_begin == 256 || b.entry_end - b.entry_begin + length(row) > 2048)
            << where << ": the next row would have fit";
      continue;
    }
    ASSERT_EQ(b.row_end, b.row_begin + 1) << where;
    ASSERT_GT(length(b.row_begin), 2048) << where;
    ASSERT_EQ(b.partial, slot++) << where;
    const bool first_piece = b.entry_begin == a.row_offsets[b.row_begin];
    ASSERT_EQ(b.row_begin, first_piece ? row : row - 1) << where;
    row = b.row_end;
    if (b.entry_end < a.row_offsets[b.row_end]) ASSERT_EQ(b.entry_end - b.entry_begin, 2048) << where;
  }
  EXPECT_EQ(row, a.rows) << name;
  EXPECT_EQ(entry, a.nnz()) << name;
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
// partial pass of four (5: a last pass of one); Y's padding must stay untouched.
TEST(SparseCuda, CsrSpmmMatchesColumnByColumn) {
  DCSGRID_REQUIRE_GPU();
  for (const auto& [name, a] : gpu_test_matrices()) {
    const prims::DeviceCsr d(a);
    for (std::int64_t count : {1, 3, 4, 5, 9}) {
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

// No GPU needed: the plan is built on the host.
TEST(SparseCudaPlan, RowBlocksCoverEveryEntryOnce) {
  for (const auto& [name, a] : gpu_test_matrices()) expect_row_blocks_cover(a, name);
  // Power-law rows as in the benchmark (at least 4 entries, mean about 12, up to 2^17).
  const prims::CsrMatrix skewed = random_csr(200000, 200000, [](std::int64_t r) {
    return 4 * power_law_lengths(1 << 15, 25)(r);
  }, 25);
  expect_row_blocks_cover(skewed, "power law from 4");
}

TEST(SparseCudaPlan, RowBlocksAtTheirLimits) {
  const std::vector<prims::CsrRowBlock> blocks = prims::csr_row_blocks(full_blocks());
  ASSERT_GE(blocks.size(), 5u);
  const auto expect_block = [&](std::size_t i, std::int32_t row_begin, std::int32_t row_end,
                                std::int64_t entries) {
    EXPECT_EQ(blocks[i].row_begin, row_begin) << "block " << i;
    EXPECT_EQ(blocks[i].row_end, row_end) << "block " << i;
    EXPECT_EQ(blocks[i].entry_end - blocks[i].entry_begin, entries) << "block " << i;
    EXPECT_EQ(blocks[i].partial, -1) << "block " << i;
  };
  expect_block(0, 0, 1, 2048);       // a 2048-entry row alone
  expect_block(1, 1, 257, 2048);     // both limits at once
  expect_block(2, 257, 513, 256);    // 256 rows
  expect_block(3, 513, 769, 256);
  expect_block(4, 769, 1025, 2048);  // a 2048-entry row and 255 empty ones
  ASSERT_GE(blocks.size(), 8u);
  for (std::int32_t p = 0; p < 3; ++p) {  // 5000 entries: 2048 + 2048 + 904
    EXPECT_EQ(blocks[5 + p].row_begin, 1025);
    EXPECT_EQ(blocks[5 + p].partial, p);
    EXPECT_EQ(blocks[5 + p].entry_end - blocks[5 + p].entry_begin, p < 2 ? 2048 : 904);
  }
  EXPECT_TRUE(prims::csr_row_blocks(prims::CsrMatrix{0, 3, {0}, {}, {}}).empty());
}

TEST(SparseCuda, RejectsMalformedInput) {
  prims::CsrMatrix bad = random_csr(4, 4, [](std::int64_t) { return 2; }, 3);
  bad.columns[1] = 4;
  EXPECT_THROW(prims::DeviceCsr{bad}, Error);
  EXPECT_THROW(prims::csr_row_blocks(bad), Error);
  prims::EllMatrix ell;
  ell.rows = 2;
  ell.width = 1;
  EXPECT_THROW(prims::DeviceEll{ell}, Error);
}

}  // namespace
}  // namespace dcsgrid::test
