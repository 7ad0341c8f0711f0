// The cost of HDF5's Fletcher32 checksum filter on our HDF5 writes and reads (issue 21): a map of
// about 190 MB written in slabs of planes through the chunk cache (the path of every filtered
// dataset; unfiltered ones now write whole chunks directly: bench_io_hdf5_write), read
// back whole, and batch frames written one at a time into an early-allocated 4-D dataset with a
// flush after each (as analysis::BatchFile does), with and without the filter, on a disk folder
// (writes end with fsync) and on /dev/shm. The baseline is the same write without the filter,
// measured in the same run; the slowdown column is the filter's cost.
//   bench_io_hdf5_checksum [--disk DIR (/tmp)] [--shm DIR (/dev/shm)] [--repeats N (3)]
// Writes io_hdf5_checksum.json (see report.hpp).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/hdf5/maps.hpp"
#include "hdf5_cache_path.hpp"
#include "io_bench_util.hpp"
#include "report.hpp"

namespace dcsgrid::bench {
namespace {

namespace fs = std::filesystem;
namespace h5 = io::hdf5;

void read_map(const fs::path& path, std::vector<float>& out) {
  h5::Handle file = h5::open_file(path, false);
  h5::Handle dataset = h5::open_dataset(file.get(), "potential", path);
  h5::check(H5Dread(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), path,
            "read");
}

// A batch: the file created with its frames allocated (not timed), then each frame written and
// flushed (timed, with a final fsync when on disk).
double write_batch(const fs::path& path, const GridSpec& grid, std::size_t frames,
                   const std::vector<float>& values, bool checksum, bool sync, int repeats) {
  fs::remove(path);
  {
    h5::Handle file = h5::create_file(path, path, "create");
    create_cached_map_dataset(file.get(), {frames}, grid, checksum, true, path);
    h5::check(file.close(), path, "close");
  }
  h5::Handle file = h5::open_file(path, true);
  h5::Handle dataset = h5::open_dataset(file.get(), "potential", path);
  return best_seconds(repeats, [&] {
    for (std::size_t f = 0; f < frames; ++f) {
      write_hyperslab(dataset.get(), {f, 0, 0, 0}, {1, hsize_t(grid.nz()), hsize_t(grid.ny()), hsize_t(grid.nx())},
                      values.data(), path);
      h5::check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), path, "flush");
    }
    if (sync) fsync_file(path);
  });
}

void run(const std::vector<Place>& places, int repeats) {
  std::lock_guard lock(h5::library_mutex());
  const GridSpec map_grid{{0, 0, 0}, {0.5, 0.5, 0.5}, {400, 400, 300}};  // 192 MB
  const GridSpec frame_grid{{0, 0, 0}, {0.5, 0.5, 0.5}, {161, 161, 161}};  // 16.7 MB a frame
  constexpr std::size_t kFrames = 12;
  const std::vector<float> map_values = ramp(map_grid.point_count());
  const std::vector<float> frame = ramp(frame_grid.point_count());
  std::vector<float> back(map_values.size());
  const double map_mb = double(map_values.size() * sizeof(float)) / 1e6;
  const double batch_mb = double(kFrames * frame.size() * sizeof(float)) / 1e6;

  Report report("io_hdf5_checksum", {"place", "operation", "MB", "plain MB/s", "fletcher32 MB/s",
                                     "slowdown %"});
  for (const Place& place : places) {
    const fs::path map_path = place.dir / "dcsgrid_bench_checksum_map.h5";
    const fs::path batch_path = place.dir / "dcsgrid_bench_checksum_batch.h5";
    double write_s[2], read_s[2], batch_s[2];
    for (int checksum = 0; checksum < 2; ++checksum) {
      write_s[checksum] = best_seconds(repeats, [&] {
        write_map_through_cache(map_path, map_grid, map_values.data(), checksum, place.sync, 8);
      });
      read_s[checksum] = best_seconds(repeats, [&] { read_map(map_path, back); });
      if (back != map_values) throw Error(map_path.string() + ": read back other values");
      batch_s[checksum] = write_batch(batch_path, frame_grid, kFrames, frame, checksum, place.sync, repeats);
    }
    auto row = [&](const char* operation, double mb, const double* s) {
      report.add_row({place.name, operation, mb, mb / s[0], mb / s[1], 100.0 * (s[1] / s[0] - 1.0)});
    };
    row("map write", map_mb, write_s);
    row("map read", map_mb, read_s);
    row("batch frames write", batch_mb, batch_s);
    fs::remove(map_path);
    fs::remove(batch_path);
  }
  report.set_context("cpu", cpu_description());
  report.set_context("map", map_grid.describe() + ", chunks of io::hdf5::map_chunk, slabs of 8 planes");
  report.set_context("batch", std::to_string(kFrames) + " frames of " + frame_grid.describe() +
                                  ", one flush a frame");
  report.set_context("repeats", repeats);
  report.finish();
}

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) {
  dcsgrid::bench::IoBenchOptions options;
  if (!dcsgrid::bench::parse_io_bench_options(argc, argv, false, options)) return 2;
  try {
    dcsgrid::bench::run(options.places, options.repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_io_hdf5_checksum: %s\n", e.what());
    return 1;
  }
  return 0;
}
