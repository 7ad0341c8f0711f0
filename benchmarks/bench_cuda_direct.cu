// The CUDA direct-summation engine against two textbook kernels (atoms in constant memory; atoms
// staged in shared-memory tiles; ratios against the faster on each case) and the hardware bound.
//
//   bench_cuda_direct                   cases (10^5 atoms on 256³, a structure, 10^6 atoms on 128³)
//                                       and multi-GPU scaling on 512³
//   bench_cuda_direct --sweep           every configuration of the tuning sweep (SweepConfigs,
//                                       compiled only here) on 10^5 atoms, 256³
//   options: --gpus N (GPUs for the scaling run; default all visible), --structure FILE (default:
//            data/1hpv_pdb2pqr_amber.pqr.gz, HIV-1 protease with hydrogens), --repeats N (timed
//            repeats after a warm-up; default 3)
//
// Kernel times are CUDA-event times of one launch over the whole grid, best of the repeats. The
// hardware bound is what the rsqrt (MUFU) unit allows when every pair takes one rsqrt:
// 16 per SM per clock × SMs × clock. The clock is cudaDevAttrClockRate, the peak (boost) clock in
// kHz (CUDA 13 removed cudaDeviceProp::clockRate); the GPU may run below it under load.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_backend.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/cuda_direct.cuh"
#include "dcsgrid/engine/cuda_direct_kernel.cuh"
#include "dcsgrid/io/structure/read.hpp"
#include "report.hpp"

namespace dcsgrid::bench {
namespace {

using engine::DirectConfig;
using engine::SlabLayout;

// The tuning sweep: the kernel shapes measured for docs/gpu-direct-tuning.md (its tables and
// reasoning; round 1 measured the s0 kernel). The library compiles only the default shape
// (engine::LibraryDirectConfigs); these are compiled into this benchmark alone.
struct SweepConfigs {
  static constexpr std::array<DirectConfig, 16> configs{{
      // 16 points: 83 issue slots per atom and warp at f3 (SASS), +6 per further FMA point; MUFU
      // 8 cycles per MUFU point. f4: 89 issue vs 96 MUFU (101 if a MUFU takes 2 issue slots).
      {4, 4, 4, 4, 2, 1, 0},  // the default (kDefaultDirectConfig)
      {4, 4, 4, 3, 2, 1, 0},
      {4, 4, 4, 5, 2, 1, 0},
      {4, 4, 4, 0, 2, 1, 0},  // MUFU only: where the rsqrt unit alone gets (newton_steps unused)
      {4, 4, 4, 4, 3, 1, 0},  // three Newton steps: float rounding for 3 issue slots more per point
      {4, 4, 4, 3, 2, 0, 0},  // round 1's best shape with the clamp on every pair: split_near's gain
      {4, 4, 4, 4, 2, 1, 5},  // occupancy hint: 5 blocks (20 warps) per SM, ≤ 102 registers
      {2, 4, 4, 4, 2, 1, 0},
      {1, 4, 4, 4, 2, 1, 0},
      {8, 4, 4, 4, 2, 1, 0},  // 128×32 points
      {2, 8, 2, 4, 2, 1, 0},  // 256×4 points
      {4, 4, 6, 6, 2, 1, 0},  // 24 points a thread (pads 256 rows to 264: 3% more points)
      {2, 4, 8, 7, 2, 1, 0},  // 32 points a thread: per-atom work spread thinner, more registers
      {2, 4, 8, 8, 2, 1, 0},
      // The default shape with narrower warps, for grids whose rows would pad badly to 128 points.
      {4, 4, 4, 4, 2, 1, 0, 16},
      {4, 4, 4, 4, 2, 1, 0, 8},
  }};
};
static_assert(SweepConfigs::configs[0] == engine::kDefaultDirectConfig);

// ---- the textbook kernel ----------------------------------------------------------------------
// Atoms in constant memory, one chunk per launch, the potential accumulated in global memory across
// chunks; 4 points per thread along x, a warp width apart (coalesced); the hardware rsqrtf for
// every pair, as written in the classic GPU papers and textbooks. The same clamp as ours, so both
// compute the same map.
constexpr int kBaselineChunk = 4096;  // float4 atoms: 64 KiB, all the constant memory there is
constexpr int kBaselinePoints = 4;
constexpr int kBaselineRows = 4;  // block: 32 × 4 threads, covering 128 × 4 points
__constant__ float4 baseline_atoms[kBaselineChunk];

struct BaselineGrid {
  float x0, y0, z0, hx, hy, hz;
  int pitch_x, rows_per_plane;
  float min_r2;
};

__global__ void baseline_kernel(int count, BaselineGrid g, float* out) {
  const int i0 = blockIdx.x * (32 * kBaselinePoints) + threadIdx.x;
  const int j = blockIdx.y * kBaselineRows + threadIdx.y;
  const float py = j * g.hy + g.y0, pz = blockIdx.z * g.hz + g.z0;
  float* o = out + (std::size_t(blockIdx.z) * g.rows_per_plane + j) * g.pitch_x + i0;
  float px[kBaselinePoints], sum[kBaselinePoints];
  for (int p = 0; p < kBaselinePoints; ++p) {
    px[p] = (i0 + 32 * p) * g.hx + g.x0;
    sum[p] = o[32 * p];
  }
  for (int n = 0; n < count; ++n) {
    const float4 a = baseline_atoms[n];
    const float dy = py - a.y, dz = pz - a.z;
    const float dyz2 = dy * dy + dz * dz;
    for (int p = 0; p < kBaselinePoints; ++p) {
      const float dx = px[p] - a.x;
      sum[p] += a.w * rsqrtf(fmaxf(dx * dx + dyz2, g.min_r2));
    }
  }
  for (int p = 0; p < kBaselinePoints; ++p) o[32 * p] = sum[p];
}

SlabLayout baseline_layout(const GridSpec& grid) {
  const std::int64_t w = 32 * kBaselinePoints;
  return {(grid.nx() + w - 1) / w * w,
          (grid.ny() + kBaselineRows - 1) / kBaselineRows * kBaselineRows};
}

// Σ q/r (unscaled) over all atoms into out, one launch per constant-memory chunk.
void run_baseline(const cuda::PinnedBuffer<float4>& atoms, const GridSpec& grid, float min_r2,
                  float* out, cudaStream_t stream) {
  const engine::LocalFrame f = engine::local_frame(grid);
  const SlabLayout layout = baseline_layout(grid);
  const BaselineGrid g{
      f.x0, f.y0, f.z0, f.hx, f.hy, f.hz, int(layout.pitch_x), int(layout.rows_per_plane), min_r2};
  const dim3 blocks(unsigned(layout.pitch_x / (32 * kBaselinePoints)),
                    unsigned(layout.rows_per_plane / kBaselineRows), unsigned(grid.nz()));
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(out, 0, layout.plane_bytes() * grid.nz(), stream));
  for (std::size_t first = 0; first < atoms.size(); first += kBaselineChunk) {
    const int n = int(std::min<std::size_t>(kBaselineChunk, atoms.size() - first));
    DCSGRID_CUDA_CHECK(cudaMemcpyToSymbolAsync(baseline_atoms, atoms.data() + first,
                                               n * sizeof(float4), 0, cudaMemcpyHostToDevice,
                                               stream));
    baseline_kernel<<<blocks, dim3(32, kBaselineRows), 0, stream>>>(n, g, out);
    DCSGRID_CHECK_LAUNCH();
  }
}

// The other textbook form (the n-body pattern of GPU Gems 3, ch. 31): every atom in global memory,
// one launch; each block stages tiles of atoms in shared memory and its threads read them from
// there. Constant memory serves a warp well only while every warp of an SM reads the same atom;
// when the blocks of many waves drift apart, its small cache misses (the suspected cause of the
// constant-memory kernel's low rate on large grids: docs/performance.md measures both).
constexpr int kTileAtoms = 32 * kBaselineRows;  // one atom per thread of the block per tile

__global__ void baseline_shared_kernel(const float4* atoms, int count, BaselineGrid g, float* out) {
  __shared__ float4 tile[kTileAtoms];
  const int i0 = blockIdx.x * (32 * kBaselinePoints) + threadIdx.x;
  const int j = blockIdx.y * kBaselineRows + threadIdx.y;
  const int t = threadIdx.y * 32 + threadIdx.x;
  const float py = j * g.hy + g.y0, pz = blockIdx.z * g.hz + g.z0;
  float px[kBaselinePoints], sum[kBaselinePoints];
  for (int p = 0; p < kBaselinePoints; ++p) {
    px[p] = (i0 + 32 * p) * g.hx + g.x0;
    sum[p] = 0.0f;
  }
  for (int first = 0; first < count; first += kTileAtoms) {
    const int n = min(kTileAtoms, count - first);
    if (t < n) tile[t] = atoms[first + t];
    __syncthreads();
    for (int k = 0; k < n; ++k) {
      const float4 a = tile[k];
      const float dy = py - a.y, dz = pz - a.z;
      const float dyz2 = dy * dy + dz * dz;
      for (int p = 0; p < kBaselinePoints; ++p) {
        const float dx = px[p] - a.x;
        sum[p] += a.w * rsqrtf(fmaxf(dx * dx + dyz2, g.min_r2));
      }
    }
    __syncthreads();
  }
  float* o = out + (std::size_t(blockIdx.z) * g.rows_per_plane + j) * g.pitch_x + i0;
  for (int p = 0; p < kBaselinePoints; ++p) o[32 * p] = sum[p];
}

void run_baseline_shared(const cuda::DeviceBuffer<float4>& atoms, const GridSpec& grid, float min_r2,
                         float* out, cudaStream_t stream) {
  const engine::LocalFrame f = engine::local_frame(grid);
  const SlabLayout layout = baseline_layout(grid);
  const BaselineGrid g{
      f.x0, f.y0, f.z0, f.hx, f.hy, f.hz, int(layout.pitch_x), int(layout.rows_per_plane), min_r2};
  const dim3 blocks(unsigned(layout.pitch_x / (32 * kBaselinePoints)),
                    unsigned(layout.rows_per_plane / kBaselineRows), unsigned(grid.nz()));
  baseline_shared_kernel<<<blocks, dim3(32, kBaselineRows), 0, stream>>>(atoms.data(), int(atoms.size()),
                                                                          g, out);
  DCSGRID_CHECK_LAUNCH();
}

// ---- measuring ----------------------------------------------------------------------------------

struct Gpu {
  std::string name;
  int sms = 0;
  double clock_hz = 0;
  double rsqrt_bound() const { return 16.0 * sms * clock_hz; }  // pairs/s with one MUFU rsqrt each
};

Gpu query_gpu(int device) {
  Gpu g;
  g.name = cuda::device_label(device);
  int khz = 0;
  DCSGRID_CUDA_CHECK(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, device));
  DCSGRID_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  g.clock_hz = khz * 1e3;
  return g;
}

// Best CUDA-event time of launch() over repeats, after one warm-up.
double best_kernel_seconds(int repeats, cudaStream_t stream, const std::function<void()>& launch) {
  cuda::Event start, stop;
  launch();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeats; ++r) {
    start.record(stream);
    launch();
    stop.record(stream);
    stop.synchronize();
    best = std::min(best, stop.seconds_since(start));
  }
  return best;
}

// Float64 potential at a few random grid points, to report each kernel's accuracy.
struct Samples {
  std::vector<std::array<std::int64_t, 3>> points;
  std::vector<double> exact;
};

Samples sample_reference(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel,
                         int count) {
  Samples s;
  std::mt19937_64 rng(17);
  for (int n = 0; n < count; ++n) {
    const std::array<std::int64_t, 3> p{std::int64_t(rng() % grid.nx()),
                                        std::int64_t(rng() % grid.ny()),
                                        std::int64_t(rng() % grid.nz())};
    const auto r = grid.position(p[0], p[1], p[2]);
    double sum = 0;
    for (std::size_t a = 0; a < atoms.size(); ++a) {
      const double dx = r[0] - atoms.x[a], dy = r[1] - atoms.y[a], dz = r[2] - atoms.z[a];
      sum += atoms.q[a] * pair_term_double(kernel, dx * dx + dy * dy + dz * dz);
    }
    s.points.push_back(p);
    s.exact.push_back(kernel.scale_d * sum);
  }
  return s;
}

// Relative L2 error at the samples of a device grid in layout, times factor.
double sampled_error(const Samples& s, const cuda::DeviceBuffer<float>& out,
                     const SlabLayout& layout, double factor = 1.0) {
  std::vector<float> host(out.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (std::size_t n = 0; n < s.points.size(); ++n) {
    const auto& p = s.points[n];
    const double v =
        factor * host[(std::size_t(p[2]) * layout.rows_per_plane + p[1]) * layout.pitch_x + p[0]];
    num += (v - s.exact[n]) * (v - s.exact[n]);
    den += s.exact[n] * s.exact[n];
  }
  return std::sqrt(num / den);
}

// ---- inputs -------------------------------------------------------------------------------------

struct Case {
  std::string name;
  AtomSet atoms;
  GridSpec grid;
  int samples = 64;  // float64 reference points
};

GridSpec cube(std::int64_t n, double spacing) {
  return grid_from_origin({0, 0, 0}, {n, n, n}, spacing);
}

AtomSet random_atoms(std::size_t n, const GridSpec& grid, bool water_charges, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1), charge(-1, 1);
  const auto far = grid.far_corner();
  AtomSet atoms;
  atoms.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double q = water_charges ? (i % 3 == 0 ? -0.834 : 0.417) : charge(rng);
    atoms.push_back(grid.origin[0] + u(rng) * (far[0] - grid.origin[0]),
                    grid.origin[1] + u(rng) * (far[1] - grid.origin[1]),
                    grid.origin[2] + u(rng) * (far[2] - grid.origin[2]), q);
  }
  return atoms;
}

// ---- the runs -----------------------------------------------------------------------------------

struct Options {
  bool sweep = false;
  int gpus = 0;  // 0: all visible
  int repeats = 3;
  std::string structure = std::string(DCSGRID_SOURCE_DIR) + "/data/1hpv_pdb2pqr_amber.pqr.gz";
};

struct KernelResult {
  double seconds = 0, rel_l2 = 0;
};

// config from Table: the library's kernels (engine::LibraryDirectConfigs) or the sweep's.
template <typename Table>
KernelResult time_ours(const DirectConfig& config, const Case& c, const Samples& samples,
                       int repeats) {
  cuda::Stream stream;
  const PairKernel kernel = make_pair_kernel(Physics{});
  const engine::DeviceAtoms atoms = engine::upload_atoms(c.atoms, c.grid, stream.get());
  const SlabLayout layout = engine::direct_layout(config, c.grid);
  cuda::DeviceBuffer<float> out(layout.plane_bytes() / sizeof(float) * c.grid.nz());
  KernelResult r;
  r.seconds = best_kernel_seconds(repeats, stream.get(), [&] {
    engine::launch_direct_from<Table>(config, kernel, atoms, c.grid, {0, c.grid.nz()}, out.data(),
                                      stream.get());
  });
  r.rel_l2 = sampled_error(samples, out, layout);
  return r;
}

KernelResult time_baseline(const Case& c, const Samples& samples, int repeats) {
  cuda::Stream stream;
  const PairKernel kernel = make_pair_kernel(Physics{});
  // Pinned, so that the chunk copies queue behind the kernels without blocking the host.
  const std::vector<float4> local =
      engine::atoms_in_frame(c.atoms, engine::local_frame(c.grid), c.atoms.size());
  cuda::PinnedBuffer<float4> atoms(local.size());
  std::copy(local.begin(), local.end(), atoms.data());
  const SlabLayout layout = baseline_layout(c.grid);
  cuda::DeviceBuffer<float> out(layout.plane_bytes() / sizeof(float) * c.grid.nz());
  KernelResult r;
  r.seconds = best_kernel_seconds(repeats, stream.get(), [&] {
    run_baseline(atoms, c.grid, kernel.min_r2, out.data(), stream.get());
  });
  r.rel_l2 = sampled_error(samples, out, layout, kernel.scale_d);
  return r;
}

KernelResult time_baseline_shared(const Case& c, const Samples& samples, int repeats) {
  cuda::Stream stream;
  const PairKernel kernel = make_pair_kernel(Physics{});
  const std::vector<float4> local =
      engine::atoms_in_frame(c.atoms, engine::local_frame(c.grid), c.atoms.size());
  cuda::DeviceBuffer<float4> atoms(local.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(atoms.data(), local.data(), local.size() * sizeof(float4),
                                cudaMemcpyHostToDevice));
  const SlabLayout layout = baseline_layout(c.grid);
  cuda::DeviceBuffer<float> out(layout.plane_bytes() / sizeof(float) * c.grid.nz());
  KernelResult r;
  r.seconds = best_kernel_seconds(repeats, stream.get(), [&] {
    run_baseline_shared(atoms, c.grid, kernel.min_r2, out.data(), stream.get());
  });
  r.rel_l2 = sampled_error(samples, out, layout, kernel.scale_d);
  return r;
}

double pairs(const Case& c) {
  return double(c.grid.point_count()) * double(c.atoms.size());
}

void describe_context(Report& report, const Gpu& gpu) {
  report.set_context("gpu", gpu.name);
  report.set_context("sms", gpu.sms);
  report.set_context("clock_hz", gpu.clock_hz);
  report.set_context("rsqrt_bound_pairs_per_s", gpu.rsqrt_bound());
  report.set_context("default_config", engine::kDefaultDirectConfig.name());
}

void run_cases(const Options& o, const Gpu& gpu) {
  std::vector<Case> cases;
  cases.push_back({"1e5 random atoms, 256^3", random_atoms(100000, cube(256, 0.5), false, 1),
                   cube(256, 0.5), 128});
  if (const std::filesystem::path path = o.structure; std::filesystem::exists(path)) {
    AtomSet atoms = io::read_structure(path).atoms;
    const GridSpec grid = grid_around(bounding_box(atoms), 0.5, 10.0);
    cases.push_back({path.filename().string() + ", " + std::to_string(grid.nx()) + "x" +
                         std::to_string(grid.ny()) + "x" + std::to_string(grid.nz()),
                     std::move(atoms), grid, 128});
  } else {
    std::cout << "(no structure case: " << path << " not found)\n";
  }
  // Random positions with TIP3P charges: the cost of direct summation does not depend on where the
  // atoms are (a water-box generator is not in core/ yet).
  // 10^6 atoms at the density of water (0.1 per Å³) fill 216 Å: a 128³ grid at 1.7 Å covers them.
  cases.push_back({"1e6 water-charge atoms, 128^3", random_atoms(1000000, cube(128, 1.7), true, 2),
                   cube(128, 1.7), 32});

  Report report("cuda_direct", {"case", "kernel", "atoms", "points", "seconds", "pairs_per_s",
                                "of_rsqrt_bound", "vs_baseline", "rel_l2_sampled"});
  describe_context(report, gpu);
  report.set_context("targets", "ours >= 4.2e12 pairs/s and >= 1.5x baseline on an H100");
  for (const Case& c : cases) {
    const Samples samples =
        sample_reference(c.atoms, c.grid, make_pair_kernel(Physics{}), c.samples);
    const DirectConfig config = engine::direct_config_for(c.grid);
    const KernelResult ours =
        time_ours<engine::LibraryDirectConfigs>(config, c, samples, o.repeats);
    const KernelResult constant_base = time_baseline(c, samples, o.repeats);
    const KernelResult shared_base = time_baseline_shared(c, samples, o.repeats);
    // Ratios against the faster textbook form on this case.
    const KernelResult& base = constant_base.seconds < shared_base.seconds ? constant_base : shared_base;
    auto row = [&](const std::string& kernel, const KernelResult& r) {
      report.add_row({c.name, kernel, c.atoms.size(), c.grid.point_count(), r.seconds,
                      pairs(c) / r.seconds, pairs(c) / r.seconds / gpu.rsqrt_bound(),
                      base.seconds / r.seconds, r.rel_l2});
    };
    row("ours [" + config.name() + "]", ours);
    // What the grid-fitted warp width gains over 32-wide warps.
    if (config != engine::kDefaultDirectConfig)
      row("ours [" + engine::kDefaultDirectConfig.name() + "]",
          time_ours<engine::LibraryDirectConfigs>(engine::kDefaultDirectConfig, c, samples,
                                                  o.repeats));
    row("textbook baseline, constant memory", constant_base);
    row("textbook baseline, shared-memory tiles", shared_base);
  }
  report.finish();
}

void run_sweep(const Options& o, const Gpu& gpu) {
  const Case c{"1e5 random atoms, 256^3", random_atoms(100000, cube(256, 0.5), false, 1),
               cube(256, 0.5), 128};
  const Samples samples = sample_reference(c.atoms, c.grid, make_pair_kernel(Physics{}), c.samples);
  Report report("cuda_direct_sweep",
                {"config", "block", "points", "fma_points", "newton", "seconds", "pairs_per_s",
                 "of_rsqrt_bound", "rel_l2_sampled"});
  describe_context(report, gpu);
  report.set_context("case", c.name);
  for (const DirectConfig& config : SweepConfigs::configs) {
    const KernelResult r = time_ours<SweepConfigs>(config, c, samples, o.repeats);
    report.add_row({config.name(),
                    std::to_string(config.tile_x()) + "x" + std::to_string(config.tile_y()),
                    config.points(), config.fma_points, config.newton_steps, r.seconds,
                    pairs(c) / r.seconds, pairs(c) / r.seconds / gpu.rsqrt_bound(), r.rel_l2});
  }
  report.finish();
}

// The whole pipeline (backend.run: slabs, copies, a sink that only reads the first value) on one
// GPU and on N.
void run_scaling(const Options& o) {
  const int visible = engine::cuda_device_count();
  const int n = o.gpus > 0 ? std::min(o.gpus, visible) : visible;
  const GridSpec grid = cube(512, 0.5);
  const AtomSet atoms = random_atoms(100000, grid, false, 3);
  engine::PotentialRequest request;
  request.atoms = &atoms;
  request.grid = grid;
  const GridSpec tiny = cube(16, 0.5);
  engine::PotentialRequest warm = request;
  warm.grid = tiny;
  const double total_pairs = double(grid.point_count()) * double(atoms.size());

  Report report("cuda_direct_scaling",
                {"gpus", "wall_seconds", "kernel_seconds_max", "setup_seconds_max",
                 "pairs_per_s_wall", "speedup_wall", "speedup_kernel"});
  report.set_context("case", "1e5 random atoms, 512^3, backend run() with slabs and copies");
  report.set_context("target", "2 GPUs >= 1.9x one GPU");
  double one_wall = 0, one_kernel = 0;
  std::vector<int> counts{1};
  if (n > 1) counts.push_back(n);
  for (int count : counts) {
    std::vector<int> ids(count);
    for (int d = 0; d < count; ++d) ids[d] = d;
    auto backend = engine::make_cuda_backend(ids);
    float sink_guard = 0;
    const auto sink = [&](engine::Slab, const float* data) { sink_guard += data[0]; };
    backend->run(warm, sink);  // contexts up
    const auto t0 = std::chrono::steady_clock::now();
    const engine::RunStats stats = backend->run(request, sink);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (count == 1) one_wall = wall, one_kernel = stats.compute_seconds;
    report.add_row({count, wall, stats.compute_seconds, stats.setup_seconds, total_pairs / wall,
                    one_wall / wall, one_kernel / stats.compute_seconds});
    for (const auto& d : stats.devices)
      std::cout << "  " << d.device << ": setup " << d.setup_seconds << " s, kernels "
                << d.compute_seconds << " s, " << d.slabs << " slabs\n";
    if (!std::isfinite(sink_guard)) std::cout << "  (non-finite value in the output)\n";
  }
  if (n < 2) std::cout << "(one GPU visible: no multi-GPU ratio)\n";
  report.finish();
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--sweep")
      o.sweep = true;
    else if (a == "--gpus")
      o.gpus = std::stoi(value());
    else if (a == "--repeats")
      o.repeats = std::max(1, std::stoi(value()));
    else if (a == "--structure")
      o.structure = value();
    else
      throw Error("unknown option " + a +
                  " (use --sweep, --gpus N, --repeats N, --structure FILE)");
  }
  return o;
}

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) {
  using namespace dcsgrid;
  try {
    const bench::Options o = bench::parse(argc, argv);
    if (engine::cuda_device_count() == 0) {
      std::cout << "bench_cuda_direct: no CUDA device, nothing to measure\n";
      return 0;
    }
    const bench::Gpu gpu = bench::query_gpu(0);
    std::cout << gpu.name << ": " << gpu.sms << " SMs, " << gpu.clock_hz * 1e-9
              << " GHz peak, rsqrt bound " << gpu.rsqrt_bound() << " pairs/s\n";
    if (o.sweep) {
      bench::run_sweep(o, gpu);
    } else {
      bench::run_cases(o, gpu);
      bench::run_scaling(o);
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_cuda_direct: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
