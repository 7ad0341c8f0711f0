// The analysis layer on the GPU: the batch pipeline end to end, the similarity Gram matrix with
// the in-house GEMM against cuBLAS, and sampling with the in-house SpMV/SpMM against cuSPARSE.
//
//   bench_analysis [--only batch|similarity|sample] [--frames N] [--structure FILE]
//                  [--maps N] [--map-points N] [--sample-maps N] [--sample-points N] [--repeats N]
//
// batch       N frames (default 1000) of a 3,000–5,000-atom protein (default
//             data/1hpv_pdb2pqr_amber.pqr.gz, HIV-1 protease with hydrogens, 3,128 atoms), each
//             with its coordinates perturbed (Gaussian, σ = 0.3 Å, seeded by frame) and written as
//             a PQR file, run through app::run_batch on a 1 Å grid with 10 Å padding (union box):
//             frames/s of the pipeline and each stage's busy share; the ensemble maps after.
// similarity  200 maps of 10^7 points (device memory): G = M·Mᵀ by gram_matrix_cuda (in-house
//             gemm_cuda, 2^20-point blocks summed in double), by one gemm_cuda call over all
//             points, by cublasSsyrk and cublasSgemm (CUBLAS_DEFAULT_MATH: no TF32); each checked
//             against a float64 reference of the diagonal and 64 other entries.
// sample      10^6 random points in a 128³ 1 Å grid, 100 maps: in-house spmm_cuda (one call) and
//             spmv_cuda (one call per map) against cusparseSpMM and cusparseSpMV on the same
//             CSR matrix; the results compared.
// Times are the best of --repeats (default 5) after a warm-up, synchronised on the host.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "dcsgrid/app/batch.hpp"
#include "dcsgrid/analysis/interpolation.hpp"
#include "dcsgrid/analysis/similarity.hpp"
#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "dcsgrid/prims/gemm.hpp"
#include "dcsgrid/prims/sparse.hpp"
#include "report.hpp"

namespace dcsgrid::bench {
namespace {

namespace fs = std::filesystem;

// printf-style formatting (fmt's compile-time format strings do not pass nvcc).
template <typename... Args>
std::string format(const char* pattern, Args... args) {
  const int size = std::snprintf(nullptr, 0, pattern, args...);
  std::string out(std::size_t(size) + 1, '\0');
  std::snprintf(out.data(), out.size(), pattern, args...);
  out.resize(std::size_t(size));
  return out;
}

#define BENCH_CUBLAS(call)                                                                   \
  do {                                                                                       \
    const cublasStatus_t s_ = (call);                                                        \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                         \
      throw Error(format("cuBLAS error %d in %s (%s:%d)", int(s_), #call, __FILE__, __LINE__)); \
  } while (0)
#define BENCH_CUSPARSE(call)                                                                 \
  do {                                                                                       \
    const cusparseStatus_t s_ = (call);                                                      \
    if (s_ != CUSPARSE_STATUS_SUCCESS)                                                       \
      throw Error(format("cuSPARSE error %d (%s) in %s (%s:%d)", int(s_),                    \
                         cusparseGetErrorString(s_), #call, __FILE__, __LINE__));            \
  } while (0)

struct Settings {
  std::string only;
  std::size_t frames = 1000;
  fs::path structure = fs::path(DCSGRID_SOURCE_DIR) / "data" / "1hpv_pdb2pqr_amber.pqr.gz";
  std::size_t maps = 200, map_points = 10'000'000;
  std::size_t sample_maps = 100, sample_points = 1'000'000;
  int repeats = 5;
};

double ms_of(int repeats, const std::function<void()>& fn) {
  return 1e3 * best_seconds(repeats, [&] {
    fn();
    DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
  });
}

__device__ __host__ inline std::uint32_t hash(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return std::uint32_t(x);
}

// ---- batch --------------------------------------------------------------------------------------

void write_frame(const fs::path& path, const AtomSet& atoms, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(0.0, 0.3);
  std::string text;
  text.reserve(atoms.size() * 72);
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const double x = atoms.x[i] + jitter(rng), y = atoms.y[i] + jitter(rng), z = atoms.z[i] + jitter(rng);
    text += format("ATOM  %5d  C   MOL A   1    %8.3f%8.3f%8.3f %7.4f 1.7000\n",
                   int((i + 1) % 100000), x, y, z, double(atoms.q[i]));
  }
  std::ofstream(path) << text;
}

void bench_batch(const Settings& s) {
  const io::Structure protein = io::read_structure(s.structure);
  const fs::path dir = fs::temp_directory_path() / format("dcsgrid-bench-batch-%d", int(::getpid()));
  fs::create_directories(dir);
  std::string list;
  for (std::size_t f = 0; f < s.frames; ++f) {
    const fs::path path = dir / format("frame%05zu.pqr", f);
    write_frame(path, protein.atoms, 1000 + f);
    list += path.string() + "\n";
  }
  std::ofstream(dir / "frames.txt") << list;

  app::BatchOptions o;
  o.inputs = {"@" + (dir / "frames.txt").string()};
  o.output = dir / "frames.h5";
  o.grid.spacing = 1.0;
  o.grid.padding = 10.0;
  o.ensemble = true;
  const app::BatchResult r = app::run_batch(o);
  const double busy = r.read_busy + r.compute_busy + r.write_busy;
  Report report("bench_analysis_batch",
                {"frames", "atoms", "grid_points", "device", "pipeline_s", "frames_per_s",
                 "read_share", "compute_share", "write_share", "stage_sum_over_wall",
                 "engine_setup_s", "engine_kernel_s", "scan_s", "ensemble_s", "file_MB"});
  report.set_context("structure", s.structure.string());
  report.set_context("perturbation", "Gaussian sigma 0.3 A per coordinate, PQR files");
  report.set_context("grid", r.grid.describe());
  report.set_context("host", cpu_description());
  report.add_row({r.frames, protein.atoms.size(), r.grid.point_count(), r.device, r.pipeline_seconds,
                  r.frames_per_second, r.read_busy / r.pipeline_seconds,
                  r.compute_busy / r.pipeline_seconds, r.write_busy / r.pipeline_seconds,
                  busy / r.pipeline_seconds, r.engine_setup, r.engine_kernels, r.scan_seconds,
                  r.ensemble_seconds,
                  double(fs::file_size(o.output)) / 1e6});
  report.finish();
  if (r.computed != s.frames) throw Error(format("batch computed %zu of %zu frames", r.computed, s.frames));
  fs::remove_all(dir);
}

// ---- similarity -------------------------------------------------------------------------------

// Maps that are alike in groups: a smooth wave per group plus per-map noise.
__global__ void make_maps(float* m, std::size_t n_maps, std::size_t points) {
  const std::size_t total = n_maps * points;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t map = i / points, p = i % points;
    const float group = float(map % 5);
    const float noise = float(hash(i) >> 8) * (1.0f / 16777216.0f) - 0.5f;
    m[i] = __sinf(1e-4f * float(p) * (1.0f + group)) + 0.3f * noise;
  }
}

// reference[q] = Σ_p M[a_q][p]·M[b_q][p] in double, one block per pair.
__global__ void reference_pairs(const float* m, std::size_t points, const int* a, const int* b,
                                double* out) {
  __shared__ double partial[256];
  const float* ra = m + std::size_t(a[blockIdx.x]) * points;
  const float* rb = m + std::size_t(b[blockIdx.x]) * points;
  double sum = 0;
  for (std::size_t p = threadIdx.x; p < points; p += blockDim.x) sum += double(ra[p]) * double(rb[p]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (int(threadIdx.x) < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

void bench_similarity(const Settings& s) {
  const std::size_t n = s.maps;
  std::size_t k = s.map_points;
  std::size_t free_bytes = 0, total_bytes = 0;
  DCSGRID_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (n * k * sizeof(float) > free_bytes * 8 / 10) {
    k = free_bytes * 8 / 10 / sizeof(float) / n;
    std::printf("similarity: %zu points per map to fit device memory\n", k);
  }
  cuda::DeviceBuffer<float> m(n * k), c(n * n);
  make_maps<<<4096, 256>>>(m.data(), n, k);
  DCSGRID_CHECK_LAUNCH();

  // float64 reference: every diagonal entry and 64 off-diagonal ones.
  std::vector<int> pa, pb;
  for (std::size_t i = 0; i < n; ++i) {
    pa.push_back(int(i));
    pb.push_back(int(i));
  }
  for (int i = 0; i < 64; ++i) {
    pa.push_back(int(hash(3 * i) % n));
    pb.push_back(int(hash(3 * i + 1) % n));
  }
  const std::size_t pairs = pa.size();
  cuda::DeviceBuffer<int> da(pairs), db(pairs);
  cuda::DeviceBuffer<double> dref(pairs);
  DCSGRID_CUDA_CHECK(cudaMemcpy(da.data(), pa.data(), pairs * sizeof(int), cudaMemcpyHostToDevice));
  DCSGRID_CUDA_CHECK(cudaMemcpy(db.data(), pb.data(), pairs * sizeof(int), cudaMemcpyHostToDevice));
  reference_pairs<<<unsigned(pairs), 256>>>(m.data(), k, da.data(), db.data(), dref.data());
  DCSGRID_CHECK_LAUNCH();
  std::vector<double> ref(pairs);
  DCSGRID_CUDA_CHECK(cudaMemcpy(ref.data(), dref.data(), pairs * sizeof(double), cudaMemcpyDeviceToHost));
  // Error of an entry relative to sqrt(G_aa·G_bb), the scale of the similarity indices.
  auto max_error = [&](auto entry) {
    double worst = 0;
    for (std::size_t i = 0; i < pairs; ++i) {
      const double scale = std::sqrt(ref[std::size_t(pa[i])] * ref[std::size_t(pb[i])]);
      if (scale > 0)
        worst = std::max(worst, std::abs(entry(pa[i], pb[i]) - ref[i]) / scale);
    }
    return worst;
  };
  std::vector<float> host_c(n * n);
  auto download_c = [&] {
    DCSGRID_CUDA_CHECK(cudaMemcpy(host_c.data(), c.data(), n * n * sizeof(float), cudaMemcpyDeviceToHost));
  };

  Report report("bench_analysis_similarity",
                {"method", "maps", "points", "ms", "TFLOP/s (2n²k)", "vs_cublas_sgemm",
                 "max_rel_error"});
  report.set_context("device", [] {
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, 0);
    return std::string(p.name);
  }());
  report.set_context("error", "max |G - G_float64| / sqrt(G_aa G_bb), diagonal and 64 other entries");
  const double flops = 2.0 * double(n) * double(n) * double(k);
  struct Row {
    std::string name;
    double ms, error;
  };
  std::vector<Row> rows;

  std::vector<double> ours;
  const double ours_ms = ms_of(s.repeats, [&] { ours = analysis::gram_matrix_cuda(m.data(), n, k); });
  rows.push_back({"gram_matrix_cuda (blocks of 2^20, double sum)", ours_ms,
                  max_error([&](int a, int b) { return ours[std::size_t(a) * n + b]; })});

  auto gemm_once = [&] {
    prims::gemm_cuda(prims::Op::none, prims::Op::transpose, std::int64_t(n), std::int64_t(n),
                     std::int64_t(k), 1.0f, m.data(), std::int64_t(k), m.data(), std::int64_t(k), 0.0f,
                     c.data(), std::int64_t(n));
    DCSGRID_CHECK_LAUNCH();
  };
  const double gemm_ms = ms_of(s.repeats, gemm_once);
  download_c();
  rows.push_back({"prims::gemm_cuda, one call", gemm_ms,
                  max_error([&](int a, int b) { return double(host_c[std::size_t(a) * n + b]); })});

  cublasHandle_t handle;
  BENCH_CUBLAS(cublasCreate(&handle));
  BENCH_CUBLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const float one = 1.0f, zero = 0.0f;
  // Row-major M (n × k) is the column-major k × n matrix A; G = Aᵀ·A.
  const double syrk_ms = ms_of(s.repeats, [&] {
    BENCH_CUBLAS(cublasSsyrk(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, int(n), int(k), &one,
                             m.data(), int(k), &zero, c.data(), int(n)));
  });
  download_c();  // column-major lower triangle: entry (a, b) with a >= b at a + b·n
  rows.push_back({"cublasSsyrk", syrk_ms, max_error([&](int a, int b) {
                    const int hi = std::max(a, b), lo = std::min(a, b);
                    return double(host_c[std::size_t(hi) + std::size_t(lo) * n]);
                  })});
  const double sgemm_ms = ms_of(s.repeats, [&] {
    BENCH_CUBLAS(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(n), int(k), &one, m.data(),
                             int(k), m.data(), int(k), &zero, c.data(), int(n)));
  });
  download_c();
  rows.push_back({"cublasSgemm", sgemm_ms,
                  max_error([&](int a, int b) { return double(host_c[std::size_t(a) + std::size_t(b) * n]); })});
  BENCH_CUBLAS(cublasDestroy(handle));

  for (const Row& r : rows)
    report.add_row({r.name, n, k, r.ms, flops / (r.ms * 1e-3) / 1e12, sgemm_ms / r.ms, r.error});
  report.finish();
}

// ---- sampling ---------------------------------------------------------------------------------

__global__ void make_values(float* v, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    v[i] = float(hash(7 * i + 1) >> 8) * (1.0f / 8388608.0f) - 1.0f;
}

__global__ void max_abs_difference(const float* a, const float* b, std::size_t n, unsigned* out) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    atomicMax(out, __float_as_uint(fabsf(a[i] - b[i])));  // non-negative floats order as uints
}

double max_difference(const float* a, const float* b, std::size_t n) {
  cuda::DeviceBuffer<unsigned> d(1);
  DCSGRID_CUDA_CHECK(cudaMemset(d.data(), 0, sizeof(unsigned)));
  max_abs_difference<<<1024, 256>>>(a, b, n, d.data());
  DCSGRID_CHECK_LAUNCH();
  unsigned h = 0;
  DCSGRID_CUDA_CHECK(cudaMemcpy(&h, d.data(), sizeof h, cudaMemcpyDeviceToHost));
  float f;
  std::memcpy(&f, &h, sizeof f);
  return f;
}

void bench_sample(const Settings& s) {
  const GridSpec grid = grid_from_origin({0, 0, 0}, {128, 128, 128}, 1.0);
  const std::size_t cols = grid.point_count(), rows = s.sample_points, maps = s.sample_maps;
  AtomSet points;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 127.0);
  for (std::size_t i = 0; i < rows; ++i) points.push_back(u(rng), u(rng), u(rng), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const analysis::InterpolationMatrix im = analysis::trilinear_matrix(grid, points);
  const double build_ms = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const prims::CsrMatrix& a = im.matrix;

  cuda::DeviceBuffer<float> x(cols * maps), y(rows * maps), y_ref(rows * maps);
  make_values<<<4096, 256>>>(x.data(), x.size());
  DCSGRID_CHECK_LAUNCH();
  const prims::DeviceCsr ours(a);

  // cuSPARSE on the same matrix (32-bit offsets: nnz < 2^31).
  const std::vector<std::int32_t> offsets32(a.row_offsets.begin(), a.row_offsets.end());
  cuda::DeviceBuffer<std::int32_t> d_offsets(offsets32.size()), d_columns(a.columns.size());
  cuda::DeviceBuffer<float> d_values(a.values.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(d_offsets.data(), offsets32.data(), d_offsets.bytes(), cudaMemcpyHostToDevice));
  DCSGRID_CUDA_CHECK(cudaMemcpy(d_columns.data(), a.columns.data(), d_columns.bytes(), cudaMemcpyHostToDevice));
  DCSGRID_CUDA_CHECK(cudaMemcpy(d_values.data(), a.values.data(), d_values.bytes(), cudaMemcpyHostToDevice));
  cusparseHandle_t handle;
  BENCH_CUSPARSE(cusparseCreate(&handle));
  cusparseSpMatDescr_t mat;
  BENCH_CUSPARSE(cusparseCreateCsr(&mat, std::int64_t(rows), std::int64_t(cols), a.nnz(), d_offsets.data(),
                                   d_columns.data(), d_values.data(), CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  cusparseDnMatDescr_t mx, my;
  BENCH_CUSPARSE(cusparseCreateDnMat(&mx, std::int64_t(cols), std::int64_t(maps), std::int64_t(cols),
                                     x.data(), CUDA_R_32F, CUSPARSE_ORDER_COL));
  BENCH_CUSPARSE(cusparseCreateDnMat(&my, std::int64_t(rows), std::int64_t(maps), std::int64_t(rows),
                                     y_ref.data(), CUDA_R_32F, CUSPARSE_ORDER_COL));
  const float one = 1.0f, zero = 0.0f;
  std::size_t spmm_bytes = 0;
  BENCH_CUSPARSE(cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                         CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, mx, &zero, my,
                                         CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &spmm_bytes));
  cuda::DeviceBuffer<unsigned char> spmm_buffer(std::max<std::size_t>(spmm_bytes, 1));
  std::vector<cusparseDnVecDescr_t> vx(maps), vy(maps);
  for (std::size_t j = 0; j < maps; ++j) {
    BENCH_CUSPARSE(cusparseCreateDnVec(&vx[j], std::int64_t(cols), x.data() + j * cols, CUDA_R_32F));
    BENCH_CUSPARSE(cusparseCreateDnVec(&vy[j], std::int64_t(rows), y_ref.data() + j * rows, CUDA_R_32F));
  }
  std::size_t spmv_bytes = 0;
  BENCH_CUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx[0],
                                         &zero, vy[0], CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &spmv_bytes));
  cuda::DeviceBuffer<unsigned char> spmv_buffer(std::max<std::size_t>(spmv_bytes, 1));

  Report report("bench_analysis_sample", {"method", "points", "maps", "nnz", "ms", "Gnnz_per_s",
                                          "vs_cusparse", "max_abs_diff"});
  report.set_context("grid", grid.describe());
  report.set_context("matrix_build_ms_host", build_ms);
  report.set_context("max_abs_diff", "against cuSPARSE's result of the same call shape");
  const double work = double(a.nnz()) * double(maps);

  const double cs_spmm_ms = ms_of(s.repeats, [&] {
    BENCH_CUSPARSE(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                &one, mat, mx, &zero, my, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                spmm_buffer.data()));
  });
  const double spmm_ms = ms_of(s.repeats, [&] {
    prims::spmm_cuda(ours, x.data(), std::int64_t(cols), std::int64_t(maps), y.data(), std::int64_t(rows));
    DCSGRID_CHECK_LAUNCH();
  });
  const double spmm_diff = max_difference(y.data(), y_ref.data(), y.size());
  report.add_row({"cusparseSpMM", rows, maps, a.nnz(), cs_spmm_ms, work / cs_spmm_ms / 1e6, 1.0, 0.0});
  report.add_row({"prims::spmm_cuda", rows, maps, a.nnz(), spmm_ms, work / spmm_ms / 1e6,
                  cs_spmm_ms / spmm_ms, spmm_diff});

  const double cs_spmv_ms = ms_of(s.repeats, [&] {
    for (std::size_t j = 0; j < maps; ++j)
      BENCH_CUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx[j], &zero, vy[j],
                                  CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, spmv_buffer.data()));
  });
  const double spmv_ms = ms_of(s.repeats, [&] {
    for (std::size_t j = 0; j < maps; ++j) prims::spmv_cuda(ours, x.data() + j * cols, y.data() + j * rows);
    DCSGRID_CHECK_LAUNCH();
  });
  const double spmv_diff = max_difference(y.data(), y_ref.data(), y.size());
  report.add_row({"cusparseSpMV x maps", rows, maps, a.nnz(), cs_spmv_ms, work / cs_spmv_ms / 1e6, 1.0, 0.0});
  report.add_row({"prims::spmv_cuda x maps", rows, maps, a.nnz(), spmv_ms, work / spmv_ms / 1e6,
                  cs_spmv_ms / spmv_ms, spmv_diff});

  for (std::size_t j = 0; j < maps; ++j) {
    cusparseDestroyDnVec(vx[j]);
    cusparseDestroyDnVec(vy[j]);
  }
  cusparseDestroyDnMat(mx);
  cusparseDestroyDnMat(my);
  cusparseDestroySpMat(mat);
  cusparseDestroy(handle);
  report.finish();
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--only") s.only = value();
    else if (arg == "--frames") s.frames = std::stoul(value());
    else if (arg == "--structure") s.structure = value();
    else if (arg == "--maps") s.maps = std::stoul(value());
    else if (arg == "--map-points") s.map_points = std::stoul(value());
    else if (arg == "--sample-maps") s.sample_maps = std::stoul(value());
    else if (arg == "--sample-points") s.sample_points = std::stoul(value());
    else if (arg == "--repeats") s.repeats = std::stoi(value());
    else throw Error("unknown option " + arg + " (see the comment at the top of bench_analysis.cu)");
  }
  return s;
}

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) {
  using namespace dcsgrid::bench;
  try {
    const Settings s = parse(argc, argv);
    if (!dcsgrid::engine::gpu_available()) {
      std::fprintf(stderr, "bench_analysis: no CUDA device\n");
      return 2;
    }
    if (s.only.empty() || s.only == "batch") bench_batch(s);
    if (s.only.empty() || s.only == "similarity") bench_similarity(s);
    if (s.only.empty() || s.only == "sample") bench_sample(s);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_analysis: %s\n", e.what());
    return 1;
  }
}
