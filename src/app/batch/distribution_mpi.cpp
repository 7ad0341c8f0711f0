// The ranks of an MPI job share one batch: rank 0 creates (or checks) the file, every rank opens
// it through MPI-IO and writes the frames it computed, and the frames are handed out one at a time
// from a counter on rank 0 that the ranks advance with MPI one-sided atomics, so a rank that
// finishes early takes the next frame (frames of very different cost stay balanced).
#include "app/batch/distribution.hpp"

#include "dcsgrid/app/mpi_context.hpp"

#ifdef DCSGRID_HAVE_MPI
#include <mpi.h>

#include <cstdint>
#include <mutex>

#include "dcsgrid/io/hdf5/util.hpp"
#include "app/mpi_ranks.hpp"
#endif

namespace dcsgrid::app {

#ifdef DCSGRID_HAVE_MPI

namespace {

// MPI calls are serialized (MPI_THREAD_SERIALIZED): the reader thread's counter updates take the
// lock that the writer thread's MPI-IO writes hold (the HDF5 library lock).
std::unique_lock<std::mutex> serialize_mpi() { return std::unique_lock(io::hdf5::library_mutex()); }

class SharedCounter final : public FrameDispenser {
 public:
  // Collective: every rank constructs it with the same todo.
  explicit SharedCounter(const FrameRuns& todo) : todo_(todo) {
    const MPI_Aint bytes = mpi::rank() == 0 ? sizeof(std::int64_t) : 0;
    MPI_Win_allocate(bytes, sizeof(std::int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &counter_, &window_);
    if (mpi::rank() == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, window_);
      *counter_ = 0;
      MPI_Win_unlock(0, window_);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~SharedCounter() override { MPI_Win_free(&window_); }  // collective too

  std::optional<std::size_t> next() override {
    const std::int64_t taken = update(1, MPI_SUM);
    if (taken < 0 || std::size_t(taken) >= todo_.size()) return std::nullopt;
    return todo_[std::size_t(taken)];
  }
  void stop_all() override { update(std::int64_t(todo_.size()), MPI_REPLACE); }

 private:
  std::int64_t update(std::int64_t value, MPI_Op op) {
    const auto lock = serialize_mpi();
    std::int64_t before = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, window_);
    MPI_Fetch_and_op(&value, &before, MPI_INT64_T, 0, 0, op, window_);
    MPI_Win_unlock(0, window_);
    return before;
  }

  FrameRuns todo_;
  std::int64_t* counter_ = nullptr;
  MPI_Win window_ = MPI_WIN_NULL;
};

class MpiRanks final : public BatchDistribution {
 public:
  bool is_root() const override { return mpi::rank() == 0; }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  bool every_process_writes() const override { return true; }

  void choose_hardware(ComputeSettings& compute) const override { choose_rank_hardware(compute); }

  std::unique_ptr<FrameDispenser> dispense(const FrameRuns& todo) override {
    return std::make_unique<SharedCounter>(todo);
  }

  void sum_on_root(BatchResult& r) override {
    std::uint64_t computed = r.computed;
    double busy[6] = {r.read_busy, r.compute_busy, r.write_busy, r.engine_setup, r.engine_kernels,
                      r.stats_busy};
    double pipeline = r.pipeline_seconds;
    const bool root = is_root();
    MPI_Reduce(root ? MPI_IN_PLACE : &computed, &computed, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(root ? MPI_IN_PLACE : busy, busy, 6, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(root ? MPI_IN_PLACE : &pipeline, &pipeline, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (!root) return;
    r.computed = computed;
    const double ranks = mpi::size();  // busy shares: the mean over the ranks
    r.read_busy = busy[0] / ranks;
    r.compute_busy = busy[1] / ranks;
    r.write_busy = busy[2] / ranks;
    r.stats_busy = busy[5] / ranks;
    r.engine_setup = busy[3];
    r.engine_kernels = busy[4];
    r.pipeline_seconds = pipeline;
    r.device = r.device + " × " + std::to_string(mpi::size()) + " ranks";
  }
};

}  // namespace

BatchDistribution* mpi_ranks() {
  static MpiRanks ranks;
  return mpi::active() && mpi::size() > 1 ? &ranks : nullptr;
}

#else

BatchDistribution* mpi_ranks() { return nullptr; }

#endif

}  // namespace dcsgrid::app
