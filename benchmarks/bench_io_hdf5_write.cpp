// Our HDF5 write paths against the file system (issue 16): a map of about 190 MB written in slabs
// of 16 planes through io::Hdf5MapWriter, and 1,000 frames of a 1HPV-sized batch (70 x 62 x 79
// points at 1 Å, 1.37 MB a frame) through analysis::BatchFile in groups of 32 (their table rows,
// statuses and two flushes a group included), each against two baselines measured in the same
// run: the same bytes through pwrite (the floor: the page cache or the disk), and the same blocks
// through H5Dwrite and HDF5's chunk cache (the path both writers took before whole chunks went to
// the file by direct chunk writes). On a disk folder every write ends with fsync, so the pwrite
// row there is the disk's sequential bandwidth (`dd conv=fsync`); on /dev/shm nothing waits for a
// disk and the rows compare the CPU cost of each path.
// With --map FILE (a real map, e.g. `dcsgrid data/1tii_pdb2pqr_amber.pqr.gz -o 1tii.h5`), a second
// table: that map written by Hdf5MapWriter plain and with shuffle + deflate at levels 1 (what
// `--compress` uses), 4 and 9: MB/s of map data and the compression ratio, on both places.
//   bench_io_hdf5_write [--disk DIR (/tmp)] [--shm DIR (/dev/shm)] [--repeats N (3)] [--map FILE]
// Writes io_hdf5_write.json and, with --map, io_hdf5_compress.json (see report.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/hdf5/maps.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "hdf5_cache_path.hpp"
#include "io_bench_util.hpp"
#include "report.hpp"

namespace dcsgrid::bench {
namespace {

namespace fs = std::filesystem;
namespace h5 = io::hdf5;

constexpr std::int64_t kSlabPlanes = 16;
constexpr std::size_t kFrames = 1000;
constexpr std::size_t kGroup = 32;

// `blocks` pieces of `bytes` each, written one after the other with pwrite.
void write_raw(const fs::path& path, const float* data, std::size_t blocks, std::size_t bytes,
               bool repeat_data, bool sync) {
  fs::remove(path);
  const int descriptor = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (descriptor < 0) throw Error(path.string() + ": cannot create");
  for (std::size_t b = 0; b < blocks; ++b) {
    const char* from = reinterpret_cast<const char*>(data) + (repeat_data ? 0 : b * bytes);
    if (::pwrite(descriptor, from, bytes, off_t(b * bytes)) != ssize_t(bytes))
      throw Error(path.string() + ": short write");
  }
  if (sync) (void)fsync(descriptor);
  ::close(descriptor);
}

// Batch frames through H5Dwrite and a chunk cache into a 4-D dataset allocated at creation,
// flushed every kGroup frames.
void write_frames_through_cache(const fs::path& path, const GridSpec& grid, const float* data,
                                bool sync) {
  fs::remove(path);
  {
    h5::Handle file = h5::create_file(path, path, "create");
    h5::Handle dataset = create_cached_map_dataset(file.get(), {kFrames}, grid, false, true, path);
    for (std::size_t f = 0; f < kFrames; ++f) {
      write_hyperslab(dataset.get(), {f, 0, 0, 0},
                      {1, hsize_t(grid.nz()), hsize_t(grid.ny()), hsize_t(grid.nx())}, data, path);
      if ((f + 1) % kGroup == 0) h5::check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), path, "flush");
    }
    h5::check(dataset.close(), path, "close /potential");
    h5::check(file.close(), path, "close");
  }
  if (sync) fsync_file(path);
}

void write_with_map_writer(const fs::path& path, const GridSpec& grid, const float* data, bool sync,
                           const io::WriteOptions& options = {}) {
  fs::remove(path);
  io::MapMetadata meta;
  meta.units = "kT/e";
  io::Hdf5MapWriter writer(path, grid, meta, options);
  for (std::int64_t z = 0; z < grid.nz(); z += kSlabPlanes)
    writer.write_planes(z, std::min(kSlabPlanes, grid.nz() - z), data + std::size_t(z) * grid.plane_size());
  writer.finish();
  if (sync) fsync_file(path);
}

// The file is created (not timed), then every frame written in groups.
double write_with_batch_file(const fs::path& path, const GridSpec& grid, const float* data,
                             bool sync, int repeats) {
  analysis::BatchLayout layout;
  layout.grid = grid;
  layout.meta.units = "kT/e";
  const std::uint32_t source = layout.frames.source_index("traj.dcd", std::string(64, '0'));
  for (std::size_t f = 0; f < kFrames; ++f) layout.frames.add(source, 1, std::int64_t(f), double(f));
  double best = 1e300;
  for (int r = 0; r <= repeats; ++r) {  // the first run warms up, as best_seconds does
    fs::remove(path);
    analysis::BatchFile::create(path, layout);
    analysis::BatchFile file(path, true);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<analysis::FrameRecord> records(kGroup);
    std::vector<analysis::BatchFile::FrameWrite> group;
    for (std::size_t f = 0; f < kFrames; f += kGroup) {
      group.clear();
      for (std::size_t g = f; g < std::min(kFrames, f + kGroup); ++g) {
        analysis::FrameRecord& r = records[g - f];
        r = file.frames()[g];
        r.status = analysis::FrameStatus::complete;
        r.atom_count = 3368;
        group.push_back({g, data, r, nullptr});
      }
      file.write_frames(group);
    }
    if (sync) fsync_file(path);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::min(best, seconds);
  }
  return best;
}

// A real map written plain and compressed at several deflate levels.
void compress_study(const std::vector<Place>& places, int repeats, const fs::path& map_file) {
  const io::MapFile map = io::read_hdf5(map_file);
  const double mb = double(map.data.size() * sizeof(float)) / 1e6;
  Report report("io_hdf5_compress", {"place", "deflate level", "MB/s of map data", "file MB",
                                     "ratio", "time vs plain"});
  for (const Place& place : places) {
    const fs::path path = place.dir / "dcsgrid_bench_compress.h5";
    double plain_seconds = 0;
    for (int level : {-1, 1, 4, 9}) {
      io::WriteOptions options;
      options.compress = level >= 0;
      options.compression_level = std::max(level, 0);
      const double seconds = best_seconds(repeats, [&] {
        write_with_map_writer(path, map.grid, map.data.data(), place.sync, options);
      });
      if (level < 0) plain_seconds = seconds;
      const double file_mb = double(fs::file_size(path)) / 1e6;
      report.add_row({place.name, level < 0 ? std::string("none") : std::to_string(level),
                      mb / seconds, file_mb, mb / file_mb, seconds / plain_seconds});
    }
    if (io::read_hdf5(path).data != map.data) throw Error(path.string() + ": read back other values");
    fs::remove(path);
    fs::remove(fs::path(path).replace_extension(".xmf"));
  }
  report.set_context("cpu", cpu_description());
  report.set_context("map", map_file.string() + ": " + map.grid.describe());
  report.set_context("repeats", repeats);
  report.finish();
}

void run(const std::vector<Place>& places, int repeats) {
  const GridSpec map_grid{{0, 0, 0}, {0.5, 0.5, 0.5}, {400, 400, 300}};  // 192 MB
  const GridSpec frame_grid{{0, 0, 0}, {1, 1, 1}, {79, 62, 70}};      // 1.37 MB
  const std::vector<float> map = ramp(map_grid.point_count());
  const std::vector<float> frame = ramp(frame_grid.point_count());
  const double map_mb = double(map.size() * sizeof(float)) / 1e6;
  const double batch_mb = double(kFrames * frame.size() * sizeof(float)) / 1e6;

  Report report("io_hdf5_write", {"place", "what", "MB", "pwrite MB/s", "HDF5 chunk cache MB/s",
                                  "ours MB/s", "ours vs cache", "ours vs pwrite"});
  for (const Place& place : places) {
    const fs::path path = place.dir / "dcsgrid_bench_write.h5";
    const fs::path raw = place.dir / "dcsgrid_bench_write.bin";
    const std::size_t slab_bytes = std::size_t(kSlabPlanes) * map_grid.plane_size() * sizeof(float);
    const std::size_t slabs = (map.size() * sizeof(float) + slab_bytes - 1) / slab_bytes;
    double s[3];
    s[0] = best_seconds(repeats, [&] {
      write_raw(raw, map.data(), slabs - 1, slab_bytes, false, place.sync);  // whole slabs
    }) * double(slabs) / double(slabs - 1);
    s[1] = best_seconds(repeats, [&] {
      write_map_through_cache(path, map_grid, map.data(), false, place.sync, kSlabPlanes);
    });
    s[2] = best_seconds(repeats, [&] { write_with_map_writer(path, map_grid, map.data(), place.sync); });
    if (io::read_hdf5(path).data != map) throw Error(path.string() + ": read back other values");
    report.add_row({place.name, "map, slabs of 16 planes", map_mb, map_mb / s[0], map_mb / s[1],
                    map_mb / s[2], s[1] / s[2], s[0] / s[2]});
    fs::remove(place.dir / "dcsgrid_bench_write.xmf");

    const std::size_t frame_bytes = frame.size() * sizeof(float);
    s[0] = best_seconds(repeats, [&] { write_raw(raw, frame.data(), kFrames, frame_bytes, true, place.sync); });
    s[1] = best_seconds(repeats, [&] { write_frames_through_cache(path, frame_grid, frame.data(), place.sync); });
    s[2] = write_with_batch_file(path, frame_grid, frame.data(), place.sync, repeats);
    report.add_row({place.name, "batch frames, groups of 32", batch_mb, batch_mb / s[0],
                    batch_mb / s[1], batch_mb / s[2], s[1] / s[2], s[0] / s[2]});
    fs::remove(path);
    fs::remove(raw);
  }
  report.set_context("cpu", cpu_description());
  report.set_context("map", map_grid.describe() + ", chunks of io::hdf5::map_chunk");
  report.set_context("batch", std::to_string(kFrames) + " frames of " + frame_grid.describe());
  report.set_context("repeats", repeats);
  report.set_context("note", "disk rows end each write with fsync; pwrite on disk = dd conv=fsync");
  report.finish();
}

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) {
  dcsgrid::bench::IoBenchOptions options;
  if (!dcsgrid::bench::parse_io_bench_options(argc, argv, true, options)) return 2;
  try {
    dcsgrid::bench::run(options.places, options.repeats);
    if (!options.map.empty())
      dcsgrid::bench::compress_study(options.places, options.repeats, options.map);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_io_hdf5_write: %s\n", e.what());
    return 1;
  }
  return 0;
}
