// The file of batch --average's running sums (average_sums.hpp): one HDF5 file, datasets
// /shift (float32), /sum and /squares (float64) of the grid's points and /added (int8, one a
// frame), attributes with the counts, the NPT scalings, the options and the inputs' checksums.
#include "app/batch/average_sums.hpp"

#include <mutex>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/hdf5/maps.hpp"
#include "dcsgrid/io/hdf5/open.hpp"
#include "dcsgrid/io/hdf5/util.hpp"

namespace dcsgrid::app {

namespace fs = std::filesystem;
namespace hdf5 = io::hdf5;

namespace {

constexpr const char* kKind = "dcsgrid batch --average running sums";

// `values` into a new contiguous dataset.
void store(hid_t file, const char* name, hid_t file_type, hid_t memory_type, std::size_t n,
           const void* values, const fs::path& path) {
  hdf5::create_column(file, name, {hsize_t(n)}, file_type, memory_type, values, path);
}

// A whole dataset of exactly n values (InputError naming the file otherwise).
void load(hid_t file, const char* name, hid_t memory_type, std::size_t n, void* out, const fs::path& path) {
  const hdf5::Dataset d = hdf5::open_dataset(file, name, path);
  hdf5::read_column(d, n, memory_type, out, path);
}

}  // namespace

fs::path average_sums_path(const fs::path& output) { return output.string() + ".sums.h5"; }

void save_average_sums(const fs::path& path, const AverageSums& sums, const GridSpec& grid,
                       const nlohmann::json& fingerprint, const Checksums& inputs) {
  io::AtomicFile out(path);
  {
    std::lock_guard lock(hdf5::library_mutex());
    hdf5::silence_errors();
    hdf5::Handle file = hdf5::create_file(out.temp_path(), path, "create the file of --average's sums");
    const hid_t f = file.get();
    const std::size_t points = sums.shift.size();
    store(f, "shift", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, points, sums.shift.data(), path);
    store(f, "sum", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, points, sums.sum.data(), path);
    store(f, "squares", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, points, sums.squares.data(), path);
    store(f, "added", H5T_STD_I8LE, H5T_NATIVE_INT8, sums.added.size(), sums.added.data(), path);
    hdf5::write_attribute(f, "kind", std::string(kKind), path);
    hdf5::write_attribute(f, "origin", grid.origin, path);
    hdf5::write_attribute(f, "spacing", grid.spacing, path);
    hdf5::write_attribute(f, "dims", grid.dims, path);
    if (!grid.orthogonal()) hdf5::write_attribute(f, "skew", grid.skew, path);  // absent: older files resume
    hdf5::write_attribute(f, "count", sums.count, path);
    hdf5::write_attribute(f, "scale_sum", sums.scale_sum, path);
    if (sums.shear_sum != Vec3{}) hdf5::write_attribute(f, "shear_sum", sums.shear_sum, path);
    hdf5::write_attribute(f, "scaled_frames", sums.scaled_frames, path);
    hdf5::write_attribute(f, "cells_varied", std::int64_t(sums.cells_varied), path);
    if (sums.reference) {
      hdf5::write_attribute(f, "reference_lengths", sums.reference->lengths, path);
      hdf5::write_attribute(f, "reference_angles", sums.reference->angles, path);
    }
    hdf5::write_attribute(f, "batch_options", fingerprint.dump(), path);
    hdf5::write_attribute(f, "input_sha256", nlohmann::json(inputs).dump(), path);
    hdf5::check(hdf5::close_temporary_file(file), path, "finish writing the file of --average's sums");
  }
  out.commit();
}

void load_average_sums(const fs::path& path, AverageSums& sums, const GridSpec& grid,
                       const analysis::FrameTable& frames, const nlohmann::json& fingerprint,
                       const Checksums& inputs) {
  std::lock_guard lock(hdf5::library_mutex());
  hdf5::silence_errors();
  const hdf5::Handle file = hdf5::open_file(path, false);
  const hid_t f = file.get();
  std::string kind, options, sha;
  hdf5::read_attribute(f, "kind", kind, path);
  if (kind != kKind) throw InputError(path.string(), 0, "not a file of --average's sums (kind '" + kind + "')");
  hdf5::read_attribute(f, "batch_options", options, path);
  require_same_options(path, options, fingerprint);
  GridSpec recorded_grid;
  hdf5::read_attribute(f, "origin", recorded_grid.origin, path);
  hdf5::read_attribute(f, "spacing", recorded_grid.spacing, path);
  hdf5::read_attribute(f, "dims", recorded_grid.dims, path);
  if (hdf5::has_attribute(f, "skew", path)) hdf5::read_attribute(f, "skew", recorded_grid.skew, path);
  if (!recorded_grid.same_as(grid))
    throw Error(fmt::format("cannot resume {}: its sums are on grid {}, this run's is {} (the inputs' box "
                            "changed?); give the grid (--origin and --dims) or --overwrite to start again",
                            path.string(), recorded_grid.describe(), grid.describe()));
  const std::size_t points = sums.shift.size();
  load(f, "shift", H5T_NATIVE_FLOAT, points, sums.shift.data(), path);
  load(f, "sum", H5T_NATIVE_DOUBLE, points, sums.sum.data(), path);
  load(f, "squares", H5T_NATIVE_DOUBLE, points, sums.squares.data(), path);
  load(f, "added", H5T_NATIVE_INT8, sums.added.size(), sums.added.data(), path);
  std::int64_t varied = 0;
  hdf5::read_attribute(f, "count", sums.count, path);
  hdf5::read_attribute(f, "scale_sum", sums.scale_sum, path);
  if (hdf5::has_attribute(f, "shear_sum", path)) hdf5::read_attribute(f, "shear_sum", sums.shear_sum, path);
  hdf5::read_attribute(f, "scaled_frames", sums.scaled_frames, path);
  hdf5::read_attribute(f, "cells_varied", varied, path);
  sums.cells_varied = varied != 0;
  if (sums.scaled_frames > 0) {  // scalings need the cell they are from
    Vec3 lengths, angles;
    hdf5::read_attribute(f, "reference_lengths", lengths, path);
    hdf5::read_attribute(f, "reference_angles", angles, path);
    sums.reference = make_cell(lengths, angles);
  }
  hdf5::read_attribute(f, "input_sha256", sha, path);
  Checksums recorded;
  try {
    recorded = nlohmann::json::parse(sha).get<Checksums>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(path.string(), 0, "its input_sha256 attribute is not a JSON object of texts");
  }
  std::size_t added = 0;
  for (std::size_t i = 0; i < sums.added.size(); ++i) {
    if (sums.added[i] != 1) continue;
    ++added;
    const std::string& input = frames.source(i).path;
    const auto now = inputs.find(input);
    if (now == inputs.end() || recorded[input] != now->second)
      throw Error(fmt::format("cannot resume {}: input {} changed since its frame {} was summed (SHA-256 "
                              "differs); use --overwrite to start again",
                              path.string(), input, i));
  }
  if (added != sums.count || sums.scaled_frames > sums.count)
    throw InputError(path.string(), 0,
                     fmt::format("its counts disagree ({} frames marked added, count {}, {} scaled)", added,
                                 sums.count, sums.scaled_frames));
}

}  // namespace dcsgrid::app
