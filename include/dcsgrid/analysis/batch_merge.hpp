// merge_batch_parts: the parts of a sharded batch (dcsgrid batch --shard I/N, e.g. the tasks of
// a Slurm job array) joined into one batch file, as if one run had made it.
//
// The parts must belong together: every shard 0..N-1 of one N, once each, made with the same
// options (inputs, grid, physics, method, stats) and so the same grid and frame count. The merged
// file's frame table and stats are the parts' rows in frame order; its /potential is either an
// HDF5 virtual dataset over the parts' /potential (no copy: the parts must stay beside it, and
// readers such as h5py see an ordinary dataset) or, with copy, a real dataset holding the data.
#pragma once
#include <cstddef>
#include <filesystem>
#include <vector>

namespace dcsgrid::analysis {

struct MergeOptions {
  std::vector<std::filesystem::path> parts;
  std::filesystem::path output;
  bool copy = false;       // copy the maps instead of referring to the parts
  bool overwrite = false;  // replace an existing output
};

struct MergeResult {
  std::size_t parts = 0, frames = 0;
  std::size_t complete = 0, failed = 0, pending = 0;
};

// Writes the merged file (under a temporary name, renamed when complete). Throws Error naming the
// file and the problem when the parts do not belong together, and InputError for unreadable ones.
MergeResult merge_batch_parts(const MergeOptions& options);

}  // namespace dcsgrid::analysis
