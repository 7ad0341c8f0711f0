// How one batch run is shared between processes (private to src/app): one process (the default),
// or the ranks of an MPI job (batch_mpi.cpp), which all write the one batch file. run_batch is the
// same code for both; only these few steps differ.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "dcsgrid/app/batch.hpp"

namespace dcsgrid::app {

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
  // The frames `todo` (frame numbers, the same list in every process) shared out.
  virtual std::unique_ptr<FrameDispenser> dispense(const std::vector<std::size_t>& todo) = 0;
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
