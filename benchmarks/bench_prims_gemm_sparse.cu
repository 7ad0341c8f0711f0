// In-house GEMM and sparse products against cuBLAS SGEMM (TF32 off) and cuSPARSE SpMV/SpMM in
// the same process, and the CPU versions against naive loops. Best of several repeats timed with
// cudaEvents (GPU) or steady_clock (CPU).
//   bench_prims_gemm_sparse [--quick] [--only PARTS]
//     --quick: small sizes, a smoke run; --only: a comma-separated subset of gemm, tall-skinny,
//     trilinear, power-law, cpu (default: all), for measuring one kernel's variants quickly
// Targets (issue 4): SGEMM 4096³ ≥ 70 % of cuBLAS; the tall-skinny product (64 × 16M)·(16M × 64)
// ≥ 80 % of the device copy bandwidth (bytes of A and B read once); CSR SpMV ≥ 90 % of cuSPARSE
// on the trilinear-interpolation matrix (10^7 rows, 8 nonzeros, 256³ columns) and on a power-law
// matrix; CSR at most 20 % slower than ELL on equal rows. Writes prims_gemm_sparse.json.
#include <cublas_v2.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/prims/gemm.hpp"
#include "dcsgrid/prims/sparse.hpp"
#include "report.hpp"

#define BENCH_CUBLAS(call)                                                                 \
  do {                                                                                      \
    if (const cublasStatus_t s_ = (call); s_ != CUBLAS_STATUS_SUCCESS)                     \
      throw ::dcsgrid::Error(std::string(#call) + ": cuBLAS status " + std::to_string(s_)); \
  } while (0)
#define BENCH_CUSPARSE(call)                                                                      \
  do {                                                                                             \
    if (const cusparseStatus_t s_ = (call); s_ != CUSPARSE_STATUS_SUCCESS)                        \
      throw ::dcsgrid::Error(std::string(#call) + ": " + cusparseGetErrorString(s_));             \
  } while (0)

namespace dcsgrid::bench {
namespace {

using prims::Op;
using nlohmann::json;

constexpr int kRepeats = 5;

// Milliseconds of the fastest of kRepeats runs of fn on the default stream (after a warm-up).
double best_ms(const std::function<void()>& fn) {
  cudaEvent_t start, stop;
  DCSGRID_CUDA_CHECK(cudaEventCreate(&start));
  DCSGRID_CUDA_CHECK(cudaEventCreate(&stop));
  fn();
  DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int r = 0; r < kRepeats; ++r) {
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

__host__ __device__ std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__host__ __device__ double unit(std::uint64_t x) { return double(mix(x) >> 11) * 0x1.0p-53; }

__global__ void fill_uniform(float* v, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    v[i] = float(2.0 * unit(seed ^ (i * 0x100000001b3ull)) - 1.0);
}

cuda::DeviceBuffer<float> random_device(std::size_t n, std::uint64_t seed) {
  cuda::DeviceBuffer<float> d(n);
  fill_uniform<<<1024, 256>>>(d.data(), n, seed);
  DCSGRID_CHECK_LAUNCH();
  return d;
}

std::vector<float> to_host(const float* d, std::size_t n) {
  std::vector<float> h(n);
  DCSGRID_CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// ‖a − b‖ / ‖b‖.
template <typename Reference>
double relative_difference(const std::vector<float>& a, const std::vector<Reference>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// One table row: our figure against a reference (vendor or naive loop), higher is better.
void add_row(Report& report, const std::string& name, double ours, double reference,
             const std::string& unit_name, double target) {
  const double ratio = ours / reference;
  report.add_row({name, ours, reference, unit_name, ratio, target > 0 ? json(target) : json("-"),
                  target > 0 ? json(ratio >= target ? "yes" : "NO") : json("-")});
}

// Row-major C = α·op(A)·op(B) + β·C through column-major cuBLAS: Cᵀ = op(B)ᵀ·op(A)ᵀ.
void cublas_gemm(cublasHandle_t h, Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                 const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                 std::int64_t ldc) {
  const float alpha = 1.0f, beta = 0.0f;
  auto op = [](Op o) { return o == Op::none ? CUBLAS_OP_N : CUBLAS_OP_T; };
  BENCH_CUBLAS(cublasSgemm(h, op(op_b), op(op_a), int(n), int(m), int(k), &alpha, b, int(ldb), a,
                           int(lda), &beta, c, int(ldc)));
}

void bench_gemm(Report& report, cublasHandle_t blas, bool quick) {
  const std::int64_t s = quick ? 1024 : 4096;
  auto a = random_device(s * s, 1), b = random_device(s * s, 2);
  cuda::DeviceBuffer<float> c(s * s), c_ref(s * s);
  const std::pair<Op, Op> ops[] = {{Op::none, Op::none}, {Op::none, Op::transpose},
                                   {Op::transpose, Op::none}, {Op::transpose, Op::transpose}};
  for (const auto& [op_a, op_b] : ops)
    for (std::int64_t size : {s, s - 1}) {
      if (size != s && (op_a != Op::none || op_b != Op::none)) continue;  // edges: NN only
      const std::string name = std::string("SGEMM ") + (op_a == Op::none ? "N" : "T") +
                               (op_b == Op::none ? "N" : "T") + " " + std::to_string(size) + "^3";
      auto ours = [&] {
        prims::gemm_cuda(op_a, op_b, size, size, size, 1.0f, a.data(), s, b.data(), s, 0.0f,
                         c.data(), s);
      };
      auto vendor = [&] { cublas_gemm(blas, op_a, op_b, size, size, size, a.data(), s, b.data(), s, c_ref.data(), s); };
      const double flop = 2.0 * double(size) * size * size;
      const double t_ours = best_ms(ours), t_vendor = best_ms(vendor);
      add_row(report, name, flop / t_ours * 1e-9, flop / t_vendor * 1e-9, "TFLOP/s", 0.70);
      if (size == s && op_a == Op::none && op_b == Op::none)
        report.set_context("sgemm_nn_relative_difference_to_cublas",
                           relative_difference(to_host(c.data(), s * s), to_host(c_ref.data(), s * s)));
    }
}

// Device-to-device copy bandwidth, bytes read + written per second.
double copy_bandwidth(std::size_t bytes) {
  cuda::DeviceBuffer<char> src(bytes), dst(bytes);
  DCSGRID_CUDA_CHECK(cudaMemset(src.data(), 1, bytes));
  const double ms = best_ms([&] {
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice));
  });
  return 2.0 * double(bytes) / (ms * 1e-3);
}

// c (maps × maps, zeroed) += a·bᵀ in float64, a and b maps × voxels: the accuracy reference of
// the tall-skinny product. Block x sums its run of voxels for every output (kThreads threads of
// MAPS² / kThreads outputs, 32-voxel tiles through shared memory) and adds its sums with
// atomicAdd.
constexpr int kProductThreads = 256;
template <int MAPS>
__global__ void __launch_bounds__(kProductThreads)
    product_float64(const float* a, const float* b, std::int64_t voxels, double* c) {
  constexpr int kTile = 32, kOutputs = MAPS * MAPS / kProductThreads;
  static_assert(MAPS * MAPS % kProductThreads == 0);
  __shared__ float a_tile[MAPS][kTile + 1], b_tile[MAPS][kTile + 1];
  const std::int64_t run = (voxels + gridDim.x - 1) / gridDim.x;
  const std::int64_t begin = blockIdx.x * run, end = std::min(voxels, begin + run);
  double sum[kOutputs] = {};
  for (std::int64_t v0 = begin; v0 < end; v0 += kTile) {
    for (int e = threadIdx.x; e < MAPS * kTile; e += kProductThreads) {
      const int row = e / kTile, col = e % kTile;
      const bool inside = v0 + col < end;
      a_tile[row][col] = inside ? a[row * voxels + v0 + col] : 0.0f;
      b_tile[row][col] = inside ? b[row * voxels + v0 + col] : 0.0f;
    }
    __syncthreads();
    for (int q = 0; q < kOutputs; ++q) {
      const int o = threadIdx.x + kProductThreads * q, i = o / MAPS, j = o % MAPS;
      for (int x = 0; x < kTile; ++x) sum[q] += double(a_tile[i][x]) * double(b_tile[j][x]);
    }
    __syncthreads();
  }
  for (int q = 0; q < kOutputs; ++q) atomicAdd(&c[threadIdx.x + kProductThreads * q], sum[q]);
}

void bench_tall_skinny(Report& report, cublasHandle_t blas, bool quick) {
  const std::int64_t maps = 64, voxels = quick ? (1 << 20) : (1 << 24);
  const double copy_bw = copy_bandwidth(quick ? (1u << 28) : (1u << 30));
  report.set_context("device_copy_bandwidth_GBps", copy_bw * 1e-9);
  auto a = random_device(maps * voxels, 3), b = random_device(maps * voxels, 4);
  cuda::DeviceBuffer<float> c(maps * maps), c_ref(maps * maps);
  const double bytes = 2.0 * maps * voxels * sizeof(float), flop = 2.0 * maps * maps * voxels;
  const std::string shape = "(64x" + std::to_string(voxels >> 20) + "M)(" + std::to_string(voxels >> 20) + "Mx64)";
  const double t_ours = best_ms([&] {
    prims::gemm_cuda(Op::none, Op::transpose, maps, maps, voxels, 1.0f, a.data(), voxels, b.data(),
                     voxels, 0.0f, c.data(), maps);
  });
  const double t_vendor = best_ms([&] {
    cublas_gemm(blas, Op::none, Op::transpose, maps, maps, voxels, a.data(), voxels, b.data(), voxels,
                c_ref.data(), maps);
  });
  add_row(report, "tall-skinny " + shape + " vs copy bandwidth", bytes / (t_ours * 1e-3) * 1e-9,
          copy_bw * 1e-9, "GB/s", 0.80);
  add_row(report, "tall-skinny " + shape + " vs cuBLAS", flop / t_ours * 1e-9, flop / t_vendor * 1e-9,
          "TFLOP/s", 0);
  // Accuracy against float64 (rel. L2 over the 64 × 64 outputs), ours and cuBLAS's FP32 SGEMM.
  cuda::DeviceBuffer<double> exact(maps * maps);
  DCSGRID_CUDA_CHECK(cudaMemset(exact.data(), 0, maps * maps * sizeof(double)));
  product_float64<64><<<1024, kProductThreads>>>(a.data(), b.data(), voxels, exact.data());
  DCSGRID_CHECK_LAUNCH();
  std::vector<double> exact_host(maps * maps);
  DCSGRID_CUDA_CHECK(cudaMemcpy(exact_host.data(), exact.data(), maps * maps * sizeof(double),
                                cudaMemcpyDeviceToHost));
  const double error_ours = relative_difference(to_host(c.data(), maps * maps), exact_host);
  const double error_vendor = relative_difference(to_host(c_ref.data(), maps * maps), exact_host);
  report.set_context("tall_skinny_relative_error_to_float64", error_ours);
  report.set_context("tall_skinny_cublas_relative_error_to_float64", error_vendor);
  std::printf("tall-skinny %s: relative L2 error against float64: ours %.3g, cuBLAS %.3g\n",
              shape.c_str(), error_ours, error_vendor);
  // The Gram matrix of the maps: one operand read through both sides.
  const double t_gram = best_ms([&] {
    prims::gemm_cuda(Op::none, Op::transpose, maps, maps, voxels, 1.0f, a.data(), voxels, a.data(),
                     voxels, 0.0f, c.data(), maps);
  });
  const double t_gram_vendor = best_ms([&] {
    cublas_gemm(blas, Op::none, Op::transpose, maps, maps, voxels, a.data(), voxels, a.data(), voxels,
                c_ref.data(), maps);
  });
  add_row(report, "Gram A.A^T " + shape, flop / t_gram * 1e-9, flop / t_gram_vendor * 1e-9, "TFLOP/s", 0);
}

// Trilinear weights of `rows` random points in an n³ grid: 8 nonzeros a row (hashed positions).
prims::CsrMatrix trilinear(std::int64_t rows, std::int64_t n) {
  prims::CsrMatrix a;
  a.rows = rows;
  a.cols = n * n * n;
  a.row_offsets.resize(rows + 1);
  a.columns.resize(rows * 8);
  a.values.resize(rows * 8);
  for (std::int64_t r = 0; r < rows; ++r) {
    double f[3];
    std::int64_t c[3];
    for (int d = 0; d < 3; ++d) {
      const double x = unit(std::uint64_t(r) * 3 + d) * double(n - 1);
      c[d] = std::min<std::int64_t>(std::int64_t(x), n - 2);
      f[d] = x - double(c[d]);
    }
    for (int k = 0; k < 8; ++k) {
      const int dx = k & 1, dy = (k >> 1) & 1, dz = k >> 2;
      a.columns[r * 8 + k] = std::int32_t(((c[2] + dz) * n + c[1] + dy) * n + c[0] + dx);
      a.values[r * 8 + k] = float((dx ? f[0] : 1 - f[0]) * (dy ? f[1] : 1 - f[1]) * (dz ? f[2] : 1 - f[2]));
    }
    a.row_offsets[r + 1] = (r + 1) * 8;
  }
  return a;
}

// Power-law rows: length ⌊4·u^(−1/1.5)⌋ capped at max_length (Pareto, mean about 12), columns
// uniform.
prims::CsrMatrix power_law(std::int64_t rows, std::int64_t max_length) {
  prims::CsrMatrix a;
  a.rows = rows;
  a.cols = rows;
  a.row_offsets.assign(rows + 1, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const double u = std::max(unit(std::uint64_t(r) ^ 0xabcdefull), 1e-12);
    a.row_offsets[r + 1] =
        a.row_offsets[r] + std::min<std::int64_t>(max_length, std::int64_t(4.0 * std::pow(u, -1.0 / 1.5)));
  }
  a.columns.resize(a.row_offsets.back());
  a.values.resize(a.row_offsets.back());
  for (std::int64_t i = 0; i < a.nnz(); ++i) {
    a.columns[i] = std::int32_t(mix(std::uint64_t(i) * 7 + 1) % std::uint64_t(rows));
    a.values[i] = float(2.0 * unit(std::uint64_t(i) * 7 + 2) - 1.0);
  }
  return a;
}

// The matrix in cuSPARSE's hands (32-bit offsets and columns) with SpMV timed for the CSR
// algorithms; the best of them is the vendor figure.
struct CusparseCsr {
  cuda::DeviceBuffer<std::int32_t> offsets, columns;
  cuda::DeviceBuffer<float> values;
  cusparseSpMatDescr_t mat = nullptr;

  CusparseCsr(const prims::CsrMatrix& a) : offsets(a.rows + 1), columns(a.nnz()), values(a.nnz()) {
    const std::vector<std::int32_t> narrow(a.row_offsets.begin(), a.row_offsets.end());
    DCSGRID_CUDA_CHECK(cudaMemcpy(offsets.data(), narrow.data(), offsets.bytes(), cudaMemcpyHostToDevice));
    DCSGRID_CUDA_CHECK(cudaMemcpy(columns.data(), a.columns.data(), columns.bytes(), cudaMemcpyHostToDevice));
    DCSGRID_CUDA_CHECK(cudaMemcpy(values.data(), a.values.data(), values.bytes(), cudaMemcpyHostToDevice));
    BENCH_CUSPARSE(cusparseCreateCsr(&mat, a.rows, a.cols, a.nnz(), offsets.data(), columns.data(),
                                     values.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  }
  ~CusparseCsr() { cusparseDestroySpMat(mat); }

  double best_spmv_ms(cusparseHandle_t h, float* x, std::int64_t nx, float* y, std::int64_t ny) const {
    cusparseDnVecDescr_t vx, vy;
    BENCH_CUSPARSE(cusparseCreateDnVec(&vx, nx, x, CUDA_R_32F));
    BENCH_CUSPARSE(cusparseCreateDnVec(&vy, ny, y, CUDA_R_32F));
    const float alpha = 1.0f, beta = 0.0f;
    double best = 1e30;
    for (cusparseSpMVAlg_t alg : {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2}) {
      std::size_t bytes = 0;
      BENCH_CUSPARSE(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx,
                                             &beta, vy, CUDA_R_32F, alg, &bytes));
      cuda::DeviceBuffer<char> buffer(std::max<std::size_t>(bytes, 1));
      best = std::min(best, best_ms([&] {
        BENCH_CUSPARSE(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx, &beta, vy,
                                    CUDA_R_32F, alg, buffer.data()));
      }));
    }
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
    return best;
  }

  double best_spmm_ms(cusparseHandle_t h, float* x, std::int64_t nx, float* y, std::int64_t ny,
                      std::int64_t count) const {
    cusparseDnMatDescr_t mx, my;
    BENCH_CUSPARSE(cusparseCreateDnMat(&mx, nx, count, nx, x, CUDA_R_32F, CUSPARSE_ORDER_COL));
    BENCH_CUSPARSE(cusparseCreateDnMat(&my, ny, count, ny, y, CUDA_R_32F, CUSPARSE_ORDER_COL));
    const float alpha = 1.0f, beta = 0.0f;
    std::size_t bytes = 0;
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    BENCH_CUSPARSE(cusparseSpMM_bufferSize(h, op, op, &alpha, mat, mx, &beta, my, CUDA_R_32F,
                                           CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
    cuda::DeviceBuffer<char> buffer(std::max<std::size_t>(bytes, 1));
    const double ms = best_ms([&] {
      BENCH_CUSPARSE(cusparseSpMM(h, op, op, &alpha, mat, mx, &beta, my, CUDA_R_32F,
                                  CUSPARSE_SPMM_ALG_DEFAULT, buffer.data()));
    });
    cusparseDestroyDnMat(mx);
    cusparseDestroyDnMat(my);
    return ms;
  }
};

// Compulsory bytes of one SpMV: the matrix (32-bit offsets), x once and y.
double spmv_bytes(const prims::CsrMatrix& a) {
  return double(a.nnz()) * 8 + double(a.rows + 1) * 4 + double(a.cols) * 4 + double(a.rows) * 4;
}

void bench_sparse_matrix(Report& report, cusparseHandle_t sp, const std::string& label,
                         const prims::CsrMatrix& a, bool with_ell, bool with_spmm) {
  auto x = random_device(a.cols, 5);
  cuda::DeviceBuffer<float> y(a.rows), y_ref(a.rows);
  const double gb = spmv_bytes(a) * 1e-9;
  double t_vendor = 0;
  {
    const CusparseCsr vendor(a);
    t_vendor = vendor.best_spmv_ms(sp, x.data(), a.cols, y_ref.data(), a.rows);
    if (with_spmm) {
      constexpr std::int64_t count = 16;
      auto xs = random_device(a.cols * count, 6);
      cuda::DeviceBuffer<float> ys(a.rows * count);
      const prims::DeviceCsr d(a);
      const double t_spmm_vendor = vendor.best_spmm_ms(sp, xs.data(), a.cols, ys.data(), a.rows, count);
      const double t_spmm = best_ms([&] { prims::spmm_cuda(d, xs.data(), a.cols, count, ys.data(), a.rows); });
      add_row(report, "SpMM CSR " + label + ", 16 maps", gb * count / (t_spmm * 1e-3),
              gb * count / (t_spmm_vendor * 1e-3), "GB/s (16 SpMV)", 0);
    }
  }
  const prims::DeviceCsr csr(a);
  const double t_csr = best_ms([&] { prims::spmv_cuda(csr, x.data(), y.data()); });
  add_row(report, "SpMV CSR " + label, gb / (t_csr * 1e-3), gb / (t_vendor * 1e-3), "GB/s", 0.90);
  report.set_context("spmv_csr_" + label + "_relative_difference_to_cusparse",
                     relative_difference(to_host(y.data(), a.rows), to_host(y_ref.data(), a.rows)));
  if (with_ell) {
    const prims::DeviceEll ell(prims::csr_to_ell(a));
    const double t_ell = best_ms([&] { prims::spmv_cuda(ell, x.data(), y.data()); });
    add_row(report, "SpMV ELL " + label, gb / (t_ell * 1e-3), gb / (t_vendor * 1e-3), "GB/s", 0);
    add_row(report, "SpMV CSR vs ELL, equal rows " + label, gb / (t_csr * 1e-3), gb / (t_ell * 1e-3),
            "GB/s", 1.0 / 1.2);
  }
  const prims::DeviceHybrid hybrid(prims::csr_to_hybrid(a));
  const double t_hyb = best_ms([&] { prims::spmv_cuda(hybrid, x.data(), y.data()); });
  add_row(report, "SpMV hybrid " + label + " (ELL width " + std::to_string(hybrid.ell.width) + ")",
          gb / (t_hyb * 1e-3), gb / (t_vendor * 1e-3), "GB/s", 0);
}

void bench_cpu(Report& report, const prims::CsrMatrix& tri, bool quick) {
  const std::int64_t s = quick ? 256 : 512;
  std::vector<float> a(s * s), b(s * s), c(s * s), c_naive(s * s);
  for (std::int64_t i = 0; i < s * s; ++i) {
    a[i] = float(unit(i * 2) - 0.5);
    b[i] = float(unit(i * 2 + 1) - 0.5);
  }
  const double flop = 2.0 * double(s) * s * s;
  const double t_ours = best_seconds(3, [&] {
    prims::gemm_cpu(Op::none, Op::none, s, s, s, 1.0f, a.data(), s, b.data(), s, 0.0f, c.data(), s);
  });
  const double t_naive = best_seconds(1, [&] {
    for (std::int64_t i = 0; i < s; ++i)
      for (std::int64_t j = 0; j < s; ++j) {
        float sum = 0.0f;
        for (std::int64_t k = 0; k < s; ++k) sum += a[i * s + k] * b[k * s + j];
        c_naive[i * s + j] = sum;
      }
  });
  add_row(report, "CPU SGEMM " + std::to_string(s) + "^3 vs naive loop", flop / t_ours * 1e-9,
          flop / t_naive * 1e-9, "GFLOP/s", 0);
  report.set_context("cpu_sgemm_relative_difference_to_naive", relative_difference(c, c_naive));

  std::vector<float> x(tri.cols), y(tri.rows), y_naive(tri.rows);
  for (std::int64_t i = 0; i < tri.cols; ++i) x[i] = float(unit(i ^ 0x55ull));
  const double gb = spmv_bytes(tri) * 1e-9;
  const double t_spmv = best_seconds(3, [&] { prims::spmv_cpu(tri, x.data(), y.data()); });
  const double t_spmv_naive = best_seconds(1, [&] {
    for (std::int64_t r = 0; r < tri.rows; ++r) {
      float sum = 0.0f;
      for (std::int64_t i = tri.row_offsets[r]; i < tri.row_offsets[r + 1]; ++i)
        sum += tri.values[i] * x[tri.columns[i]];
      y_naive[r] = sum;
    }
  });
  add_row(report, "CPU SpMV CSR trilinear vs naive loop", gb / t_spmv, gb / t_spmv_naive, "GB/s", 0);
}

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) {
  using namespace dcsgrid::bench;
  bool quick = false;
  std::string only = "gemm,tall-skinny,trilinear,power-law,cpu";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: bench_prims_gemm_sparse [--quick] [--only gemm,tall-skinny,trilinear,power-law,cpu]\n");
      return 2;
    }
  }
  const auto wanted = [&](const std::string& part) {
    return ("," + only + ",").find("," + part + ",") != std::string::npos;
  };
  try {
    cudaDeviceProp prop{};
    DCSGRID_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    Report report("prims_gemm_sparse",
                  {"case", "ours", "reference", "unit", "ours/reference", "target", "target met"});
    report.set_context("device", prop.name);
    report.set_context("cpu", cpu_description());
    report.set_context("cublas_math_mode", "CUBLAS_DEFAULT_MATH (no TF32)");
    report.set_context("reference", "GPU rows: cuBLAS / cuSPARSE (best of CSR_ALG1, CSR_ALG2) or the "
                                    "copy bandwidth; CPU rows: a naive single-thread loop");
    report.set_context("parts", only);
    cublasHandle_t blas;
    cusparseHandle_t sp;
    BENCH_CUBLAS(cublasCreate(&blas));
    BENCH_CUBLAS(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    BENCH_CUSPARSE(cusparseCreate(&sp));
    if (wanted("gemm")) bench_gemm(report, blas, quick);
    if (wanted("tall-skinny")) bench_tall_skinny(report, blas, quick);
    if (wanted("trilinear") || wanted("cpu")) {
      const dcsgrid::prims::CsrMatrix tri = trilinear(quick ? 1000000 : 10000000, quick ? 128 : 256);
      report.set_context("trilinear_matrix", std::to_string(tri.rows) + " rows, " + std::to_string(tri.cols) + " columns, 8 a row");
      if (wanted("trilinear")) bench_sparse_matrix(report, sp, "trilinear", tri, true, true);
      if (wanted("cpu")) bench_cpu(report, tri, quick);
    }
    if (wanted("power-law")) {
      const dcsgrid::prims::CsrMatrix skewed = power_law(quick ? (1 << 19) : (1 << 22), 1 << 17);
      report.set_context("power_law_matrix", std::to_string(skewed.rows) + " rows, " +
                                                 std::to_string(skewed.nnz()) + " nonzeros");
      bench_sparse_matrix(report, sp, "power-law", skewed, false, false);
    }
    cusparseDestroy(sp);
    cublasDestroy(blas);
    report.finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_prims_gemm_sparse: %s\n", e.what());
    return 1;
  }
  return 0;
}
