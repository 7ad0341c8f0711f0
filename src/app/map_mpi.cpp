// The main job's grid over MPI ranks: slab i is computed by rank i mod N; rank 0 computes its own
// and receives the others' in z order, so its sink (the outputs, the comparisons) sees the same
// slabs as in one process, and no rank holds more than one slab.
#include <algorithm>

#include "mpi_ranks.hpp"

#include "dcsgrid/app/mpi_context.hpp"

#ifdef DCSGRID_HAVE_MPI
#include <mpi.h>
#include <omp.h>

#include <chrono>
#include <climits>
#include <vector>

#include "dcsgrid/engine/cuda_backend.hpp"
#endif

namespace dcsgrid::app {

#ifdef DCSGRID_HAVE_MPI

void choose_rank_hardware(ComputeSettings& compute) {
  if (!mpi::active() || mpi::size() < 2) return;
  if (compute.threads == 0) compute.threads = std::max(1, omp_get_num_procs() / mpi::local_size());
#ifdef DCSGRID_HAVE_CUDA
  const int gpus = engine::cuda_device_count();
  if (compute.gpus.empty() && compute.device != "cpu" && gpus > 0) compute.gpus = {mpi::local_rank() % gpus};
#endif
}

namespace {

// Slabs of at most 64 MiB, and at least 4 a rank where the grid has the planes, for balance. A
// backend's compute() sets up a run for each slab (for msm, its long-range grids, which every rank
// then builds whole: they are small), so msm takes one slab a rank where memory allows.
std::int64_t planes_per_slab(const engine::PotentialRequest& request, int ranks) {
  const GridSpec& grid = request.grid;
  const std::int64_t plane_bytes = std::int64_t(grid.plane_size() * sizeof(float));
  const std::int64_t by_memory = std::max<std::int64_t>(1, (std::int64_t(64) << 20) / plane_bytes);
  const std::int64_t slabs = request.method == engine::Method::msm ? ranks : 4 * std::int64_t(ranks);
  const std::int64_t by_balance = std::max<std::int64_t>(1, (grid.nz() + slabs - 1) / slabs);
  return std::min(by_memory, by_balance);
}

class RankSlabs final : public engine::Backend {
 public:
  explicit RankSlabs(std::unique_ptr<engine::Backend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  bool supports(engine::Method m) const override { return inner_->supports(m); }
  void warm_up() override { inner_->warm_up(); }
  void compute(const engine::PotentialRequest& request, engine::Slab slab, float* out) override {
    inner_->compute(request, slab, out);
  }

  engine::RunStats run(const engine::PotentialRequest& request, const engine::SlabSink& sink,
                       const engine::Progress& progress) override {
    using clock = std::chrono::steady_clock;
    engine::validate(request);
    const GridSpec& grid = request.grid;
    const int rank = mpi::rank(), ranks = mpi::size();
    const std::int64_t per_slab = planes_per_slab(request, ranks);
    std::vector<float> buffer(grid.plane_size() * std::size_t(per_slab));
    engine::RunStats stats;
    std::int64_t index = 0;
    for (std::int64_t z = 0; z < grid.nz(); z += per_slab, ++index) {
      const engine::Slab slab{z, std::min(grid.nz(), z + per_slab)};
      const int owner = int(index % ranks);
      const int count = int(grid.plane_size() * std::size_t(slab.planes()));
      const int tag = int(index % INT_MAX);
      if (owner == rank) {
        const auto t0 = clock::now();
        inner_->compute(request, slab, buffer.data());
        stats.compute_seconds += std::chrono::duration<double>(clock::now() - t0).count();
        if (rank != 0) MPI_Send(buffer.data(), count, MPI_FLOAT, 0, tag, MPI_COMM_WORLD);
      } else if (rank == 0) {
        MPI_Recv(buffer.data(), count, MPI_FLOAT, owner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (rank != 0) continue;
      const auto t1 = clock::now();
      sink(slab, buffer.data());
      stats.sink_seconds += std::chrono::duration<double>(clock::now() - t1).count();
      if (progress) progress(double(slab.z_end) / double(grid.nz()));
    }
    stats.device = inner_->name() + " × " + std::to_string(ranks) + " ranks";
    return stats;
  }

 private:
  std::unique_ptr<engine::Backend> inner_;
};

}  // namespace

std::unique_ptr<engine::Backend> share_slabs_over_ranks(std::unique_ptr<engine::Backend> backend) {
  if (!mpi::active() || mpi::size() < 2) return backend;
  return std::make_unique<RankSlabs>(std::move(backend));
}

#else

void choose_rank_hardware(ComputeSettings&) {}
std::unique_ptr<engine::Backend> share_slabs_over_ranks(std::unique_ptr<engine::Backend> backend) {
  return backend;
}

#endif

}  // namespace dcsgrid::app
