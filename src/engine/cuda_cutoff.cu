// The GPU cutoff method (cuda_cutoff.hpp): binning and kernel per slab on the device, the overflow
// atoms summed on the CPU by a worker thread while the kernel runs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <map>
#include <thread>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/cuda_cutoff.hpp"

namespace dcsgrid::engine {
namespace {

using Clock = std::chrono::steady_clock;
double now_seconds() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// Part of the CPU's share of one slab: some overflow atoms' potential on the sub-grid they reach.
struct OverflowPart {
  std::array<std::int64_t, 3> first{};  // the sub-grid's point (0, 0, 0) in slab indices
  std::array<std::int64_t, 3> dims{};
  std::vector<float> values;            // x fastest
};

// The CPU's share of one slab.
struct OverflowSum {
  std::vector<OverflowPart> parts;
  std::size_t atoms = 0;
  double bins_ready = 0;                // host clock when the binning was seen complete
  double cpu_begin = 0, cpu_end = 0;    // host clock around the CPU sum
};

// One enqueued slab, until finish_on_host.
struct SlabRun {
  Slab slab;
  cuda::Event bin_start, bins_done, kernel_done;
  std::future<OverflowSum> overflow;       // fixed capacity only
  std::shared_future<void> list_fetched;   // the overflow list is on the host
};

// Points [lo, hi] of one axis within reach (rc) of coordinates [a_lo, a_hi], clipped to [0, n).
// One point of slack on each side: distances are tested exactly later.
std::array<std::int64_t, 2> reach_range(double a_lo, double a_hi, double rc, double origin,
                                        double spacing, std::int64_t n) {
  const double lo = std::floor((a_lo - rc - origin) / spacing) - 1;
  const double hi = std::ceil((a_hi + rc - origin) / spacing) + 1;
  return {std::int64_t(std::max(lo, 0.0)), std::int64_t(std::min(hi, double(n - 1)))};
}

// The points of a slab within reach of a box of atoms: [lo, hi] grid indices per axis.
struct Reach {
  std::array<std::array<std::int64_t, 2>, 3> range;
  std::int64_t points() const {
    std::int64_t n = 1;
    for (const auto& r : range) n *= std::max<std::int64_t>(0, r[1] - r[0] + 1);
    return n;
  }
};

Reach reach_of(const Box& box, const GridSpec& grid, double rc, Slab slab) {
  Reach r;
  const std::array<std::int64_t, 3> n{grid.nx(), grid.ny(), grid.nz()};
  for (int a = 0; a < 3; ++a)
    r.range[a] = reach_range(box.lo[a], box.hi[a], rc, grid.origin[a], grid.spacing[a], n[a]);
  r.range[2] = {std::max(r.range[2][0], slab.z_begin), std::min(r.range[2][1], slab.z_end - 1)};
  return r;
}

// Overflow atoms are few and mostly scattered (one here, one there, from the crowded bins), so
// one sub-grid around all of them would span the whole slab: most of the CPU's time went into
// zeroing and adding points no overflow atom reaches. They are bucketed into cubes of edge rc/4
// and each bucket is summed on the sub-grid it reaches, unless those sub-grids together hold
// more points than one sub-grid around all the atoms (a dense overflow), which is taken then.
constexpr double kOverflowBucketPerRadius = 0.25;

// A group of overflow atoms and the points of the slab it reaches.
struct OverflowGroup {
  AtomSet atoms;
  Reach reach;
};

std::vector<OverflowGroup> overflow_groups(const AtomSet& atoms, const GridSpec& grid, double rc,
                                           Slab slab) {
  const double edge = kOverflowBucketPerRadius * rc;
  std::map<std::array<std::int64_t, 3>, AtomSet> buckets;  // ordered: a fixed summation order
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const std::array<std::int64_t, 3> key{std::int64_t(std::floor(atoms.x[i] / edge)),
                                          std::int64_t(std::floor(atoms.y[i] / edge)),
                                          std::int64_t(std::floor(atoms.z[i] / edge))};
    buckets[key].push_back(atoms.x[i], atoms.y[i], atoms.z[i], atoms.q[i]);
  }
  std::vector<OverflowGroup> groups;
  groups.reserve(buckets.size());
  std::int64_t bucket_points = 0;
  for (auto& [key, bucket] : buckets) {
    const Reach reach = reach_of(bounding_box(bucket), grid, rc, slab);
    bucket_points += reach.points();
    groups.push_back({std::move(bucket), reach});
  }
  const Reach whole = reach_of(bounding_box(atoms), grid, rc, slab);
  if (bucket_points >= whole.points()) return {{atoms, whole}};
  return groups;
}

// Sums atoms (the overflow ones) over the parts of the slab they reach, with the CPU engine.
void sum_on_cpu(const AtomSet& atoms, const PotentialRequest& request, Slab slab, OverflowSum& out) {
  if (atoms.empty()) return;
  const GridSpec& grid = request.grid;
  const double rc = request.cutoff.radius;
  const std::vector<OverflowGroup> groups = overflow_groups(atoms, grid, rc, slab);
  std::vector<CutoffPart> parts;
  for (const auto& [group, reach] : groups) {
    if (reach.points() == 0) continue;
    OverflowPart part;
    GridSpec sub = grid;
    sub.origin = grid.position(reach.range[0][0], reach.range[1][0], reach.range[2][0]);
    for (int a = 0; a < 3; ++a) {
      sub.dims[a] = reach.range[a][1] - reach.range[a][0] + 1;
      part.first[a] = reach.range[a][0] - (a == 2 ? slab.z_begin : 0);
    }
    part.dims = sub.dims;
    part.values.assign(sub.point_count(), 0.0f);
    out.parts.push_back(std::move(part));
    parts.push_back({&group, sub, out.parts.back().values.data()});
  }
  cutoff_accumulate_parts_cpu(parts, make_pair_kernel(request.physics), request.cutoff);
}

// Adds the CPU's parts into the slab on the host. Threads own planes of the slab, so parts that
// overlap are added without races (this file is compiled by nvcc, without OpenMP).
void add_into(const OverflowSum& sum, const GridSpec& grid, Slab slab, float* host) {
  std::size_t values = 0;
  for (const auto& part : sum.parts) values += part.values.size();
  if (values == 0) return;
  const std::int64_t nx = grid.nx(), ny = grid.ny(), planes = slab.planes();
  const auto add_planes = [&](std::int64_t k_begin, std::int64_t k_end) {
    for (const OverflowPart& part : sum.parts) {
      const auto [dx, dy, dz] = part.dims;
      const std::int64_t lo = std::max(k_begin, part.first[2]);
      const std::int64_t hi = std::min(k_end, part.first[2] + dz);
      for (std::int64_t k = lo; k < hi; ++k)
        for (std::int64_t j = 0; j < dy; ++j) {
          float* dst = host + (k * ny + part.first[1] + j) * nx + part.first[0];
          const float* src = part.values.data() + ((k - part.first[2]) * dy + j) * dx;
          for (std::int64_t i = 0; i < dx; ++i) dst[i] += src[i];
        }
    }
  };
  const std::int64_t threads =
      std::clamp<std::int64_t>(std::int64_t(std::thread::hardware_concurrency()), 1,
                               std::max<std::int64_t>(1, std::int64_t(values >> 18)));
  std::vector<std::thread> pool;
  const std::int64_t per = (planes + threads - 1) / threads;
  for (std::int64_t k = per; k < planes; k += per) pool.emplace_back(add_planes, k, std::min(planes, k + per));
  add_planes(0, std::min(planes, per));
  for (auto& t : pool) t.join();
}

}  // namespace

nlohmann::json CutoffRunStats::to_json() const {
  return {{"upload_seconds", upload_seconds},
          {"binning_seconds", binning_seconds},
          {"kernel_seconds", kernel_seconds},
          {"overflow_seconds", overflow_seconds},
          {"overflow_hidden_seconds", overflow_hidden_seconds},
          {"overlap", overlap()},
          {"add_seconds", add_seconds},
          {"slabs", slabs},
          {"atoms", atoms},
          {"atoms_overflow", atoms_overflow},
          {"bin_capacity", bin_capacity},
          {"geometry", geometry}};
}

struct CudaCutoffMethod::Impl {
  PotentialRequest request;
  int device = 0;
  PairKernel pair;
  DeviceAtomArrays atoms;
  DeviceBins bins;
  int capacity = 0;  // 0: dynamic bins
  cuda::DeviceBuffer<unsigned> brick_counter{1};
  cuda::Stream side;  // overflow list copies, from the worker threads
  std::deque<std::unique_ptr<SlabRun>> pending;
  CutoffRunStats stats;

  // Worker thread: waits for the binning, fetches the overflow list, sums it on the CPU.
  OverflowSum sum_overflow(SlabRun* run, std::promise<void> fetched) {
    OverflowSum sum;
    std::vector<std::uint32_t> index;
    try {
      DCSGRID_CUDA_CHECK(cudaSetDevice(device));
      run->bins_done.synchronize();
      sum.bins_ready = now_seconds();
      std::uint32_t count = 0;
      DCSGRID_CUDA_CHECK(cudaMemcpyAsync(&count, bins.overflow_count.data(), sizeof(count),
                                         cudaMemcpyDeviceToHost, side.get()));
      side.synchronize();
      index.resize(count);
      if (count)
        DCSGRID_CUDA_CHECK(cudaMemcpyAsync(index.data(), bins.overflow.data(),
                                           count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost,
                                           side.get()));
      side.synchronize();
    } catch (...) {
      fetched.set_exception(std::current_exception());
      throw;
    }
    fetched.set_value();
    const AtomSet& all = *request.atoms;
    AtomSet overflow_atoms;
    overflow_atoms.reserve(index.size());
    for (std::uint32_t i : index) overflow_atoms.push_back(all.x[i], all.y[i], all.z[i], all.q[i]);
    sum.atoms = overflow_atoms.size();
    sum.cpu_begin = now_seconds();
    sum_on_cpu(overflow_atoms, request, run->slab, sum);
    sum.cpu_end = now_seconds();
    return sum;
  }
};

CudaCutoffMethod::CudaCutoffMethod(const PotentialRequest& request, cudaStream_t stream)
    : impl_(std::make_unique<Impl>()) {
  validate(request);
  if (request.method != Method::cutoff) throw Error("CudaCutoffMethod: the request is not for the cutoff method");
  const auto t0 = Clock::now();
  Impl& m = *impl_;
  m.request = request;
  DCSGRID_CUDA_CHECK(cudaGetDevice(&m.device));
  m.pair = make_pair_kernel(request.physics);
  m.stats.atoms = request.atoms->size();
  upload_atom_arrays(*request.atoms, m.atoms, stream);
  m.capacity = request.cutoff.bin_capacity;
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  m.stats.bin_capacity = m.capacity;
  m.stats.upload_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

CudaCutoffMethod::~CudaCutoffMethod() {
  // Workers use this object's buffers: let them finish before it goes.
  for (auto& run : impl_->pending)
    if (run->overflow.valid()) run->overflow.wait();
}

SlabLayout CudaCutoffMethod::layout() const { return cutoff_slab_layout(impl_->request.grid); }

void CudaCutoffMethod::enqueue(Slab slab, float* out, cudaStream_t stream) {
  Impl& m = *impl_;
  auto run = std::make_unique<SlabRun>();
  run->slab = slab;
  if (!m.pending.empty()) {
    // The bin buffers are shared between slabs: the previous kernel must be done reading them
    // and the previous overflow list copied out before this binning overwrites them.
    SlabRun& prev = *m.pending.back();
    DCSGRID_CUDA_CHECK(cudaStreamWaitEvent(stream, prev.kernel_done.get()));
    if (prev.list_fetched.valid()) prev.list_fetched.get();
  }
  const BinGeometry g = make_bin_geometry(m.request.grid, slab, m.request.cutoff.radius);
  if (m.stats.geometry.empty()) m.stats.geometry = g.describe();

  run->bin_start.record(stream);
  if (m.capacity == 0) {
    count_bins(m.atoms, g, m.bins, stream);
    scatter_dynamic(m.atoms, g, m.bins, stream);
  } else {
    compute_bin_keys(m.atoms, g, m.bins, stream);
    scatter_fixed(m.atoms, g, m.capacity, m.bins, stream);
  }
  run->bins_done.record(stream);
  launch_cutoff_kernel(g, m.bins, m.pair, m.request.cutoff, out, m.brick_counter.data(), stream);
  run->kernel_done.record(stream);

  if (m.capacity > 0) {
    std::promise<void> fetched;
    run->list_fetched = fetched.get_future().share();
    run->overflow = std::async(std::launch::async, &Impl::sum_overflow, &m, run.get(), std::move(fetched));
  }
  m.pending.push_back(std::move(run));
}

double CudaCutoffMethod::finish_on_host(Slab slab, float* host) {
  Impl& m = *impl_;
  if (m.pending.empty() || m.pending.front()->slab.z_begin != slab.z_begin ||
      m.pending.front()->slab.z_end != slab.z_end)
    throw Error("CudaCutoffMethod: finish_on_host must follow the enqueues in order");
  std::unique_ptr<SlabRun> run = std::move(m.pending.front());
  m.pending.pop_front();
  run->kernel_done.synchronize();
  const double kernel = run->kernel_done.seconds_since(run->bins_done);
  m.stats.binning_seconds += run->bins_done.seconds_since(run->bin_start);
  m.stats.kernel_seconds += kernel;
  ++m.stats.slabs;
  if (!run->overflow.valid()) return 0;
  if (!host) throw Error("CudaCutoffMethod: a slab with bins of fixed capacity must reach the host");

  const OverflowSum sum = run->overflow.get();
  const auto t0 = Clock::now();
  add_into(sum, m.request.grid, slab, host);
  const double add = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu = sum.cpu_end - sum.cpu_begin;
  const double hidden = std::min(sum.cpu_end, sum.bins_ready + kernel) - std::max(sum.cpu_begin, sum.bins_ready);
  m.stats.atoms_overflow += sum.atoms;
  m.stats.overflow_seconds += cpu;
  m.stats.overflow_hidden_seconds += std::clamp(hidden, 0.0, cpu);
  m.stats.add_seconds += add;
  return cpu + add;
}

bool CudaCutoffMethod::finishes_on_host() const { return impl_->capacity > 0; }

const CutoffRunStats& CudaCutoffMethod::stats() const { return impl_->stats; }

std::unique_ptr<DeviceMethod> make_cutoff_device_method(const PotentialRequest& request,
                                                        cudaStream_t stream) {
  return std::make_unique<CudaCutoffMethod>(request, stream);
}

void cutoff_sum_cuda(const PotentialRequest& request, Slab slab, float* out, CutoffSlabTimes* times) {
  const auto t0 = Clock::now();
  cuda::Stream stream;
  CudaCutoffMethod method(request, stream.get());
  const SlabLayout layout = method.layout();
  cuda::DeviceBuffer<float> device_out(std::size_t(layout.pitch_x) * layout.rows_per_plane *
                                       std::size_t(slab.planes()));
  method.enqueue(slab, device_out.data(), stream.get());
  stream.synchronize();

  const auto c0 = Clock::now();
  const std::size_t nx = std::size_t(request.grid.nx()), ny = std::size_t(request.grid.ny());
  cudaMemcpy3DParms p{};
  p.srcPtr = make_cudaPitchedPtr(device_out.data(), std::size_t(layout.pitch_x) * sizeof(float), nx,
                                 std::size_t(layout.rows_per_plane));
  p.dstPtr = make_cudaPitchedPtr(out, nx * sizeof(float), nx, ny);
  p.extent = make_cudaExtent(nx * sizeof(float), ny, std::size_t(slab.planes()));
  p.kind = cudaMemcpyDeviceToHost;
  DCSGRID_CUDA_CHECK(cudaMemcpy3DAsync(&p, stream.get()));
  stream.synchronize();
  const double copy = std::chrono::duration<double>(Clock::now() - c0).count();

  method.finish_on_host(slab, out);
  if (times) {
    times->run = method.stats();
    times->copy_seconds = copy;
    times->total_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  }
}

}  // namespace dcsgrid::engine
