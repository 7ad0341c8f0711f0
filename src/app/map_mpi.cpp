// The main job's grid over MPI ranks (mpi_ranks.hpp). Contiguous blocks of planes, not slabs dealt
// round-robin: a rank's cutoff atoms are its planes' atoms plus one halo of the cutoff radius on
// each side, where round-robin slabs would each need their own (docs/scaling.md).
#include <algorithm>
#include <climits>

#include "mpi_ranks.hpp"

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

#include "dcsgrid/engine/binning.hpp"
#include "dcsgrid/engine/cuda_backend.hpp"
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
  // A backend's compute() builds msm's long-range grids again for every slab (one process builds
  // them once a run): msm's slabs go up to the engine's default slab size.
  const std::int64_t slab_bytes = request.method == engine::Method::msm ? std::int64_t(1) << 30 : std::int64_t(64) << 20;
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

// Squared distance from v to [lo, hi]: the CPU cutoff engine's test of an atom near the grid box.
double outside2(double v, double lo, double hi) {
  const double d = v < lo ? lo - v : (v > hi ? v - hi : 0.0);
  return d * d;
}

// The atoms that set the CPU cutoff engine's columns (cpu_cutoff.cpp, make_columns): among the
// atoms within rc of the grid box, those of least and greatest y and z. With them, a subset of
// the atoms is laid out in the same columns as the whole set, so each row sums its atoms in the
// same order. Atom 0 too, so that no rank's set is empty.
std::vector<std::size_t> column_anchors(const AtomSet& atoms, const GridSpec& grid, double rc) {
  const auto far = grid.far_corner();
  std::array<std::size_t, 4> best{0, 0, 0, 0};
  bool any = false;
  for (std::size_t a = 0; a < atoms.size(); ++a) {
    if (!(outside2(atoms.x[a], grid.origin[0], far[0]) + outside2(atoms.y[a], grid.origin[1], far[1]) +
              outside2(atoms.z[a], grid.origin[2], far[2]) < rc * rc))
      continue;
    if (!any) best.fill(a);
    any = true;
    if (atoms.y[a] < atoms.y[best[0]]) best[0] = a;
    if (atoms.y[a] > atoms.y[best[1]]) best[1] = a;
    if (atoms.z[a] < atoms.z[best[2]]) best[2] = a;
    if (atoms.z[a] > atoms.z[best[3]]) best[3] = a;
  }
  std::vector<std::size_t> anchors(best.begin(), best.end());
  anchors.push_back(0);
  std::ranges::sort(anchors);
  anchors.erase(std::unique(anchors.begin(), anchors.end()), anchors.end());
  return anchors;
}

// The z range (Å) of the atoms a cutoff computation of these slabs can use: each slab's planes
// widened by the radius and, on a GPU, by the z extent of the GPU engine's bins for it
// (binning.hpp: the bricks overhang the slab and the bins the bricks), with a margin for rounding.
// Empty (lo > hi) without slabs.
std::array<double, 2> reach_in_z(const engine::PotentialRequest& request,
                                 const std::vector<engine::Slab>& slabs, bool gpu_bins) {
  const GridSpec& grid = request.grid;
  const double rc = request.cutoff.radius;
  std::array<double, 2> range{INFINITY, -INFINITY};
  for (const engine::Slab& slab : slabs) {
    range[0] = std::min(range[0], grid.position(0, 0, slab.z_begin)[2] - rc);
    range[1] = std::max(range[1], grid.position(0, 0, slab.z_end - 1)[2] + rc);
    if (!gpu_bins) continue;
    const engine::BinGeometry bins = engine::make_bin_geometry(grid, slab, rc);
    const engine::BinAxis& z = bins.axis[2];
    const double bins_lo = double(bins.frame_origin[2]) + z.lower();
    range[0] = std::min(range[0], bins_lo);
    range[1] = std::max(range[1], bins_lo + z.bins * z.edge);
  }
  const double margin = 1e-3 + 1e-6 * std::max(std::abs(range[0]), std::abs(range[1]));
  return {range[0] - margin, range[1] + margin};
}

// Rank 0: the atoms `rank` needs for a cutoff run of `request`, in their order in `atoms`.
AtomSet cutoff_atoms_of(const AtomSet& atoms, const engine::PotentialRequest& request, int rank,
                        bool gpu_bins, const std::vector<std::size_t>& anchors) {
  const auto [lo, hi] = reach_in_z(request, rank_slabs(request, rank, mpi::size()), gpu_bins);
  AtomSet out;
  auto anchor = anchors.begin();
  for (std::size_t a = 0; a < atoms.size(); ++a) {
    const bool is_anchor = anchor != anchors.end() && *anchor == a;
    if (is_anchor) ++anchor;
    if (is_anchor || (atoms.z[a] >= lo && atoms.z[a] <= hi)) {
      out.x.push_back(atoms.x[a]);
      out.y.push_back(atoms.y[a]);
      out.z.push_back(atoms.z[a]);
      out.q.push_back(atoms.q[a]);
    }
  }
  return out;
}

// Rank 0's `source` into `into` on every other rank (MPI_Bcast only reads the root's buffers).
void broadcast_atoms(const AtomSet& source, AtomSet& into) {
  const bool root = mpi::rank() == 0;
  unsigned long long n = source.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  const std::array<const std::vector<float>*, 4> from{&source.x, &source.y, &source.z, &source.q};
  const std::array<std::vector<float>*, 4> to{&into.x, &into.y, &into.z, &into.q};
  for (std::size_t i = 0; i < 4; ++i) {
    if (!root) to[i]->resize(n);
    float* buffer = root ? const_cast<float*>(from[i]->data()) : to[i]->data();
    MPI_Bcast(buffer, message_count(n), MPI_FLOAT, 0, MPI_COMM_WORLD);
  }
}

void send_atoms(const AtomSet& atoms, int rank) {
  const unsigned long long n = atoms.size();
  MPI_Send(&n, 1, MPI_UNSIGNED_LONG_LONG, rank, 0, MPI_COMM_WORLD);
  for (const std::vector<float>* v : {&atoms.x, &atoms.y, &atoms.z, &atoms.q})
    MPI_Send(v->data(), message_count(n), MPI_FLOAT, rank, 0, MPI_COMM_WORLD);
}

void receive_atoms(AtomSet& atoms) {
  unsigned long long n = 0;
  MPI_Recv(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (std::vector<float>* v : {&atoms.x, &atoms.y, &atoms.z, &atoms.q}) {
    v->resize(n);
    MPI_Recv(v->data(), message_count(n), MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
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
  const std::vector<std::size_t> anchors = column_anchors(root_atoms, request.grid, request.cutoff.radius);
  for (int rank = 1; rank < mpi::size(); ++rank) {
    const AtomSet atoms = cutoff_atoms_of(root_atoms, request, rank, ranks_on_gpu[std::size_t(rank)] != 0, anchors);
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
void share_methods(std::vector<engine::Method>&) {}
const AtomSet& share_atoms(const AtomSet& root_atoms, const engine::PotentialRequest&, bool, bool, AtomSet&) {
  return root_atoms;
}
void gather_slabs_to_root(const GridSpec& grid, engine::Slab slab, const float* data, std::vector<float>& whole) {
  copy_slab(grid, slab, data, whole);
}

#endif

}  // namespace dcsgrid::app
