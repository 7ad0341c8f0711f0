#include "batch_hdf5.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/core/error.hpp"

namespace dcsgrid::analysis::h5 {

using io::hdf5::check;
using io::hdf5::checked_handle;
using io::hdf5::Handle;

namespace {

constexpr std::size_t kStatsColumns = 6;  // min max mean std count non_finite

[[noreturn]] void fail(const Path& path, const std::string& problem) {
  throw InputError(path.string(), 0, problem);
}

std::string label(const char* name) { return std::string("/") + name; }

Handle simple_space(const std::vector<hsize_t>& dims, const Path& path) {
  if (dims.empty()) return checked_handle(H5Screate(H5S_SCALAR), H5Sclose, path, "create a dataspace");
  return checked_handle(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose, path,
                        "create a dataspace");
}

// Dataset creation properties: storage allocated at creation, no object times (nothing in the
// object headers changes after creation).
Handle early_allocation(const Path& path) {
  const std::string what = "set up dataset storage";
  Handle plist = checked_handle(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, path, what);
  check(H5Pset_alloc_time(plist.get(), H5D_ALLOC_TIME_EARLY), path, what);
  check(H5Pset_obj_track_times(plist.get(), false), path, what);
  return plist;
}

// Chunks of whole x rows of one map, about 1 MiB: the planes (or, for large planes, the rows)
// split evenly, so the last chunk is not mostly padding. (With as many planes as fit in 1 MiB, a
// 76-plane map took chunks of 66 planes: 132 planes stored for 76, the file 1.7 times its data,
// and every frame wrote them.)
hsize_t even_split(std::size_t count, std::size_t most) {
  const std::size_t pieces = (count + most - 1) / most;
  return hsize_t((count + pieces - 1) / pieces);
}

std::vector<hsize_t> map_chunk(const std::vector<hsize_t>& leading, const GridSpec& grid) {
  constexpr std::size_t target = std::size_t(1) << 20;
  const std::size_t row = std::size_t(grid.nx()) * sizeof(float);
  const std::size_t plane = row * std::size_t(grid.ny());
  std::vector<hsize_t> chunk(leading.size(), 1);
  if (plane <= target) {
    chunk.push_back(even_split(std::size_t(grid.nz()), target / plane));
    chunk.push_back(hsize_t(grid.ny()));
  } else {
    chunk.push_back(1);
    chunk.push_back(even_split(std::size_t(grid.ny()), std::max<std::size_t>(1, target / row)));
  }
  chunk.push_back(hsize_t(grid.nx()));
  return chunk;
}

std::vector<hsize_t> map_dims(std::optional<std::size_t> frames, const GridSpec& grid) {
  std::vector<hsize_t> dims;
  if (frames) dims.push_back(*frames);
  dims.insert(dims.end(), {hsize_t(grid.nz()), hsize_t(grid.ny()), hsize_t(grid.nx())});
  return dims;
}

// The file-space selection of one map (frame of a 4-D dataset, or all of a 3-D one) and a memory
// space of the same shape. (A flat 1-D memory space held the same values, but HDF5 then mapped
// them onto the chunks element by element: 25 ms a frame of 0.33 M points, the whole cost of
// writing a batch.)
struct MapSelection {
  Handle file_space, memory_space;
};
MapSelection select_map(hid_t dataset, std::optional<std::size_t> frame, const GridSpec& grid,
                        const Path& path) {
  const std::string what = "select a map";
  MapSelection s;
  s.file_space = checked_handle(H5Dget_space(dataset), H5Sclose, path, what);
  if (frame) {
    const std::array<hsize_t, 4> start = {*frame, 0, 0, 0};
    const std::array<hsize_t, 4> count = {1, hsize_t(grid.nz()), hsize_t(grid.ny()),
                                          hsize_t(grid.nx())};
    check(H5Sselect_hyperslab(s.file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                              count.data(), nullptr),
          path, what);
  }
  const std::vector<hsize_t> shape = map_dims(frame ? std::optional<std::size_t>(1) : std::nullopt, grid);
  s.memory_space = checked_handle(H5Screate_simple(int(shape.size()), shape.data(), nullptr),
                                  H5Sclose, path, what);
  return s;
}

// Row i of a 1-D or 2-D dataset: file selection and memory space.
MapSelection select_row(hid_t dataset, std::size_t i, const Path& path) {
  const std::string what = "select row " + std::to_string(i);
  MapSelection s;
  s.file_space = checked_handle(H5Dget_space(dataset), H5Sclose, path, what);
  const std::vector<hsize_t> dims = shape(dataset, path);
  if (dims.empty() || dims.size() > 2 || i >= dims[0])
    throw Error(path.string() + ": cannot " + what + " of a dataset of this shape");
  std::array<hsize_t, 2> start = {i, 0}, count = {1, dims.size() == 2 ? dims[1] : 1};
  check(H5Sselect_hyperslab(s.file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                            count.data(), nullptr),
        path, what);
  const hsize_t n = count[1];
  s.memory_space = checked_handle(H5Screate_simple(1, &n, nullptr), H5Sclose, path, what);
  return s;
}

Handle fixed_string_type(std::size_t size, const Path& path) {
  const std::string what = "make a string type";
  Handle type = checked_handle(H5Tcopy(H5T_C_S1), H5Tclose, path, what);
  check(H5Tset_size(type.get(), size), path, what);
  check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), path, what);
  return type;
}

std::size_t element_count(hid_t dataset, const Path& path) {
  std::size_t n = 1;
  for (hsize_t d : shape(dataset, path)) n *= d;
  return n;
}

}  // namespace

Handle open_file(const Path& path, bool writable) {
  if (!std::filesystem::exists(path)) fail(path, "no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) fail(path, "not an HDF5 file");
  return checked_handle(H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT),
                        H5Fclose, path, writable ? "open the file for writing" : "open the file");
}

bool exists(hid_t location, const char* name, const Path& path) {
  return check(H5Lexists(location, name, H5P_DEFAULT), path, "look for " + label(name)) > 0;
}

Dataset open_dataset(hid_t location, const char* name, const Path& path) {
  if (!exists(location, name, path)) fail(path, "missing dataset " + label(name));
  return checked_handle(H5Dopen2(location, name, H5P_DEFAULT), H5Dclose, path, "open " + label(name));
}

void create_group(hid_t location, const char* name, const Path& path) {
  Handle group = checked_handle(H5Gcreate2(location, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                H5Gclose, path, "create the group " + label(name));
}

int rank(hid_t dataset, const Path& path) {
  Handle space = checked_handle(H5Dget_space(dataset), H5Sclose, path, "get a dataset's shape");
  return int(check(H5Sget_simple_extent_ndims(space.get()), path, "get a dataset's shape"));
}

std::vector<hsize_t> shape(hid_t dataset, const Path& path) {
  Handle space = checked_handle(H5Dget_space(dataset), H5Sclose, path, "get a dataset's shape");
  std::vector<hsize_t> dims(std::size_t(rank(dataset, path)));
  if (!dims.empty())
    check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), path, "get a dataset's shape");
  return dims;
}

Dataset create_map_dataset(hid_t location, const char* name, const std::vector<hsize_t>& leading,
                           const GridSpec& grid, const Path& path) {
  const std::string what = "create the dataset " + label(name);
  std::vector<hsize_t> dims = leading;
  dims.insert(dims.end(), {hsize_t(grid.nz()), hsize_t(grid.ny()), hsize_t(grid.nx())});
  Handle space = simple_space(dims, path);
  Handle plist = early_allocation(path);
  const std::vector<hsize_t> chunk = map_chunk(leading, grid);
  check(H5Pset_chunk(plist.get(), int(chunk.size()), chunk.data()), path, what);
  check(H5Pset_fill_time(plist.get(), H5D_FILL_TIME_NEVER), path, what);
  return checked_handle(H5Dcreate2(location, name, H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                                   plist.get(), H5P_DEFAULT),
                        H5Dclose, path, what);
}

void write_map_attributes(hid_t dataset, const GridSpec& grid, const io::MapMetadata& meta,
                          const std::string& axis_order, const Path& path) {
  io::hdf5::write_attribute(dataset, "origin", grid.origin, path);
  io::hdf5::write_attribute(dataset, "spacing", grid.spacing, path);
  io::hdf5::write_attribute(dataset, "dims", grid.dims, path);
  io::hdf5::write_attribute(dataset, "axis_order", axis_order, path);
  io::for_each_field(meta, [&](const char* name, const auto& value) {
    io::hdf5::write_attribute(dataset, name, value, path);
  });
  for (const auto& [name, value] : meta.parameters)
    io::hdf5::write_attribute(dataset, io::kParameterPrefix + name, value, path);
}

void read_map_attributes(hid_t dataset, GridSpec& grid, io::MapMetadata& meta, const Path& path) {
  io::hdf5::read_attribute(dataset, "origin", grid.origin, path);
  io::hdf5::read_attribute(dataset, "spacing", grid.spacing, path);
  io::hdf5::read_attribute(dataset, "dims", grid.dims, path);
  try {
    validate(grid);
  } catch (const Error& e) {
    fail(path, std::string("attributes describe an invalid grid: ") + e.what());
  }
  io::for_each_field(meta, [&](const char* name, auto& value) {
    io::hdf5::read_attribute(dataset, name, value, path);
  });
  const std::string prefix = io::kParameterPrefix;
  for (const std::string& name : io::hdf5::attribute_names(dataset, path))
    if (name.compare(0, prefix.size(), prefix) == 0)
      io::hdf5::read_attribute(dataset, name, meta.parameters[name.substr(prefix.size())], path);
}

void check_map_shape(hid_t dataset, const GridSpec& grid, std::optional<std::size_t> frames,
                     const Path& path) {
  Handle type = checked_handle(H5Dget_type(dataset), H5Tclose, path, "get /potential's type");
  if (H5Tget_class(type.get()) != H5T_FLOAT) fail(path, "/potential is not floating point");
  if (shape(dataset, path) != map_dims(frames, grid))
    fail(path, "/potential's shape does not match its dims attribute ([nz][ny][nx] = [" +
                   std::to_string(grid.nz()) + "][" + std::to_string(grid.ny()) + "][" +
                   std::to_string(grid.nx()) + "])");
}

void write_map(hid_t dataset, std::optional<std::size_t> frame, const GridSpec& grid,
               const float* data, const Path& path) {
  MapSelection s = select_map(dataset, frame, grid, path);
  check(H5Dwrite(dataset, H5T_NATIVE_FLOAT, s.memory_space.get(), s.file_space.get(), H5P_DEFAULT,
                 data),
        path, frame ? "write frame " + std::to_string(*frame) : std::string("write a map"));
}

void read_map(hid_t dataset, std::optional<std::size_t> frame, const GridSpec& grid, float* out,
              const Path& path) {
  MapSelection s = select_map(dataset, frame, grid, path);
  check(H5Dread(dataset, H5T_NATIVE_FLOAT, s.memory_space.get(), s.file_space.get(), H5P_DEFAULT,
                out),
        path, frame ? "read frame " + std::to_string(*frame) : std::string("read a map"));
}

Dataset create_column(hid_t location, const char* name, const std::vector<hsize_t>& dims,
                      hid_t file_type, hid_t memory_type, const void* data, const Path& path) {
  const std::string what = "create the dataset " + label(name);
  Handle space = simple_space(dims, path);
  Handle plist = early_allocation(path);
  Handle ds = checked_handle(H5Dcreate2(location, name, file_type, space.get(), H5P_DEFAULT,
                                        plist.get(), H5P_DEFAULT),
                             H5Dclose, path, what);
  check(H5Dwrite(ds.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), path, what);
  return ds;
}

Dataset create_string_column(hid_t location, const char* name, const std::vector<std::string>& texts,
                             std::size_t size, const Path& path) {
  std::vector<char> buffer(texts.size() * size, '\0');
  for (std::size_t i = 0; i < texts.size(); ++i)
    std::copy_n(texts[i].data(), std::min(texts[i].size(), size), buffer.data() + i * size);
  Handle type = fixed_string_type(size, path);
  return create_column(location, name, {texts.size()}, type.get(), type.get(), buffer.data(), path);
}

void write_row(const Dataset& dataset, std::size_t i, hid_t memory_type, const void* data,
               const Path& path) {
  MapSelection s = select_row(dataset.get(), i, path);
  check(H5Dwrite(dataset.get(), memory_type, s.memory_space.get(), s.file_space.get(), H5P_DEFAULT,
                 data),
        path, "write row " + std::to_string(i));
}

void write_string_element(const Dataset& dataset, std::size_t i, const std::string& text,
                          const Path& path) {
  Handle type = checked_handle(H5Dget_type(dataset.get()), H5Tclose, path, "get a string type");
  const std::size_t size = H5Tget_size(type.get());
  std::string buffer(size, '\0');
  std::copy_n(text.data(), std::min(text.size(), size), buffer.data());
  write_row(dataset, i, type.get(), buffer.data(), path);
}

void write_scalar(const Dataset& dataset, hid_t memory_type, const void* data, const Path& path) {
  check(H5Dwrite(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), path,
        "write a scalar");
}

void read_column(const Dataset& dataset, std::size_t n, hid_t memory_type, void* out,
                 const Path& path) {
  if (element_count(dataset.get(), path) != n)
    fail(path, "a table column holds " + std::to_string(element_count(dataset.get(), path)) +
                   " values, expected " + std::to_string(n));
  check(H5Dread(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), path,
        "read a table column");
}

std::vector<std::string> read_string_column(const Dataset& dataset, std::size_t n, const Path& path) {
  Handle type = checked_handle(H5Dget_type(dataset.get()), H5Tclose, path, "get a string type");
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0)
    fail(path, "a table column is not fixed-length strings");
  const std::size_t size = H5Tget_size(type.get());
  std::vector<char> buffer(n * size);
  read_column(dataset, n, type.get(), buffer.data(), path);
  std::vector<std::string> texts(n);
  for (std::size_t i = 0; i < n; ++i) {
    const char* begin = buffer.data() + i * size;
    texts[i].assign(begin, std::find(begin, begin + size, '\0'));
  }
  return texts;
}

Handle status_type(const Path& path) {
  Handle type = checked_handle(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose, path, "make the status type");
  for (FrameStatus s : {FrameStatus::pending, FrameStatus::complete, FrameStatus::failed}) {
    const std::int8_t value = std::int8_t(s);
    check(H5Tenum_insert(type.get(), status_name(s).c_str(), &value), path, "make the status type");
  }
  return type;
}

std::vector<std::int8_t> read_status(hid_t file, std::size_t frames, const Path& path) {
  std::vector<std::int8_t> status(frames);
  read_column(open_dataset(file, names::status, path), frames, status_type(path).get(),
              status.data(), path);
  return status;
}

void create_stats_datasets(hid_t file, std::size_t frames, std::size_t bins, const std::string& units,
                           const Path& path) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> stats(frames * kStatsColumns, nan), edges(frames * (bins + 1), nan);
  const std::vector<std::uint64_t> counts(frames * (bins + 2), 0);
  Handle s = create_column(file, names::stats, {frames, kStatsColumns}, H5T_IEEE_F64LE,
                           H5T_NATIVE_DOUBLE, stats.data(), path);
  io::hdf5::write_attribute(s.get(), "columns", std::string("min max mean std count non_finite"),
                            path);
  io::hdf5::write_attribute(s.get(), "units", units, path);
  Handle h = create_column(file, names::histogram, {frames, bins + 2}, H5T_STD_U64LE,
                           H5T_NATIVE_UINT64, counts.data(), path);
  io::hdf5::write_attribute(h.get(), "columns",
                            std::string("bins, then the counts below and above the range"), path);
  create_column(file, names::edges, {frames, bins + 1}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                edges.data(), path);
}

void write_stats_row(hid_t file, std::size_t frame, const MapStats& stats, std::size_t bins,
                     const Path& path) {
  if (stats.counts.size() != bins || stats.edges.size() != bins + 1)
    throw Error(path.string() + ": frame " + std::to_string(frame) + " needs a histogram of " +
                std::to_string(bins) + " bins");
  const double row[kStatsColumns] = {stats.min,    stats.max,          stats.mean,
                                     stats.stddev, double(stats.count), double(stats.non_finite)};
  std::vector<std::uint64_t> counts(stats.counts);
  counts.push_back(stats.below);
  counts.push_back(stats.above);
  write_row(open_dataset(file, names::stats, path), frame, H5T_NATIVE_DOUBLE, row, path);
  write_row(open_dataset(file, names::histogram, path), frame, H5T_NATIVE_UINT64, counts.data(),
            path);
  write_row(open_dataset(file, names::edges, path), frame, H5T_NATIVE_DOUBLE, stats.edges.data(),
            path);
}

std::vector<MapStats> read_stats_rows(hid_t file, const Path& path) {
  Dataset s = open_dataset(file, names::stats, path);
  Dataset h = open_dataset(file, names::histogram, path);
  Dataset e = open_dataset(file, names::edges, path);
  const std::vector<hsize_t> ss = shape(s.get(), path), hs = shape(h.get(), path);
  if (ss.size() != 2 || ss[1] != kStatsColumns || hs.size() != 2 || hs[0] != ss[0] || hs[1] < 3)
    fail(path, "/analysis/stats and /analysis/histogram have unexpected shapes");
  const std::size_t frames = ss[0], bins = hs[1] - 2;
  std::vector<double> stats(frames * kStatsColumns), edges(frames * (bins + 1));
  std::vector<std::uint64_t> counts(frames * (bins + 2));
  read_column(s, stats.size(), H5T_NATIVE_DOUBLE, stats.data(), path);
  read_column(h, counts.size(), H5T_NATIVE_UINT64, counts.data(), path);
  read_column(e, edges.size(), H5T_NATIVE_DOUBLE, edges.data(), path);
  std::vector<MapStats> rows(frames);
  for (std::size_t f = 0; f < frames; ++f) {
    MapStats& m = rows[f];
    const double* row = stats.data() + f * kStatsColumns;
    m.min = row[0];
    m.max = row[1];
    m.mean = row[2];
    m.stddev = row[3];
    m.count = row[4] >= 0 ? std::size_t(row[4]) : 0;  // NaN in rows never written
    m.non_finite = row[5] >= 0 ? std::size_t(row[5]) : 0;
    const auto c = counts.begin() + std::ptrdiff_t(f * (bins + 2));
    m.counts.assign(c, c + std::ptrdiff_t(bins));
    m.below = c[std::ptrdiff_t(bins)];
    m.above = c[std::ptrdiff_t(bins) + 1];
    const auto b = edges.begin() + std::ptrdiff_t(f * (bins + 1));
    m.edges.assign(b, b + std::ptrdiff_t(bins + 1));
  }
  return rows;
}

}  // namespace dcsgrid::analysis::h5
