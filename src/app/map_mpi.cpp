// The main job's grid over MPI ranks (mpi_ranks.hpp). Contiguous blocks of planes, not slabs dealt
// round-robin: a rank's cutoff atoms are its planes' atoms plus one halo of the cutoff radius on
// each side, where round-robin slabs would each need their own (docs/scaling.md).
#include <algorithm>
#include <climits>

#include "app/mpi_ranks.hpp"

#include "dcsgrid/app/mpi_context.hpp"
#include "dcsgrid/core/error.hpp"

#ifdef DCSGRID_HAVE_MPI
#include <mpi.h>
#include <omp.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>

#include <spdlog/spdlog.h>

#include "dcsgrid/engine/cuda_backend.hpp"
#include "dcsgrid/engine/slab_atoms.hpp"
#endif

namespace dcsgrid::app {

namespace {

void copy_slab(const GridSpec& grid, engine::Slab slab, const float* data, std::vector<float>& whole) {
  std::copy(data, data + grid.plane_size() * slab.planes(), whole.begin() + grid.plane_size() * slab.z_begin);
}

}  // namespace

std::vector<engine::Slab> rank_slabs(const engine::PotentialRequest& request, int rank, int ranks) {
  const GridSpec& grid = request.grid;
  const std::int64_t begin = grid.nz() * rank / ranks, end = grid.nz() * (rank + 1) / ranks;
  const std::int64_t plane_bytes = std::int64_t(grid.plane_size() * sizeof(float));
  // A backend's compute() repeats a method's run set-up for every slab (one process does it once a
  // run, such as msm's long-range grids): such methods' slabs go up to the engine's default size.
  const std::int64_t slab_bytes =
      engine::describe(request.method).run_setup ? std::int64_t(1) << 30 : std::int64_t(64) << 20;
  const std::int64_t per_slab = std::max<std::int64_t>(1, slab_bytes / plane_bytes);
  std::vector<engine::Slab> slabs;
  for (std::int64_t z = begin; z < end; z += per_slab) slabs.push_back({z, std::min(end, z + per_slab)});
  return slabs;
}

#ifdef DCSGRID_HAVE_MPI

bool sharing_ranks() { return mpi::active() && mpi::size() > 1; }

void choose_rank_hardware(ComputeSettings& compute) {
  if (!sharing_ranks()) return;
  if (compute.threads == 0) compute.threads = std::max(1, omp_get_num_procs() / mpi::local_size());
#ifdef DCSGRID_HAVE_CUDA
  const int gpus = engine::cuda_device_count();
  if (compute.gpus.empty() && compute.device != "cpu" && gpus > 0) compute.gpus = {mpi::local_rank() % gpus};
#endif
}

namespace {

int message_count(std::size_t n) {
  if (n > std::size_t(INT_MAX)) throw Error("internal: a message of " + std::to_string(n) + " values is too long for MPI");
  return int(n);
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
    const int ranks = mpi::size();
    const std::vector<engine::Slab> mine = rank_slabs(request, mpi::rank(), ranks);
    std::size_t rounds = 0, most_planes = 0;
    for (int r = 0; r < ranks; ++r) {
      const auto slabs = rank_slabs(request, r, ranks);
      rounds = std::max(rounds, slabs.size());
      for (const auto& s : slabs) most_planes = std::max(most_planes, std::size_t(s.planes()));
    }
    std::vector<float> buffer(request.grid.plane_size() * most_planes);
    engine::RunStats stats;
    for (std::size_t round = 0; round < rounds; ++round) {
      const engine::Slab slab = round < mine.size() ? mine[round] : engine::Slab{};
      const auto t0 = clock::now();
      if (slab.planes() > 0) inner_->compute(request, slab, buffer.data());
      const auto t1 = clock::now();
      sink(slab, buffer.data());
      stats.compute_seconds += std::chrono::duration<double>(t1 - t0).count();
      stats.sink_seconds += std::chrono::duration<double>(clock::now() - t1).count();
      if (progress) progress(double(round + 1) / double(rounds));
    }
    stats.device = inner_->name() + " × " + std::to_string(ranks) + " ranks";
    return stats;
  }

 private:
  std::unique_ptr<engine::Backend> inner_;
};

// Rank 0's `source` into `into` on every other rank (MPI_Bcast only reads the root's buffers).
void broadcast_atoms(const AtomSet& source, AtomSet& into) {
  const bool root = mpi::rank() == 0;
  unsigned long long n[2] = {source.size(), source.has_radii()};
  MPI_Bcast(n, 2, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  const auto from = source.columns(n[1] != 0);
  const auto to = into.columns(n[1] != 0);
  for (std::size_t i = 0; i < from.size(); ++i) {
    if (!root) to[i]->resize(n[0]);
    float* buffer = root ? const_cast<float*>(from[i]->data()) : to[i]->data();  // MPI_Bcast reads the root's
    MPI_Bcast(buffer, message_count(n[0]), MPI_FLOAT, 0, MPI_COMM_WORLD);
  }
}

void send_atoms(const AtomSet& atoms, int rank) {
  const unsigned long long n[2] = {atoms.size(), atoms.has_radii()};
  MPI_Send(n, 2, MPI_UNSIGNED_LONG_LONG, rank, 0, MPI_COMM_WORLD);
  for (const std::vector<float>* v : atoms.columns(n[1] != 0))
    MPI_Send(v->data(), message_count(n[0]), MPI_FLOAT, rank, 0, MPI_COMM_WORLD);
}

void receive_atoms(AtomSet& atoms) {
  unsigned long long n[2] = {0, 0};
  MPI_Recv(n, 2, MPI_UNSIGNED_LONG_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (std::vector<float>* v : atoms.columns(n[1] != 0)) {
    v->resize(n[0]);
    MPI_Recv(v->data(), message_count(n[0]), MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

}  // namespace

std::unique_ptr<engine::Backend> share_slabs_over_ranks(std::unique_ptr<engine::Backend> backend) {
  if (!sharing_ranks()) return backend;
  return std::make_unique<RankSlabs>(std::move(backend));
}

void share_text(std::string& text) {
  if (!sharing_ranks()) return;
  unsigned long long size = text.size();
  MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  text.resize(size);
  MPI_Bcast(text.data(), message_count(size), MPI_CHAR, 0, MPI_COMM_WORLD);
}

void share_facts(std::size_t& atoms, double& total_charge, GridSpec& grid) {
  if (!sharing_ranks()) return;
  unsigned long long count = atoms;
  MPI_Bcast(&count, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  atoms = count;
  MPI_Bcast(&total_charge, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(grid.origin.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(grid.spacing.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(grid.dims.data(), 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Bcast(grid.skew.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

void share_cell(std::optional<UnitCell>& cell) {
  if (!sharing_ranks()) return;
  // Lengths, angles and a presence flag: every rank rebuilds the same cell from them.
  std::array<double, 7> v{};
  if (cell) v = {cell->lengths[0], cell->lengths[1], cell->lengths[2], cell->angles[0], cell->angles[1], cell->angles[2], 1};
  MPI_Bcast(v.data(), 7, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  cell.reset();
  if (v[6] != 0) cell = make_cell({v[0], v[1], v[2]}, {v[3], v[4], v[5]});
}

void share_methods(std::vector<engine::Method>& methods) {
  if (!sharing_ranks()) return;
  std::vector<int> codes(methods.size());
  std::ranges::transform(methods, codes.begin(), [](engine::Method m) { return int(m); });
  int count = int(codes.size());
  MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD);
  codes.resize(std::size_t(count));
  MPI_Bcast(codes.data(), count, MPI_INT, 0, MPI_COMM_WORLD);
  methods.assign(codes.size(), engine::Method{});
  std::ranges::transform(codes, methods.begin(), [](int c) { return engine::Method(c); });
}

const AtomSet& share_atoms(const AtomSet& root_atoms, const engine::PotentialRequest& request,
                           bool every_atom, bool gpu, AtomSet& received) {
  if (!sharing_ranks()) return root_atoms;
  const bool root = mpi::rank() == 0;
  if (every_atom) {
    broadcast_atoms(root_atoms, received);
    return root ? root_atoms : received;
  }
  int on_gpu = gpu;
  std::vector<int> ranks_on_gpu(std::size_t(root ? mpi::size() : 0));
  MPI_Gather(&on_gpu, 1, MPI_INT, ranks_on_gpu.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!root) {
    receive_atoms(received);
    return received;
  }
  for (int rank = 1; rank < mpi::size(); ++rank) {
    const AtomSet atoms = engine::atoms_for_slabs(request, rank_slabs(request, rank, mpi::size()),
                                                  ranks_on_gpu[std::size_t(rank)] != 0);
    spdlog::debug("rank {} computes from {} of the {} atoms (its planes' and the halo's)", rank, atoms.size(),
                  root_atoms.size());
    send_atoms(atoms, rank);
  }
  return root_atoms;
}

void gather_slabs_to_root(const GridSpec& grid, engine::Slab slab, const float* data, std::vector<float>& whole) {
  if (!sharing_ranks()) return copy_slab(grid, slab, data, whole);
  const int ranks = mpi::size();
  const std::int64_t mine[2] = {slab.z_begin, slab.planes()};
  std::vector<std::int64_t> all(2 * std::size_t(ranks));
  MPI_Gather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
  const int count = message_count(grid.plane_size() * std::size_t(slab.planes()));
  if (mpi::rank() != 0) {
    if (count > 0) MPI_Send(data, count, MPI_FLOAT, 0, 1, MPI_COMM_WORLD);
    return;
  }
  copy_slab(grid, slab, data, whole);
  for (int r = 1; r < ranks; ++r) {
    const std::size_t z = std::size_t(all[2 * r]), planes = std::size_t(all[2 * r + 1]);
    if (planes > 0)
      MPI_Recv(whole.data() + grid.plane_size() * z, message_count(grid.plane_size() * planes), MPI_FLOAT,
               r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

#else

bool sharing_ranks() { return false; }
void choose_rank_hardware(ComputeSettings&) {}
std::unique_ptr<engine::Backend> share_slabs_over_ranks(std::unique_ptr<engine::Backend> backend) {
  return backend;
}
void share_text(std::string&) {}
void share_facts(std::size_t&, double&, GridSpec&) {}
void share_cell(std::optional<UnitCell>&) {}
void share_methods(std::vector<engine::Method>&) {}
const AtomSet& share_atoms(const AtomSet& root_atoms, const engine::PotentialRequest&, bool, bool, AtomSet&) {
  return root_atoms;
}
void gather_slabs_to_root(const GridSpec& grid, engine::Slab slab, const float* data, std::vector<float>& whole) {
  copy_slab(grid, slab, data, whole);
}

#endif

}  // namespace dcsgrid::app
