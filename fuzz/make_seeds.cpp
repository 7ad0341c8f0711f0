// Seed maps for the map and batch targets, written by the program's own writers into the folder
// given: small grids (5 × 4 × 3) in every map format, and a batch file of three frames (two
// complete, one failed) with ensemble maps. tools/fuzz.sh runs it before fuzzing.
#include <cmath>
#include <cstdio>
#include <vector>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/io/maps/io.hpp"

namespace {

namespace fs = std::filesystem;
using namespace dcsgrid;

std::vector<float> smooth_map(const GridSpec& grid, double phase) {
  std::vector<float> values(grid.point_count());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = float(std::sin(0.7 * double(i) + phase));
  return values;
}

void write_maps(const fs::path& folder, const GridSpec& grid, const io::MapMetadata& meta) {
  const std::vector<float> values = smooth_map(grid, 0);
  io::write_dx(folder / "map.dx", grid, values.data(), meta);
  io::write_cube(folder / "map.cube", grid, values.data(), meta);
  (void)io::write_ccp4(folder / "map.ccp4", grid, values.data(), meta);
  GridSpec shifted = grid;
  shifted.origin = {0.3, -0.7, 0.1};  // off the lattice: the MRC-2014 ORIGIN words
  (void)io::write_ccp4(folder / "shifted.ccp4", shifted, values.data(), meta);
  io::write_hdf5(folder / "map.h5", grid, values.data(), meta);
  io::WriteOptions compressed;
  compressed.compress = true;
  io::write_hdf5(folder / "compressed.h5", grid, values.data(), meta, compressed);
  io::Hdf5MapWriter two(folder / "two_maps.h5", grid, meta);
  io::MapMetadata cutoff = meta;
  cutoff.method = "cutoff";
  cutoff.parameters["cutoff"] = "12";
  const std::size_t second = two.add_stream("potential_cutoff", cutoff);
  two.write_planes(0, grid.nz(), values.data());
  two.write_planes(second, 0, grid.nz(), values.data());
  two.finish();
}

void write_batch(const fs::path& path, const GridSpec& grid, const io::MapMetadata& meta) {
  analysis::BatchLayout layout{grid, meta, {}, 0, true, "{\"fuzz\":true}"};
  for (int i = 0; i < 3; ++i) {
    analysis::FrameRecord record;
    record.source = "frames.dcd";
    record.frame_index = i;
    record.time_ps = 2.0 * i;
    record.atom_count = 12;
    layout.frames.push_back(record);
  }
  analysis::BatchFile::create(path, layout);
  analysis::BatchFile batch(path, true);
  for (std::size_t i = 0; i < 2; ++i) {
    analysis::FrameRecord record = layout.frames[i];
    record.status = analysis::FrameStatus::complete;
    const std::vector<float> values = smooth_map(grid, double(i));
    batch.write_frame(i, values.data(), record, nullptr);
  }
  analysis::FrameRecord failed = layout.frames[2];
  failed.status = analysis::FrameStatus::failed;
  failed.message = "frames.dcd: frame 2 is truncated";
  batch.write_failure(2, failed);
  const std::vector<float> mean = smooth_map(grid, 0.5), spread(grid.point_count(), 0.25f);
  batch.write_ensemble(mean.data(), spread.data(), 2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return 2;
  }
  const fs::path folder = argv[1];
  fs::create_directories(folder);
  GridSpec grid;
  grid.origin = {-2.0, 1.0, 0.5};
  grid.spacing = {0.5, 0.5, 0.5};
  grid.dims = {5, 4, 3};
  io::MapMetadata meta;
  meta.method = "direct";
  meta.atom_count = 12;
  meta.input_file = "seed.pqr";
  meta.program_version = "fuzz";
  write_maps(folder, grid, meta);
  write_batch(folder / "batch.h5", grid, meta);
  return 0;
}
