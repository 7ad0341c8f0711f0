// The batch file in HDF5 (layout in batch_file.hpp). Every dataset is created with its storage
// allocated (H5D_ALLOC_TIME_EARLY, no fill writes for the big ones), so writing a frame later
// only writes raw data at fixed places and never changes HDF5 metadata: a process killed between
// or during writes leaves a structurally intact file.
#include "dcsgrid/analysis/batch_file.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <tuple>

#include <spdlog/fmt/fmt.h>

#include "batch_hdf5.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"

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

constexpr std::size_t kMessageBytes = FrameTable::kMessageBytes + 1;  // and a terminating zero
constexpr std::size_t kShaBytes = 64;

constexpr const char* kSource = "frames/source";
constexpr const char* kModel = "frames/model";
constexpr const char* kSha = "frames/input_sha256";
constexpr const char* kAtoms = "frames/atom_count";
constexpr const char* kCharge = "frames/total_charge";
constexpr const char* kFrameIndex = "frames/frame_index";
constexpr const char* kTime = "frames/time_ps";
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kEnergy = "frames/energy_kj_per_mol";
constexpr const char* kSolvation = "frames/solvation_kj_per_mol";
constexpr const char* kCell = "frames/cell";  // [frames][6]: a, b, c, alpha, beta, gamma
constexpr std::size_t kCellValues = std::tuple_size_v<CellParameters>;
constexpr const char* kStatus = h5::names::status;
constexpr const char* kMessage = "frames/message";
constexpr const char* kMean = "analysis/mean";
constexpr const char* kStd = "analysis/std";
constexpr const char* kEnsembleFrames = "analysis/ensemble_frames";

// Rows of the frame table go to and from the file this many at a time: a few hundred kB of
// buffers, whatever the frames' count (the table in memory is compact; the file's rows are not).
constexpr std::size_t kBlockRows = 1024;

// The /frames datasets of an open file. frame_index, time and the energies are absent from files
// of earlier versions (closed handles then).
struct FrameDatasets {
  h5::Dataset source, sha, message, model, atoms, charge, frame_index, time, energy, solvation, cell, status;
};

FrameDatasets open_frame_datasets(hid_t f, const fs::path& path) {
  auto open = [&](const char* name) { return h5::open_dataset(f, name, path); };
  auto open_if_there = [&](const char* name) { return h5::exists(f, name, path) ? open(name) : h5::Dataset{}; };
  return {open(kSource), open(kSha), open(kMessage), open(kModel), open(kAtoms), open(kCharge),
          open_if_there(kFrameIndex), open_if_there(kTime), open_if_there(kEnergy),
          open_if_there(kSolvation), open_if_there(kCell), open(kStatus)};
}

// The type of a fixed-length string column; InputError for another kind of column.
Handle string_type(const h5::Dataset& column, const fs::path& path) {
  Handle type = checked_handle(H5Dget_type(column.get()), H5Tclose, path, "get a string type");
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0)
    throw InputError(path.string(), 0, "a /frames column is not fixed-length strings");
  return type;
}

// A block of rows of a fixed-length string column of type `type`, in the file's layout.
struct StringBlock {
  Handle type;
  std::size_t width;
  std::vector<char> bytes;
  StringBlock(Handle string_type, std::size_t rows)
      : type(std::move(string_type)), width(H5Tget_size(type.get())), bytes(width * rows) {}
  void put(std::size_t row, const std::string& text) {
    char* at = bytes.data() + row * width;
    std::fill_n(at, width, '\0');
    std::copy_n(text.data(), std::min(text.size(), width), at);
  }
  std::string_view get(std::size_t row) const {
    const char* at = bytes.data() + row * width;
    return {at, std::size_t(std::find(at, at + width, '\0') - at)};
  }
};

// A block of rows of every /frames column in the file's layout, moved to or from the file at once.
struct RowBlock {
  StringBlock source, sha, message;
  std::vector<std::int32_t> model;
  std::vector<std::int64_t> atoms, frame_index;
  std::vector<double> charge, time, energy, solvation, cell;  // cell: kCellValues a row
  std::vector<std::int8_t> status;
  Handle status_type;

  RowBlock(Handle source_type, Handle sha_type, Handle message_type, std::size_t rows, const fs::path& path)
      : source(std::move(source_type), rows), sha(std::move(sha_type), rows),
        message(std::move(message_type), rows), model(rows), atoms(rows), frame_index(rows, -1),
        charge(rows), time(rows, kNaN), energy(rows, kNaN), solvation(rows, kNaN),
        cell(rows * kCellValues, kNaN), status(rows),
        status_type(h5::status_type(path)) {}

  // Rows [first, first + rows) of every column present (a file of an earlier version has no
  // frame_index, time or energies: those keep -1 and NaN when reading).
  void transfer(const FrameDatasets& d, std::size_t first, std::size_t rows, bool to_file,
                const fs::path& path) {
    auto move = [&](const h5::Dataset& column, hid_t type, void* data) {
      if (column.get() < 0) return;
      if (to_file) h5::write_rows(column, first, rows, type, data, path);
      else h5::read_rows(column, first, rows, type, data, path);
    };
    move(d.source, source.type.get(), source.bytes.data());
    move(d.sha, sha.type.get(), sha.bytes.data());
    move(d.message, message.type.get(), message.bytes.data());
    move(d.model, H5T_NATIVE_INT32, model.data());
    move(d.atoms, H5T_NATIVE_INT64, atoms.data());
    move(d.charge, H5T_NATIVE_DOUBLE, charge.data());
    move(d.frame_index, H5T_NATIVE_INT64, frame_index.data());
    move(d.time, H5T_NATIVE_DOUBLE, time.data());
    move(d.energy, H5T_NATIVE_DOUBLE, energy.data());
    move(d.solvation, H5T_NATIVE_DOUBLE, solvation.data());
    move(d.cell, H5T_NATIVE_DOUBLE, cell.data());
    move(d.status, status_type.get(), status.data());
  }
};

// Creates the /frames datasets and writes the table into them, a block of rows at a time.
void create_frame_table(hid_t f, const FrameTable& table, const fs::path& path) {
  const std::size_t n = table.size();
  std::size_t source_width = 1;
  for (const FrameSource& s : table.sources()) source_width = std::max(source_width, s.path.size() + 1);
  auto strings = [&](const char* name, std::size_t width) {
    Handle type = h5::fixed_string_type(width, path);
    return h5::create_column(f, name, {n}, type.get(), type.get(), nullptr, path);
  };
  auto numbers = [&](const char* name, hid_t file_type, hsize_t per_row = 1) {
    const std::vector<hsize_t> dims = per_row == 1 ? std::vector<hsize_t>{n} : std::vector<hsize_t>{n, per_row};
    return h5::create_column(f, name, dims, file_type, file_type, nullptr, path);
  };
  h5::create_group(f, "frames", path);
  const std::size_t block = std::min(n, kBlockRows);
  RowBlock b(h5::fixed_string_type(source_width, path), h5::fixed_string_type(kShaBytes + 1, path),
             h5::fixed_string_type(kMessageBytes, path), block, path);
  const FrameDatasets d{strings(kSource, source_width), strings(kSha, kShaBytes + 1),
                        strings(kMessage, kMessageBytes),  numbers(kModel, H5T_STD_I32LE),
                        numbers(kAtoms, H5T_STD_I64LE),    numbers(kCharge, H5T_IEEE_F64LE),
                        numbers(kFrameIndex, H5T_STD_I64LE), numbers(kTime, H5T_IEEE_F64LE),
                        numbers(kEnergy, H5T_IEEE_F64LE),  numbers(kSolvation, H5T_IEEE_F64LE),
                        numbers(kCell, H5T_IEEE_F64LE, kCellValues), numbers(kStatus, b.status_type.get())};
  for (std::size_t first = 0; first < n; first += block) {
    const std::size_t rows = std::min(block, n - first);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t i = first + r;
      b.source.put(r, table.source(i).path);
      b.sha.put(r, table.source(i).sha256);
      b.message.put(r, table.message(i));
      b.model[r] = table.model(i);
      b.atoms[r] = std::int64_t(table.atom_count(i));
      b.charge[r] = table.total_charge(i);
      b.frame_index[r] = table.frame_index(i);
      b.time[r] = table.time_ps(i);
      b.energy[r] = table.energy_kj_per_mol(i);
      b.solvation[r] = table.solvation_kj_per_mol(i);
      const CellParameters cell = table.cell(i).value_or(CellParameters{kNaN, kNaN, kNaN, kNaN, kNaN, kNaN});
      std::copy(cell.begin(), cell.end(), b.cell.begin() + std::ptrdiff_t(r * kCellValues));
      b.status[r] = std::int8_t(table.status(i));
    }
    b.transfer(d, first, rows, true, path);
  }
}

// The table of n frames, read a block of rows at a time.
FrameTable read_frame_table(const FrameDatasets& d, std::size_t n, const fs::path& path) {
  for (const h5::Dataset* column : {&d.source, &d.sha, &d.message, &d.model, &d.atoms, &d.charge,
                                    &d.frame_index, &d.time, &d.energy, &d.solvation, &d.status})
    if (column->get() >= 0) h5::check_column(*column, n, path);
  if (d.cell.get() >= 0) h5::check_column(d.cell, n * kCellValues, path);
  const std::size_t block = std::min(n, kBlockRows);
  RowBlock b(string_type(d.source, path), string_type(d.sha, path), string_type(d.message, path),
             block, path);
  FrameTable table;
  table.reserve(n);
  for (std::size_t first = 0; first < n; first += block) {
    const std::size_t rows = std::min(block, n - first);
    b.transfer(d, first, rows, false, path);
    for (std::size_t r = 0; r < rows; ++r) {
      table.add(table.source_index(b.source.get(r), b.sha.get(r)), b.model[r], b.frame_index[r],
                b.time[r]);
      table.set_outcome(first + r, FrameStatus(b.status[r]),
                        std::size_t(std::max<std::int64_t>(b.atoms[r], 0)), b.charge[r],
                        std::string(b.message.get(r)));
      table.set_energies(first + r, b.energy[r], b.solvation[r]);
      CellParameters cell;
      std::copy_n(b.cell.begin() + std::ptrdiff_t(r * kCellValues), kCellValues, cell.begin());
      table.set_cell(first + r, std::isnan(cell[0]) ? std::nullopt : std::optional(cell));
    }
  }
  table.shrink_to_fit();
  return table;
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

struct BatchFile::Impl {
  fs::path path;
  std::optional<io::hdf5::WritersLock> writers_lock;  // every MPI rank writing: MPI-IO locks nothing
  Handle file;
  Handle potential;
  GridSpec grid;
  io::MapMetadata meta;
  FrameTable frames;
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
  // Each write opens its dataset and closes it after. (Kept open, a stopped MPI job's file read
  // fewer complete frames right after it stopped than its resume found a moment later:
  // CliMpi.StoppedJobResumedByAnotherJobEqualsTheSerialRun failed 1 run in 4 under load.)
  // Writes the table rows `rows` (ascending; records[k] is row k's outcome) except what creation
  // fixed (source, model, frame index, time): the checksum of each row's source as the table has
  // it now, and the outcome. One write a column for all the rows.
  void write_rows(std::span<const std::size_t> rows, std::span<const FrameRecord* const> records) const {
    const std::size_t n = rows.size();
    const h5::Dataset sha_column = dataset(kSha), message_column = dataset(kMessage);
    StringBlock sha(string_type(sha_column, path), n), message(string_type(message_column, path), n);
    std::vector<std::int64_t> atoms(n);
    std::vector<double> charge(n);
    for (std::size_t k = 0; k < n; ++k) {
      sha.put(k, frames.source(rows[k]).sha256);
      message.put(k, records[k]->message.substr(0, FrameTable::kMessageBytes));
      atoms[k] = std::int64_t(records[k]->atom_count);
      charge[k] = records[k]->total_charge;
    }
    h5::write_rows(sha_column, rows, sha.type.get(), sha.bytes.data(), path);
    h5::write_rows(message_column, rows, message.type.get(), message.bytes.data(), path);
    h5::write_rows(dataset(kAtoms), rows, H5T_NATIVE_INT64, atoms.data(), path);
    h5::write_rows(dataset(kCharge), rows, H5T_NATIVE_DOUBLE, charge.data(), path);
    // A file of an earlier version, resumed, has no energy or cell columns.
    if (!h5::exists(file.get(), kEnergy, path)) return;
    std::vector<double> energy(n), solvation(n);
    for (std::size_t k = 0; k < n; ++k) {
      energy[k] = records[k]->energy_kj_per_mol;
      solvation[k] = records[k]->solvation_kj_per_mol;
    }
    h5::write_rows(dataset(kEnergy), rows, H5T_NATIVE_DOUBLE, energy.data(), path);
    h5::write_rows(dataset(kSolvation), rows, H5T_NATIVE_DOUBLE, solvation.data(), path);
    std::vector<double> cells(n * kCellValues, kNaN);
    for (std::size_t k = 0; k < n; ++k)
      if (records[k]->cell)
        std::copy(records[k]->cell->begin(), records[k]->cell->end(), cells.begin() + std::ptrdiff_t(k * kCellValues));
    h5::write_rows(dataset(kCell), rows, H5T_NATIVE_DOUBLE, cells.data(), path);
  }
  void write_statuses(std::span<const std::size_t> rows, FrameStatus s) const {
    const std::vector<std::int8_t> values(rows.size(), std::int8_t(s));
    h5::write_rows(dataset(kStatus), rows, status_type(path).get(), values.data(), path);
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
    // The 1.10 format: checksummed metadata (a writer killed later leaves a mark that
    // io::hdf5::clear_write_mark clears for --resume).
    Handle file = io::hdf5::create_file(
        atomic.temp_path(), path, "create the file (as " + atomic.temp_path().filename().string() + ")");
    const hid_t f = file.get();
    h5::bound_metadata_cache(f, path);  // allocating one chunk a frame builds the whole index
    const GridSpec& g = layout.grid;
    const std::size_t n = layout.frames.size();

    Handle potential = create_potential(f, layout, path);
    h5::write_map_attributes(potential.get(), g, layout.meta, h5::kBatchAxisOrder, path);
    const std::size_t first_frame = layout.shard ? layout.shard->first_frame : 0;
    h5::attach_coordinates(f, potential.get(), g, n, path, first_frame);
    io::hdf5::write_attribute(potential.get(), "batch_options", layout.options_json, path);
    if (layout.shard) write_shard(potential.get(), *layout.shard, path);

    create_frame_table(f, layout.frames, path);

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
  if (writable && every_rank) b.writers_lock.emplace(path);
  b.file = h5::open_file(path, writable, every_rank);
  h5::bound_metadata_cache(b.file.get(), path);
  b.every_rank = every_rank;
  const hid_t f = b.file.get();
  if (!h5::exists(f, "frames", path) || !h5::exists(f, "potential", path))
    throw InputError(path.string(), 0, "not a dcsgrid batch file (no /potential and /frames)");
  h5::OpenMap potential = h5::open_map(f, h5::names::potential, path);
  if (!potential.frames) throw InputError(path.string(), 0, "/potential is not 4-D [frame][nz][ny][nx]");
  b.potential = std::move(potential.dataset);
  b.grid = potential.grid;
  b.meta = std::move(potential.meta);
  io::hdf5::read_attribute(b.potential.get(), "batch_options", b.options_json, path);
  b.shard = read_shard(b.potential.get(), path);
  const std::size_t n = *potential.frames;

  b.frames = read_frame_table(open_frame_datasets(f, path), n, path);
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
const FrameTable& BatchFile::frames() const { return impl_->frames; }

void BatchFile::set_source_sha256(std::uint32_t source, std::string sha256) {
  impl_->frames.set_sha256(source, std::move(sha256));
}
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
  const MapStats* row = &stats;
  h5::write_stats_rows(b.file.get(), {&index, 1}, {&row, 1}, std::size_t(b.bins), b.path);
}

void BatchFile::write_frame(std::size_t index, const float* data, const FrameRecord& record,
                            const MapStats* stats, const StepHook& hook) {
  const FrameWrite frame{index, data, record, stats};
  write_frames({&frame, 1}, hook);
}

// One flush for the data of every frame of the group, then one for their statuses: a frame still
// turns complete only after its data is flushed, and the group shares the two flushes. Each table
// column (and stats dataset) is written once for the group, the statuses too.
void BatchFile::write_frames(std::span<const FrameWrite> group, const StepHook& hook) {
  Impl& b = *impl_;
  const fs::path& path = b.path;
  std::vector<const FrameWrite*> in_order;
  for (const FrameWrite& f : group) {
    b.check_index(f.index);
    if (b.bins > 0 && !f.stats)
      throw Error(path.string() + ": frame " + std::to_string(f.index) + " needs its stats");
    if (!f.data) throw Error(path.string() + ": frame " + std::to_string(f.index) + "'s map is not on the host");
    in_order.push_back(&f);
  }
  std::sort(in_order.begin(), in_order.end(),
            [](const FrameWrite* x, const FrameWrite* y) { return x->index < y->index; });
  std::vector<std::size_t> rows;
  std::vector<const FrameRecord*> records;
  std::vector<const MapStats*> stats;
  for (const FrameWrite* f : in_order) {
    rows.push_back(f->index);
    records.push_back(&f->record);
    stats.push_back(f->stats);
  }
  auto step = [&](WriteStep s) {
    if (hook)
      for (const FrameWrite& f : group) hook(f.index, s);
  };
  {
    std::lock_guard lock(io::hdf5::library_mutex());
    for (const FrameWrite* f : in_order)
      h5::write_map(b.potential.get(), f->index, b.grid, f->data, path, b.every_rank);
    if (b.bins > 0) h5::write_stats_rows(b.file.get(), rows, stats, std::size_t(b.bins), path);
    b.write_rows(rows, records);
  }
  step(WriteStep::data_written);
  {
    std::lock_guard lock(io::hdf5::library_mutex());
    b.flush();
  }
  step(WriteStep::data_flushed);
  {
    std::lock_guard lock(io::hdf5::library_mutex());
    b.write_statuses(rows, FrameStatus::complete);
  }
  step(WriteStep::status_written);
  {
    std::lock_guard lock(io::hdf5::library_mutex());
    b.flush();
  }
  for (const FrameWrite& f : group) {
    b.frames.set_outcome(f.index, FrameStatus::complete, f.record.atom_count, f.record.total_charge);
    b.frames.set_energies(f.index, f.record.energy_kj_per_mol, f.record.solvation_kj_per_mol);
    b.frames.set_cell(f.index, f.record.cell);
  }
  step(WriteStep::status_flushed);
}

void BatchFile::write_failure(std::size_t index, const FrameRecord& record) {
  Impl& b = *impl_;
  b.check_index(index);
  std::lock_guard lock(io::hdf5::library_mutex());
  const FrameRecord* row = &record;
  b.write_rows({&index, 1}, {&row, 1});
  b.write_statuses({&index, 1}, FrameStatus::failed);
  b.flush();
  b.frames.set_outcome(index, FrameStatus::failed, record.atom_count, record.total_charge,
                       record.message);
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
  h5::write_map(b.dataset(kMean).get(), std::nullopt, b.grid, mean, b.path, b.every_rank);
  h5::write_map(b.dataset(kStd).get(), std::nullopt, b.grid, stddev, b.path, b.every_rank);
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
  return h5::rank(h5::open_dataset(file.get(), h5::names::potential, path).get(), path) == 4;
}

}  // namespace dcsgrid::analysis
