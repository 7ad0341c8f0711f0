// How one batch run is shared between processes (private to src/app): one process (the default),
// or the ranks of an MPI job (distribution_mpi.cpp), which all write the one batch file. run_batch is the
// same code for both; only these few steps differ.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "dcsgrid/app/batch.hpp"

namespace dcsgrid::app {

// The frames to compute, as runs of consecutive frame numbers: a batch or a resume leaves few
// runs, so a list of 10^6 frames takes bytes, not one number a frame.
class FrameRuns {
 public:
  void add(std::size_t frame);  // frames in rising order
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t operator[](std::size_t k) const;  // the k-th frame, k < size()

 private:
  struct Run {
    std::size_t first, end, before;  // frames [first, end); `before` frames in the runs before it
  };
  std::vector<Run> runs_;
  std::size_t size_ = 0;
};

// Hands out the frames to compute, each to one taker, in rising order for each taker.
class FrameDispenser {
 public:
  virtual ~FrameDispenser() = default;
  virtual std::optional<std::size_t> next() = 0;
  // No frame is handed out any more, to any process (fail-fast).
  virtual void stop_all() = 0;
};

class BatchDistribution {
 public:
  virtual ~BatchDistribution() = default;
  // The process that creates or checks the file, writes the ensemble maps and reports.
  virtual bool is_root() const = 0;
  // Every process waits here for all of them.
  virtual void barrier() = 0;
  // True when every process opens the batch file to write its own frames (MPI-IO).
  virtual bool every_process_writes() const = 0;
  // This process's share of the hardware (threads, GPU) where the options leave it open.
  virtual void choose_hardware(ComputeSettings& compute) const = 0;
  // The frames `todo` (the same list in every process) shared out.
  virtual std::unique_ptr<FrameDispenser> dispense(const FrameRuns& todo) = 0;
  // Adds the counts and busy times of every process into the root's result.
  virtual void sum_on_root(BatchResult& result) = 0;
};

// This process alone (the serial path).
BatchDistribution& single_process();
// Every rank of the MPI job, when this process was started by mpirun with more than one rank and
// dcsgrid was built with MPI; nullptr otherwise.
BatchDistribution* mpi_ranks();

// run_batch shared out by `distribution`.
BatchResult run_batch(const BatchOptions& options, BatchDistribution& distribution);

}  // namespace dcsgrid::app
