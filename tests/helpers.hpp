// Helpers shared by the tests: float64 references, random inputs, paths, running the CLI.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::test {

// Project folders.
std::filesystem::path source_dir();
std::filesystem::path data_file(const std::string& name);  // data/<name>
// A fresh empty folder under the system temp dir, removed by the caller if it wants.
std::filesystem::path temp_dir(const std::string& tag);
// The names of the files in dir, hidden temporaries included, sorted.
std::vector<std::string> listing(const std::filesystem::path& dir);
// The version of an HDF5 file's superblock, read from its first bytes (the signature, then the
// version; no user block): -1 when the file does not begin with the signature. Versions 2 and 3
// (the 1.8 "latest" and 1.10 formats) carry a checksum.
int hdf5_superblock_version(const std::filesystem::path& path);

// n atoms uniformly inside box, charges uniform in [-1, 1], reproducible from seed.
AtomSet random_atoms(std::size_t n, const Box& box, std::uint64_t seed);

// Float64 direct sum of planes [z_begin, z_end) (all planes when z_end < 0), the reference every
// backend is held to.
std::vector<double> reference_direct(const AtomSet& atoms, const GridSpec& grid,
                                     const PairKernel& kernel, std::int64_t z_begin = 0,
                                     std::int64_t z_end = -1);

// Float64 cutoff sum: Σ q·V(r) over every atom with r < rc, V the cutoff form of
// engine/cutoff_form.hpp (every form, msm_short included), for planes [z_begin, z_end) (all
// planes when z_end < 0).
std::vector<double> reference_cutoff(const AtomSet& atoms, const GridSpec& grid,
                                     const PairKernel& kernel, const engine::CutoffOptions& cutoff,
                                     std::int64_t z_begin = 0, std::int64_t z_end = -1);

// For each grid point, whether some atom lies within `tolerance` Å of distance rc from it: there
// a truncated cutoff sum jumps by q·g(rc), and float32 and float64 distances (or two float32
// codes) may fall on either side.
std::vector<char> points_near_cutoff(const AtomSet& atoms, const GridSpec& grid, double rc,
                                     double tolerance);
// Entries where skip is 0, in order.
template <typename T>
std::vector<T> kept(const std::vector<T>& values, const std::vector<char>& skip) {
  std::vector<T> out;
  for (std::size_t n = 0; n < values.size(); ++n)
    if (!skip[n]) out.push_back(values[n]);
  return out;
}

// ||a − ref|| / ||ref|| over all entries.
double relative_l2(const std::vector<float>& a, const std::vector<double>& ref);
double relative_l2(const std::vector<float>& a, const std::vector<float>& ref);
double relative_l2(const std::vector<double>& a, const std::vector<double>& ref);

// The message of the dcsgrid::Error that call throws; empty when it throws none.
std::string error_message(const std::function<void()>& call);

// Runs a shell command, returns its exit status and captures stdout+stderr.
struct CommandResult {
  int status = -1;
  std::string output;
};
CommandResult run_command(const std::string& command);
// The dcsgrid binary built alongside the tests.
std::string dcsgrid_binary();
// The first of /usr/bin/python3 (Debian's packages) and python3 on PATH that imports every module
// of `modules` (comma-separated, e.g. "h5py, numpy"), or "" when neither does.
std::string python_with(const std::string& modules);

// True when a CUDA device is usable (false in CPU-only builds).
bool have_gpu();

}  // namespace dcsgrid::test

// In a GPU test: skips with a clear message when no device is present.
#define DCSGRID_REQUIRE_GPU()                                                    \
  do {                                                                           \
    if (!::dcsgrid::test::have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU test skipped"; \
  } while (0)
