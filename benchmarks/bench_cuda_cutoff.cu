// The GPU cutoff method on water boxes (and PQR files given on the command line), 0.5 Å grid
// covering the atoms, 12 Å shifted cutoff:
//   - end to end (upload, binning, kernel, CPU overflow, copy back into page-locked memory as the
//     CUDA backend's slab buffers are; the CUDA context start-up is timed once, apart), best of
//     the repeats, with the kernel and binning times (CUDA events);
//   - pairs within the cutoff per second: the mean count of atoms within rc of 2000 random grid
//     points (exact, on the host) times the grid's points;
//   - the speedup over the CUDA direct engine, timed on a few planes and scaled to the grid;
//   - the default prefix-sum bins against fixed capacities (the 95% fit of the histogram, and 16);
//   - our binning against a CUB one (cub::DeviceRadixSort::SortPairs by bin, DeviceHistogram,
//     DeviceScan, gather), device time from the keys to the binned atoms.
//
//   bench_cuda_cutoff [--repeats N] [--sizes 6000,160000,...] [FILE.pqr ...]
// Targets: the 7.4·10^5-atom box end to end under 0.3 s on an H100; binning no slower than CUB.
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/engine/binning.hpp"
#include "dcsgrid/engine/cuda_cutoff.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "report.hpp"

namespace dcsgrid::bench {
namespace {

using Clock = std::chrono::steady_clock;
using engine::CutoffOptions;
using engine::CutoffSlabTimes;

constexpr double kSpacing = 0.5;
constexpr double kCutoff = 12.0;

struct Case {
  std::string name;
  AtomSet atoms;
  GridSpec grid;
};

engine::PotentialRequest cutoff_request(const Case& c, const CutoffOptions& cutoff) {
  engine::PotentialRequest r;
  r.atoms = &c.atoms;
  r.grid = c.grid;
  r.method = engine::Method::cutoff;
  r.cutoff = cutoff;
  return r;
}

CutoffOptions cutoff_options(int capacity) {
  CutoffOptions o;
  o.radius = kCutoff;
  o.form = engine::CutoffForm::shifted;
  o.bin_capacity = capacity;
  return o;
}

// The fixed capacity that ~95% of the atoms fit (choose_bin_capacity over the whole grid's bins):
// the alternative the default prefix-sum bins are measured against.
int histogram_capacity(const Case& c) {
  cuda::Stream stream;
  engine::DeviceAtomArrays atoms;
  engine::upload_atom_arrays(c.atoms, atoms, stream.get());
  engine::DeviceBins bins;
  engine::count_bins(atoms, engine::make_bin_geometry(c.grid, {0, c.grid.nz()}, kCutoff), bins, stream.get());
  return engine::choose_bin_capacity_cuda(bins, stream.get());
}

// Page-locks a host buffer for its lifetime, as the CUDA backend's slab buffers are.
class PinnedRegion {
 public:
  explicit PinnedRegion(std::vector<float>& v) : p_(v.data()) {
    DCSGRID_CUDA_CHECK(cudaHostRegister(p_, v.size() * sizeof(float), cudaHostRegisterDefault));
  }
  ~PinnedRegion() { cudaHostUnregister(p_); }
  PinnedRegion(const PinnedRegion&) = delete;
  PinnedRegion& operator=(const PinnedRegion&) = delete;

 private:
  void* p_;
};

// The fastest of `repeats` end-to-end runs (after a warm-up) into a page-locked host grid.
CutoffSlabTimes best_run(const Case& c, const CutoffOptions& cutoff, std::vector<float>& out, int repeats) {
  const auto request = cutoff_request(c, cutoff);
  const engine::Slab all{0, c.grid.nz()};
  CutoffSlabTimes best;
  best.total_seconds = std::numeric_limits<double>::infinity();
  for (int r = 0; r <= repeats; ++r) {
    CutoffSlabTimes t;
    engine::cutoff_sum_cuda(request, all, out.data(), &t);
    if (r > 0 && t.total_seconds < best.total_seconds) best = t;
  }
  return best;
}

// Exact pairs within rc at random grid points (host cell list of edge rc), scaled to the grid.
double pairs_within_cutoff(const Case& c, int samples) {
  const Box box = union_box(bounding_box(c.atoms), Box{c.grid.origin, c.grid.far_corner()});
  std::array<int, 3> dims{};
  for (int a = 0; a < 3; ++a) dims[a] = std::max(1, int(std::ceil((box.hi[a] - box.lo[a]) / kCutoff)) + 1);
  const auto cell_of = [&](double x, int a) {
    return std::clamp(int((x - box.lo[a]) / kCutoff), 0, dims[a] - 1);
  };
  std::vector<std::vector<std::uint32_t>> cells(std::size_t(dims[0]) * dims[1] * dims[2]);
  const auto flat = [&](int i, int j, int k) { return (std::size_t(k) * dims[1] + j) * dims[0] + i; };
  for (std::size_t i = 0; i < c.atoms.size(); ++i)
    cells[flat(cell_of(c.atoms.x[i], 0), cell_of(c.atoms.y[i], 1), cell_of(c.atoms.z[i], 2))].push_back(
        std::uint32_t(i));
  std::mt19937_64 rng(5);
  double within = 0;
  for (int s = 0; s < samples; ++s) {
    const auto p = c.grid.position(std::int64_t(rng() % c.grid.nx()), std::int64_t(rng() % c.grid.ny()),
                                   std::int64_t(rng() % c.grid.nz()));
    const int ci = cell_of(p[0], 0), cj = cell_of(p[1], 1), ck = cell_of(p[2], 2);
    for (int k = std::max(0, ck - 1); k <= std::min(dims[2] - 1, ck + 1); ++k)
      for (int j = std::max(0, cj - 1); j <= std::min(dims[1] - 1, cj + 1); ++j)
        for (int i = std::max(0, ci - 1); i <= std::min(dims[0] - 1, ci + 1); ++i)
          for (std::uint32_t a : cells[flat(i, j, k)]) {
            const double dx = p[0] - c.atoms.x[a], dy = p[1] - c.atoms.y[a], dz = p[2] - c.atoms.z[a];
            within += dx * dx + dy * dy + dz * dz < kCutoff * kCutoff;
          }
  }
  return within / samples * double(c.grid.point_count());
}

// The CUDA direct engine's device time on a few planes (about 2·10^11 pairs), scaled to the grid.
double direct_seconds_estimate(const Case& c) {
  engine::PotentialRequest request;
  request.atoms = &c.atoms;
  request.grid = c.grid;
  request.method = engine::Method::direct;
  cuda::Stream stream;
  auto method = engine::make_device_method(request, stream.get());
  const double pairs_per_plane = double(c.grid.plane_size()) * double(c.atoms.size());
  const std::int64_t planes = std::clamp<std::int64_t>(std::int64_t(2e11 / pairs_per_plane), 1, c.grid.nz());
  const engine::SlabLayout layout = method->layout();
  cuda::DeviceBuffer<float> out(layout.plane_bytes() / sizeof(float) * planes);
  cuda::Event start, stop;
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < 3; ++r) {  // the first is a warm-up
    start.record(stream.get());
    method->enqueue({0, planes}, out.data(), stream.get());
    stop.record(stream.get());
    stop.synchronize();
    if (r > 0) best = std::min(best, stop.seconds_since(start));
  }
  return best * double(c.grid.nz()) / double(planes);
}

// ---- binning: ours against CUB ------------------------------------------------------------------

__global__ void iota_kernel(std::uint32_t* v, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) v[i] = std::uint32_t(i);
}

__global__ void gather_kernel(const float* x, const float* y, const float* z, const float* q,
                              const std::uint32_t* order, std::size_t n, float3 frame, float4* out) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t a = order[i];
  out[i] = make_float4(x[a] - frame.x, y[a] - frame.y, z[a] - frame.z, q[a]);
}

unsigned blocks_of(std::size_t n) { return unsigned((n + 255) / 256); }

// Dynamic bins the CUB way: sort (bin, atom) pairs, count and scan the bins, gather the atoms.
struct CubBinning {
  std::size_t n, bins;
  cuda::DeviceBuffer<std::uint32_t> index, sorted_keys, sorted_index, counts, start;
  cuda::DeviceBuffer<float4> slots;
  cuda::DeviceBuffer<unsigned char> temp;
  int key_bits;

  CubBinning(std::size_t atoms, std::size_t bin_count)
      : n(atoms), bins(bin_count), index(atoms), sorted_keys(atoms), sorted_index(atoms),
        counts(bin_count + 1), start(bin_count + 1), slots(atoms),
        key_bits(int(std::ceil(std::log2(double(bin_count) + 2)))) {
    iota_kernel<<<blocks_of(n), 256>>>(index.data(), n);
    DCSGRID_CHECK_LAUNCH();
    std::size_t sort_bytes = 0, hist_bytes = 0, scan_bytes = 0;
    DCSGRID_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, index.data(), sorted_keys.data(),
                                                       index.data(), sorted_index.data(), n, 0, key_bits));
    DCSGRID_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, hist_bytes, index.data(), counts.data(),
                                                           int(bins + 2), 0u, std::uint32_t(bins + 1), n));
    DCSGRID_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, counts.data(), start.data(), bins + 1));
    temp.resize(std::max({sort_bytes, hist_bytes, scan_bytes}));
    DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // keys: the bin of each atom (bins for dropped ones, sorted last and left out of the scan).
  void run(const engine::DeviceAtomArrays& atoms, const std::uint32_t* keys, float3 frame, cudaStream_t s) {
    std::size_t bytes = temp.size();
    DCSGRID_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys, sorted_keys.data(), index.data(),
                                                       sorted_index.data(), n, 0, key_bits, s));
    bytes = temp.size();
    DCSGRID_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp.data(), bytes, sorted_keys.data(), counts.data(),
                                                           int(bins + 2), 0u, std::uint32_t(bins + 1), n, s));
    bytes = temp.size();
    DCSGRID_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, counts.data(), start.data(), bins + 1, s));
    gather_kernel<<<blocks_of(n), 256, 0, s>>>(atoms.x.data(), atoms.y.data(), atoms.z.data(), atoms.q.data(),
                                                sorted_index.data(), n, frame, slots.data());
    DCSGRID_CHECK_LAUNCH();
  }
};

double best_device_seconds(int repeats, cudaStream_t stream, const std::function<void()>& work) {
  cuda::Event start, stop;
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r <= repeats; ++r) {
    start.record(stream);
    work();
    stop.record(stream);
    stop.synchronize();
    if (r > 0) best = std::min(best, stop.seconds_since(start));
  }
  return best;
}

struct BinningTimes {
  double fixed = 0, fixed_with_choice = 0, dynamic = 0, cub = 0;
  std::size_t bins = 0;
  bool same_starts = false;
};

BinningTimes time_binning(const Case& c, int capacity, int repeats) {
  cuda::Stream stream;
  const cudaStream_t s = stream.get();
  engine::DeviceAtomArrays atoms;
  engine::upload_atom_arrays(c.atoms, atoms, s);
  const engine::BinGeometry g = engine::make_bin_geometry(c.grid, {0, c.grid.nz()}, kCutoff);
  engine::DeviceBins bins;
  BinningTimes t;
  t.bins = g.bin_count();
  t.fixed = best_device_seconds(repeats, s, [&] {
    engine::compute_bin_keys(atoms, g, bins, s);
    engine::scatter_fixed(atoms, g, capacity, bins, s);
  });
  t.fixed_with_choice = best_device_seconds(repeats, s, [&] {  // synchronises for the choice
    engine::count_bins(atoms, g, bins, s);
    engine::scatter_fixed(atoms, g, engine::choose_bin_capacity_cuda(bins, s), bins, s);
  });
  t.dynamic = best_device_seconds(repeats, s, [&] {
    engine::count_bins(atoms, g, bins, s);
    engine::scatter_dynamic(atoms, g, bins, s);
  });
  std::vector<std::uint32_t> ours(g.bin_count() + 1), theirs(g.bin_count() + 1);
  DCSGRID_CUDA_CHECK(cudaMemcpy(ours.data(), bins.start.data(), ours.size() * 4, cudaMemcpyDeviceToHost));

  CubBinning cub_bins(c.atoms.size(), g.bin_count());
  const float3 frame{g.frame_origin[0], g.frame_origin[1], g.frame_origin[2]};
  t.cub = best_device_seconds(repeats, s, [&] {
    engine::compute_bin_keys(atoms, g, bins, s);
    cub_bins.run(atoms, bins.keys.data(), frame, s);
  });
  DCSGRID_CUDA_CHECK(cudaMemcpy(theirs.data(), cub_bins.start.data(), theirs.size() * 4, cudaMemcpyDeviceToHost));
  t.same_starts = ours == theirs;
  return t;
}

// ---- inputs -------------------------------------------------------------------------------------

GridSpec covering_grid(const AtomSet& atoms) { return grid_around(bounding_box(atoms), kSpacing, 0.0); }

Case water_case(std::size_t atoms) {
  Case c;
  c.atoms = water_box_atoms(atoms, 2026);
  c.grid = covering_grid(c.atoms);
  c.name = "water " + std::to_string(c.atoms.size());
  return c;
}

Case file_case(const std::string& path) {
  Case c;
  c.atoms = io::read_structure(path).atoms;
  c.grid = covering_grid(c.atoms);
  c.name = std::filesystem::path(path).filename().string();
  return c;
}

struct Options {
  int repeats = 3;
  std::vector<std::size_t> sizes{6000, 160000, 740000, 4000000};
  std::vector<std::string> files;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) {
      o.repeats = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--sizes" && i + 1 < argc) {
      o.sizes.clear();
      std::string list = argv[++i];
      for (std::size_t p = 0; p < list.size();) {
        const std::size_t comma = std::min(list.find(',', p), list.size());
        o.sizes.push_back(std::stoul(list.substr(p, comma - p)));
        p = comma + 1;
      }
    } else if (a.rfind("--", 0) == 0) {
      throw Error("bench_cuda_cutoff: unknown option " + a +
                  " (use --repeats N, --sizes N,N,... and PQR files)");
    } else {
      o.files.push_back(a);
    }
  }
  return o;
}

int run(int argc, char** argv) {
  const Options options = parse(argc, argv);
  const auto t0 = Clock::now();
  DCSGRID_CUDA_CHECK(cudaSetDevice(0));
  DCSGRID_CUDA_CHECK(cudaFree(nullptr));
  const double context = std::chrono::duration<double>(Clock::now() - t0).count();

  Report main_report("cuda_cutoff",
                     {"case", "atoms", "points", "capacity", "overflow atoms", "binning ms", "kernel ms",
                      "overflow cpu ms", "overlap %", "copy ms", "end to end s", "pairs", "pairs/s kernel",
                      "pairs/s end to end", "direct s (est.)", "speedup e2e", "speedup kernel"});
  Report variants("cuda_cutoff_variants",
                  {"case", "variant", "capacity", "overflow atoms", "binning ms", "kernel ms",
                   "overflow cpu ms", "end to end s"});
  Report binning("cuda_cutoff_binning",
                 {"case", "atoms", "bins", "fixed ms", "fixed + choice ms", "dynamic ms", "cub ms",
                  "cub / dynamic", "cub / fixed", "same starts"});
  for (Report* r : {&main_report, &variants, &binning}) {
    r->set_context("device", cuda::device_label(0));
    r->set_context("host", cpu_description());
    r->set_context("spacing", kSpacing);
    r->set_context("cutoff", kCutoff);
    r->set_context("form", "shifted");
    r->set_context("repeats", options.repeats);
    r->set_context("cuda_context_seconds", context);
  }
  main_report.set_context("target", "water 7.4e5 atoms end to end < 0.3 s");

  std::vector<Case> cases;
  for (std::size_t n : options.sizes) cases.push_back(water_case(n));
  for (const std::string& f : options.files) cases.push_back(file_case(f));
  for (const Case& c : cases) {
    std::cerr << "bench_cuda_cutoff: " << c.name << " on " << c.grid.describe() << "\n";
    std::vector<float> out(c.grid.point_count(), 0.0f);
    const PinnedRegion pinned(out);
    const int repeats = c.grid.point_count() > 200'000'000 ? 2 : options.repeats;
    const CutoffSlabTimes automatic = best_run(c, cutoff_options(0), out, repeats);
    const int chosen = histogram_capacity(c);
    const CutoffSlabTimes fixed_chosen = best_run(c, cutoff_options(chosen), out, repeats);
    const CutoffSlabTimes fixed16 = best_run(c, cutoff_options(16), out, repeats);
    const double pairs = pairs_within_cutoff(c, 2000);
    const double direct = direct_seconds_estimate(c);
    const auto& run = automatic.run;
    main_report.add_row({c.name, c.atoms.size(), c.grid.point_count(), run.bin_capacity, run.atoms_overflow,
                         run.binning_seconds * 1e3, run.kernel_seconds * 1e3, run.overflow_seconds * 1e3,
                         run.overlap() * 100, automatic.copy_seconds * 1e3, automatic.total_seconds, pairs,
                         pairs / run.kernel_seconds, pairs / automatic.total_seconds, direct,
                         direct / automatic.total_seconds, direct / run.kernel_seconds});
    for (const auto& [name, t] : {std::pair{"prefix-sum (default)", automatic},
                                  std::pair{"fixed, 95% fit", fixed_chosen}, std::pair{"fixed 16", fixed16}})
      variants.add_row({c.name, name, t.run.bin_capacity, t.run.atoms_overflow, t.run.binning_seconds * 1e3,
                        t.run.kernel_seconds * 1e3, t.run.overflow_seconds * 1e3, t.total_seconds});
    const BinningTimes b = time_binning(c, chosen, 10);
    binning.add_row({c.name, c.atoms.size(), b.bins, b.fixed * 1e3, b.fixed_with_choice * 1e3, b.dynamic * 1e3,
                     b.cub * 1e3, b.cub / b.dynamic, b.cub / b.fixed, b.same_starts ? "yes" : "NO"});
  }
  main_report.finish();
  variants.finish();
  binning.finish();
  return 0;
}

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) {
  try {
    return dcsgrid::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda_cutoff: %s\n", e.what());
    return 1;
  }
}
