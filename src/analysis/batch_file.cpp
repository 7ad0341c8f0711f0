// The batch file in HDF5 (layout in batch_file.hpp). Every dataset is created with its storage
// allocated (H5D_ALLOC_TIME_EARLY, no fill writes for the big ones), so writing a frame later
// only writes raw data at fixed places and never changes HDF5 metadata: a process killed between
// or during writes leaves a structurally intact file.
#include "dcsgrid/analysis/batch_file.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <spdlog/fmt/fmt.h>

#include "batch_hdf5.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/atomic_file.hpp"
#include "dcsgrid/io/map_io.hpp"

namespace dcsgrid::analysis {

namespace fs = std::filesystem;
using io::hdf5::check;
using io::hdf5::checked_handle;
using io::hdf5::Handle;
using h5::status_type;

// The file's status values are io's (the HDF5 layout lives there).
static_assert(std::int8_t(FrameStatus::pending) == std::int8_t(h5::FrameState::pending) &&
              std::int8_t(FrameStatus::complete) == std::int8_t(h5::FrameState::complete) &&
              std::int8_t(FrameStatus::failed) == std::int8_t(h5::FrameState::failed));

namespace {

constexpr std::size_t kMessageBytes = 256;  // 255 bytes and a terminating zero
constexpr std::size_t kShaBytes = 64;

constexpr const char* kSource = "frames/source";
constexpr const char* kModel = "frames/model";
constexpr const char* kSha = "frames/input_sha256";
constexpr const char* kAtoms = "frames/atom_count";
constexpr const char* kCharge = "frames/total_charge";
constexpr const char* kFrameIndex = "frames/frame_index";
constexpr const char* kTime = "frames/time_ps";
constexpr const char* kStatus = h5::names::status;
constexpr const char* kMessage = "frames/message";
constexpr const char* kMean = "analysis/mean";
constexpr const char* kStd = "analysis/std";
constexpr const char* kEnsembleFrames = "analysis/ensemble_frames";

// The stored columns of the frame table, one vector per dataset.
struct Columns {
  std::vector<std::string> source, sha, message;
  std::vector<std::int32_t> model;
  std::vector<std::int64_t> atoms, frame_index;
  std::vector<double> charge, time;
  std::vector<std::int8_t> status;

  explicit Columns(const std::vector<FrameRecord>& frames) {
    for (const auto& f : frames) {
      source.push_back(f.source);
      sha.push_back(f.input_sha256);
      message.push_back(f.message.substr(0, kMessageBytes - 1));
      model.push_back(f.model);
      atoms.push_back(std::int64_t(f.atom_count));
      charge.push_back(f.total_charge);
      status.push_back(std::int8_t(f.status));
      frame_index.push_back(f.frame_index);
      time.push_back(f.time_ps);
    }
  }
};

std::size_t longest(const std::vector<std::string>& texts) {
  std::size_t n = 1;
  for (const auto& t : texts) n = std::max(n, t.size() + 1);
  return n;
}

// /potential: a real dataset, or a virtual one over the parts of a merged file.
Handle create_potential(hid_t file, const BatchLayout& layout, const fs::path& path) {
  const std::size_t n = layout.frames.size();
  if (layout.virtual_parts.empty()) return h5::create_map_dataset(file, "potential", {n}, layout.grid, path);
  std::vector<h5::VirtualSource> sources;
  for (const VirtualPart& part : layout.virtual_parts)
    sources.push_back({part.file, "potential", part.first_frame, part.frames});
  return h5::create_virtual_map_dataset(file, "potential", n, layout.grid, sources, path);
}

constexpr const char* kShardIndex = "shard_index";
constexpr const char* kShardCount = "shard_count";
constexpr const char* kShardFirst = "shard_first_frame";
constexpr const char* kBatchFrames = "batch_frames";

void write_shard(hid_t potential, const ShardInfo& shard, const fs::path& path) {
  io::hdf5::write_attribute(potential, kShardIndex, shard.index, path);
  io::hdf5::write_attribute(potential, kShardCount, shard.count, path);
  io::hdf5::write_attribute(potential, kShardFirst, shard.first_frame, path);
  io::hdf5::write_attribute(potential, kBatchFrames, shard.total_frames, path);
}

std::optional<ShardInfo> read_shard(hid_t potential, const fs::path& path) {
  const std::vector<std::string> names = io::hdf5::attribute_names(potential, path);
  if (std::find(names.begin(), names.end(), kShardIndex) == names.end()) return std::nullopt;
  ShardInfo shard;
  io::hdf5::read_attribute(potential, kShardIndex, shard.index, path);
  io::hdf5::read_attribute(potential, kShardCount, shard.count, path);
  io::hdf5::read_attribute(potential, kShardFirst, shard.first_frame, path);
  io::hdf5::read_attribute(potential, kBatchFrames, shard.total_frames, path);
  return shard;
}

}  // namespace

std::string status_name(FrameStatus status) {
  switch (status) {
    case FrameStatus::pending: return "pending";
    case FrameStatus::complete: return "complete";
    case FrameStatus::failed: return "failed";
  }
  return "?";
}

struct BatchFile::Impl {
  fs::path path;
  Handle file;
  Handle potential;
  GridSpec grid;
  io::MapMetadata meta;
  std::vector<FrameRecord> frames;
  int bins = 0;
  bool ensemble = false;
  std::string options_json;
  std::optional<ShardInfo> shard;
  bool every_rank = false;

  h5::Dataset dataset(const char* name) const { return h5::open_dataset(file.get(), name, path); }
  // Opened by every MPI rank, raw data go to MPI-IO as they are written (HDF5 caches no raw data
  // of files open in parallel), and H5Fflush would be a collective call: nothing to do.
  void flush() const {
    if (!every_rank) check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), path, "flush the file");
  }
  // Writes the table row of frame i except its source (fixed at creation) and status.
  void write_row(std::size_t i, const FrameRecord& r) const {
    const std::int32_t model = r.model;
    const std::int64_t atoms = std::int64_t(r.atom_count);
    h5::write_string_element(dataset(kSha), i, r.input_sha256, path);
    h5::write_string_element(dataset(kMessage), i, r.message.substr(0, kMessageBytes - 1), path);
    h5::write_row(dataset(kModel), i, H5T_NATIVE_INT32, &model, path);
    h5::write_row(dataset(kAtoms), i, H5T_NATIVE_INT64, &atoms, path);
    h5::write_row(dataset(kCharge), i, H5T_NATIVE_DOUBLE, &r.total_charge, path);
  }
  void write_status(std::size_t i, FrameStatus s) const {
    const std::int8_t value = std::int8_t(s);
    h5::write_row(dataset(kStatus), i, status_type(path).get(), &value, path);
  }
  void check_index(std::size_t i) const {
    if (i >= frames.size())
      throw Error(fmt::format("{}: frame {} does not exist (the file has {})", path.string(), i,
                              frames.size()));
  }
};

void BatchFile::create(const fs::path& path, const BatchLayout& layout) {
  validate(layout.grid);
  if (layout.frames.empty()) throw Error(path.string() + ": a batch needs at least one frame");
  if (fs::exists(path)) throw Error(path.string() + " exists");
  std::lock_guard lock(io::hdf5::library_mutex());
  io::hdf5::silence_errors();
  io::AtomicFile atomic(path);
  {
    // The 1.8 format, not io::hdf5::create_file's: a 1.10 file left open by kill -9 is marked
    // "open for write" and refused until h5clear, and a batch must resume after one.
    Handle file = checked_handle(
        H5Fcreate(atomic.temp_path().c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
        path, "create the file (as " + atomic.temp_path().filename().string() + ")");
    const hid_t f = file.get();
    const GridSpec& g = layout.grid;
    const std::size_t n = layout.frames.size();

    Handle potential = create_potential(f, layout, path);
    h5::write_map_attributes(potential.get(), g, layout.meta, h5::kBatchAxisOrder, path);
    const std::size_t first_frame = layout.shard ? layout.shard->first_frame : 0;
    h5::attach_coordinates(f, potential.get(), g, n, path, first_frame);
    io::hdf5::write_attribute(potential.get(), "batch_options", layout.options_json, path);
    if (layout.shard) write_shard(potential.get(), *layout.shard, path);

    h5::create_group(f, "frames", path);
    const Columns c(layout.frames);
    h5::create_string_column(f, kSource, c.source, longest(c.source), path);
    h5::create_string_column(f, kSha, c.sha, kShaBytes + 1, path);
    h5::create_string_column(f, kMessage, c.message, kMessageBytes, path);
    h5::create_column(f, kModel, {n}, H5T_STD_I32LE, H5T_NATIVE_INT32, c.model.data(), path);
    h5::create_column(f, kAtoms, {n}, H5T_STD_I64LE, H5T_NATIVE_INT64, c.atoms.data(), path);
    h5::create_column(f, kCharge, {n}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, c.charge.data(), path);
    h5::create_column(f, kFrameIndex, {n}, H5T_STD_I64LE, H5T_NATIVE_INT64, c.frame_index.data(), path);
    h5::create_column(f, kTime, {n}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, c.time.data(), path);
    Handle status = status_type(path);
    h5::create_column(f, kStatus, {n}, status.get(), status.get(), c.status.data(), path);

    if (layout.histogram_bins > 0 || layout.ensemble) h5::create_group(f, "analysis", path);
    if (layout.histogram_bins > 0)
      h5::create_stats_datasets(f, n, std::size_t(layout.histogram_bins), layout.meta.units, path);
    if (layout.ensemble) {
      for (const char* name : {kMean, kStd}) {
        Handle d = h5::create_map_dataset(f, name, {}, g, path);
        h5::write_map_attributes(d.get(), g, layout.meta, h5::kMapAxisOrder, path);
        h5::attach_coordinates(f, d.get(), g, std::nullopt, path);
      }
      const std::int64_t zero = 0;
      h5::create_column(f, kEnsembleFrames, {}, H5T_STD_I64LE, H5T_NATIVE_INT64, &zero, path);
    }
    // Every object before the file: its real close (the last flush, which a full disk fails) is
    // the last handle's, and only the file's close is checked.
    potential.close();
    status.close();
    check(io::hdf5::close_temporary_file(file), path, "finish creating the file");
  }
  atomic.commit();
}

BatchFile::BatchFile(const fs::path& path, bool writable, bool every_rank)
    : impl_(std::make_unique<Impl>()) {
  std::lock_guard lock(io::hdf5::library_mutex());
  io::hdf5::silence_errors();
  Impl& b = *impl_;
  b.path = path;
  b.file = h5::open_file(path, writable, every_rank);
  b.every_rank = every_rank;
  const hid_t f = b.file.get();
  if (!h5::exists(f, "frames", path) || !h5::exists(f, "potential", path))
    throw InputError(path.string(), 0, "not a dcsgrid batch file (no /potential and /frames)");
  b.potential = checked_handle(H5Dopen2(f, "potential", H5P_DEFAULT), H5Dclose, path,
                               "open /potential");
  if (h5::rank(b.potential.get(), path) != 4)
    throw InputError(path.string(), 0, "/potential is not 4-D [frame][nz][ny][nx]");
  h5::read_map_attributes(b.potential.get(), b.grid, b.meta, path);
  io::hdf5::read_attribute(b.potential.get(), "batch_options", b.options_json, path);
  b.shard = read_shard(b.potential.get(), path);
  const std::size_t n = h5::shape(b.potential.get(), path)[0];
  h5::check_map_shape(b.potential.get(), b.grid, n, path);

  const auto source = h5::read_string_column(b.dataset(kSource), n, path);
  const auto sha = h5::read_string_column(b.dataset(kSha), n, path);
  const auto message = h5::read_string_column(b.dataset(kMessage), n, path);
  std::vector<std::int32_t> model(n);
  std::vector<std::int64_t> atoms(n);
  std::vector<double> charge(n);
  std::vector<std::int8_t> status(n);
  h5::read_column(b.dataset(kModel), n, H5T_NATIVE_INT32, model.data(), path);
  h5::read_column(b.dataset(kAtoms), n, H5T_NATIVE_INT64, atoms.data(), path);
  h5::read_column(b.dataset(kCharge), n, H5T_NATIVE_DOUBLE, charge.data(), path);
  h5::read_column(b.dataset(kStatus), n, status_type(path).get(), status.data(), path);
  // Trajectory columns (absent from files of earlier versions: no frame index, no time).
  std::vector<std::int64_t> frame_index(n, -1);
  std::vector<double> time(n, std::numeric_limits<double>::quiet_NaN());
  if (h5::exists(f, kFrameIndex, path))
    h5::read_column(b.dataset(kFrameIndex), n, H5T_NATIVE_INT64, frame_index.data(), path);
  if (h5::exists(f, kTime, path)) h5::read_column(b.dataset(kTime), n, H5T_NATIVE_DOUBLE, time.data(), path);
  b.frames.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    FrameRecord& r = b.frames[i];
    r.source = source[i];
    r.input_sha256 = sha[i];
    r.message = message[i];
    r.model = model[i];
    r.atom_count = std::size_t(std::max<std::int64_t>(atoms[i], 0));
    r.total_charge = charge[i];
    r.status = FrameStatus(status[i]);
    r.frame_index = frame_index[i];
    r.time_ps = time[i];
  }
  if (h5::exists(f, "analysis", path)) {
    if (h5::exists(f, h5::names::histogram, path))
      b.bins = int(h5::shape(b.dataset(h5::names::histogram).get(), path).at(1)) - 2;
    b.ensemble = h5::exists(f, kMean, path);
  }
}

BatchFile::~BatchFile() {
  if (!impl_) return;
  std::lock_guard lock(io::hdf5::library_mutex());
  impl_.reset();
}
BatchFile::BatchFile(BatchFile&&) noexcept = default;
BatchFile& BatchFile::operator=(BatchFile&&) noexcept = default;

const fs::path& BatchFile::path() const { return impl_->path; }
const GridSpec& BatchFile::grid() const { return impl_->grid; }
const io::MapMetadata& BatchFile::meta() const { return impl_->meta; }
const std::vector<FrameRecord>& BatchFile::frames() const { return impl_->frames; }
int BatchFile::histogram_bins() const { return impl_->bins; }
bool BatchFile::has_ensemble() const { return impl_->ensemble; }
const std::string& BatchFile::options_json() const { return impl_->options_json; }
const std::optional<ShardInfo>& BatchFile::shard() const { return impl_->shard; }

std::vector<MapStats> BatchFile::stats() const {
  const Impl& b = *impl_;
  if (b.bins == 0) return {};
  std::lock_guard lock(io::hdf5::library_mutex());
  return h5::read_stats_rows(b.file.get(), b.path);
}

void BatchFile::write_stats(std::size_t index, const MapStats& stats) {
  const Impl& b = *impl_;
  b.check_index(index);
  if (b.bins == 0) throw Error(b.path.string() + ": has no stats datasets");
  std::lock_guard lock(io::hdf5::library_mutex());
  h5::write_stats_row(b.file.get(), index, stats, std::size_t(b.bins), b.path);
}

void BatchFile::write_frame(std::size_t index, const float* data, const FrameRecord& record,
                            const MapStats* stats, const StepHook& hook) {
  const FrameWrite frame{index, data, record, stats};
  write_frames({&frame, 1}, hook);
}

// One flush for the data of every frame of the group, then one for their statuses: a frame still
// turns complete only after its data is flushed, and the group shares the two flushes.
void BatchFile::write_frames(std::span<const FrameWrite> group, const StepHook& hook) {
  Impl& b = *impl_;
  const fs::path& path = b.path;
  for (const FrameWrite& f : group) {
    b.check_index(f.index);
    if (b.bins > 0 && !f.stats)
      throw Error(path.string() + ": frame " + std::to_string(f.index) + " needs its stats");
  }
  auto step = [&](WriteStep s) {
    if (hook)
      for (const FrameWrite& f : group) hook(f.index, s);
  };
  {
    std::lock_guard lock(io::hdf5::library_mutex());
    for (const FrameWrite& f : group) {
      h5::write_map(b.potential.get(), f.index, b.grid, f.data, path);
      if (b.bins > 0) h5::write_stats_row(b.file.get(), f.index, *f.stats, std::size_t(b.bins), path);
      b.write_row(f.index, f.record);
    }
  }
  step(WriteStep::data_written);
  {
    std::lock_guard lock(io::hdf5::library_mutex());
    b.flush();
  }
  step(WriteStep::data_flushed);
  {
    std::lock_guard lock(io::hdf5::library_mutex());
    for (const FrameWrite& f : group) b.write_status(f.index, FrameStatus::complete);
  }
  step(WriteStep::status_written);
  {
    std::lock_guard lock(io::hdf5::library_mutex());
    b.flush();
  }
  for (const FrameWrite& f : group) {
    FrameRecord& kept = b.frames[f.index];
    kept = f.record;
    kept.status = FrameStatus::complete;
  }
  step(WriteStep::status_flushed);
}

void BatchFile::write_failure(std::size_t index, const FrameRecord& record) {
  Impl& b = *impl_;
  b.check_index(index);
  std::lock_guard lock(io::hdf5::library_mutex());
  b.write_row(index, record);
  b.write_status(index, FrameStatus::failed);
  b.flush();
  b.frames[index] = record;
  b.frames[index].status = FrameStatus::failed;
}

void BatchFile::read_frame(std::size_t index, float* out) const {
  const Impl& b = *impl_;
  b.check_index(index);
  std::lock_guard lock(io::hdf5::library_mutex());
  h5::read_map(b.potential.get(), index, b.grid, out, b.path);
}

void BatchFile::write_ensemble(const float* mean, const float* stddev, std::size_t frames) {
  const Impl& b = *impl_;
  if (!b.ensemble)
    throw Error(b.path.string() + ": has no room for ensemble maps (run the batch with them on)");
  std::lock_guard lock(io::hdf5::library_mutex());
  h5::write_map(b.dataset(kMean).get(), std::nullopt, b.grid, mean, b.path);
  h5::write_map(b.dataset(kStd).get(), std::nullopt, b.grid, stddev, b.path);
  b.flush();
  const std::int64_t count = std::int64_t(frames);
  h5::write_scalar(b.dataset(kEnsembleFrames), H5T_NATIVE_INT64, &count, b.path);
  b.flush();
}

std::size_t BatchFile::ensemble_frames() const {
  const Impl& b = *impl_;
  if (!b.ensemble) return 0;
  std::lock_guard lock(io::hdf5::library_mutex());
  std::int64_t count = 0;
  h5::read_column(b.dataset(kEnsembleFrames), 1, H5T_NATIVE_INT64, &count, b.path);
  return std::size_t(std::max<std::int64_t>(count, 0));
}

bool is_batch_file(const fs::path& path) {
  std::lock_guard lock(io::hdf5::library_mutex());
  io::hdf5::silence_errors();
  if (!fs::is_regular_file(path) || H5Fis_hdf5(path.c_str()) <= 0) return false;
  Handle file = h5::open_file(path, false);
  if (!h5::exists(file.get(), "frames", path) || !h5::exists(file.get(), "potential", path))
    return false;
  Handle ds = checked_handle(H5Dopen2(file.get(), "potential", H5P_DEFAULT), H5Dclose, path,
                             "open /potential");
  return h5::rank(ds.get(), path) == 4;
}

// MapReader: a single map is a batch of one complete frame; maps in other formats than HDF5 are
// read whole at once (io::read_map).
struct MapReader::Impl {
  fs::path path;
  Handle file;
  Handle potential;
  GridSpec grid;
  io::MapMetadata meta;
  bool batch = false;
  std::vector<std::size_t> frames;  // frame index of each readable map
  std::size_t frame_count = 1;
  std::vector<float> whole;  // the map of a file in another format
};

MapReader::MapReader(const fs::path& path) : impl_(std::make_unique<Impl>()) {
  Impl& r = *impl_;
  r.path = path;
  r.frames = {0};
  if (io::map_format_from_path(path) != io::MapFormat::hdf5) {
    io::MapFile map = io::read_map(path);
    r.grid = map.grid;
    r.meta = std::move(map.meta);
    r.whole = std::move(map.data);
    return;
  }
  std::lock_guard lock(io::hdf5::library_mutex());
  io::hdf5::silence_errors();
  r.file = h5::open_file(path, false);
  const hid_t f = r.file.get();
  if (!h5::exists(f, "potential", path))
    throw InputError(path.string(), 0, "no dataset /potential: not a map written by dcsgrid");
  r.potential = checked_handle(H5Dopen2(f, "potential", H5P_DEFAULT), H5Dclose, path,
                               "open /potential");
  const int rank = h5::rank(r.potential.get(), path);
  if (rank != 3 && rank != 4)
    throw InputError(path.string(), 0, "/potential is neither a map (3-D) nor a batch (4-D)");
  h5::read_map_attributes(r.potential.get(), r.grid, r.meta, path);
  r.batch = rank == 4;
  if (!r.batch) {
    h5::check_map_shape(r.potential.get(), r.grid, std::nullopt, path);
    return;
  }
  const std::size_t n = h5::shape(r.potential.get(), path)[0];
  h5::check_map_shape(r.potential.get(), r.grid, n, path);
  r.frame_count = n;
  r.frames.clear();
  const std::vector<std::int8_t> status = h5::read_status(f, n, path);
  for (std::size_t i = 0; i < n; ++i)
    if (FrameStatus(status[i]) == FrameStatus::complete) r.frames.push_back(i);
}

MapReader::~MapReader() {
  if (!impl_) return;
  std::lock_guard lock(io::hdf5::library_mutex());
  impl_.reset();
}
MapReader::MapReader(MapReader&&) noexcept = default;
MapReader& MapReader::operator=(MapReader&&) noexcept = default;

bool MapReader::is_batch() const { return impl_->batch; }
const GridSpec& MapReader::grid() const { return impl_->grid; }
const io::MapMetadata& MapReader::meta() const { return impl_->meta; }
std::size_t MapReader::size() const { return impl_->frames.size(); }
std::size_t MapReader::frame_count() const { return impl_->frame_count; }
std::size_t MapReader::frame_index(std::size_t i) const { return impl_->frames.at(i); }

std::string MapReader::label(std::size_t i) const {
  const std::string name = impl_->path.string();
  return impl_->batch ? name + "#" + std::to_string(frame_index(i)) : name;
}

void MapReader::read(std::size_t i, float* out) const {
  const Impl& r = *impl_;
  if (i >= r.frames.size())
    throw Error(fmt::format("{}: map {} does not exist ({} readable)", r.path.string(), i,
                            r.frames.size()));
  if (!r.whole.empty()) {
    std::copy(r.whole.begin(), r.whole.end(), out);
    return;
  }
  std::lock_guard lock(io::hdf5::library_mutex());
  h5::read_map(r.potential.get(), r.batch ? std::optional(r.frames[i]) : std::nullopt, r.grid, out,
               r.path);
}

}  // namespace dcsgrid::analysis
