#include "dcsgrid/io/hdf5/maps.hpp"

#include "io/hdf5/chunk_filters.hpp"

#include <hdf5_hl.h>

#include <algorithm>
#include <array>
#include <limits>
#include <span>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::io::hdf5 {

namespace {

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

// Pieces of at most `most` planes (or rows) that pad `count` by at most 2% when the last piece is
// filled up: the even split into the fewest pieces when it pads little, else the largest piece
// that does. (With as many planes as fit in 1 MiB, a 76-plane map took chunks of 66 planes: 132
// planes stored for 76; the even split alone still stored 4 planes for 3 when two fit.)
hsize_t least_padding_piece(std::size_t count, std::size_t most) {
  auto pads_little = [count](std::size_t piece) {
    return (count + piece - 1) / piece * piece * 50 <= count * 51;
  };
  if (most == 0) return 1;
  const std::size_t pieces = (count + most - 1) / most, even = (count + pieces - 1) / pieces;
  if (pads_little(even)) return hsize_t(even);
  for (std::size_t piece = std::min(count, most); piece > 1; --piece)
    if (pads_little(piece)) return hsize_t(piece);
  return 1;
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

// Runs of consecutive rows [first, first + count), ascending, of a 1-D or 2-D dataset (whole
// rows of its second dimension): file selection (one hyperslab a run) and a flat memory space
// holding them in order.
struct RowRun {
  std::size_t first, count;
};
MapSelection select_rows(hid_t dataset, std::span<const RowRun> runs, const Path& path) {
  const std::string what = runs.size() == 1 ? "select rows " + std::to_string(runs[0].first) + " to " +
                                                  std::to_string(runs[0].first + runs[0].count)
                                            : "select " + std::to_string(runs.size()) + " runs of rows";
  MapSelection s;
  s.file_space = checked_handle(H5Dget_space(dataset), H5Sclose, path, what);
  const std::vector<hsize_t> dims = shape(dataset, path);
  if (dims.empty() || dims.size() > 2 || runs.empty())
    throw Error(path.string() + ": cannot " + what + " of a dataset of this shape");
  const hsize_t width = dims.size() == 2 ? dims[1] : 1;
  hsize_t n = 0, end = 0;
  for (const RowRun& run : runs) {
    if (run.count == 0 || run.first < end || run.first > dims[0] || run.count > dims[0] - run.first)
      throw Error(path.string() + ": cannot " + what + " of a dataset of this shape");
    const std::array<hsize_t, 2> start = {run.first, 0}, count = {run.count, width};
    check(H5Sselect_hyperslab(s.file_space.get(), n == 0 ? H5S_SELECT_SET : H5S_SELECT_OR,
                              start.data(), nullptr, count.data(), nullptr),
          path, what);
    n += count[0] * width;
    end = run.first + run.count;
  }
  s.memory_space = checked_handle(H5Screate_simple(1, &n, nullptr), H5Sclose, path, what);
  return s;
}

std::size_t element_count(hid_t dataset, const Path& path) {
  std::size_t n = 1;
  for (hsize_t d : shape(dataset, path)) n *= d;
  return n;
}

}  // namespace

std::vector<hsize_t> map_dims(std::optional<std::size_t> frames, const GridSpec& grid) {
  std::vector<hsize_t> dims;
  if (frames) dims.push_back(*frames);
  dims.insert(dims.end(), {hsize_t(grid.nz()), hsize_t(grid.ny()), hsize_t(grid.nx())});
  return dims;
}

std::vector<hsize_t> map_chunk(const std::vector<hsize_t>& leading, const GridSpec& grid) {
  constexpr std::size_t target = std::size_t(1) << 20;
  const std::size_t row = std::size_t(grid.nx()) * sizeof(float);
  const std::size_t plane = row * std::size_t(grid.ny());
  std::vector<hsize_t> chunk(leading.size(), 1);
  if (plane <= target) {
    chunk.push_back(least_padding_piece(std::size_t(grid.nz()), target / plane));
    chunk.push_back(hsize_t(grid.ny()));
  } else {
    chunk.push_back(1);
    chunk.push_back(least_padding_piece(std::size_t(grid.ny()), target / row));
  }
  chunk.push_back(hsize_t(grid.nx()));
  return chunk;
}

bool exists(hid_t location, const char* name, const Path& path) {
  return check(H5Lexists(location, name, H5P_DEFAULT), path, "look for " + label(name)) > 0;
}

Dataset open_dataset(hid_t location, const char* name, const Path& path) {
  if (!exists(location, name, path)) fail(path, "missing dataset " + label(name));
  return checked_handle(H5Dopen2(location, name, H5P_DEFAULT), H5Dclose, path, "open " + label(name));
}

void create_group(hid_t location, const char* name, const Path& path) {
  const std::string what = "create the group " + label(name);
  Handle plist = checked_handle(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, path, what);
  check(H5Pset_obj_track_times(plist.get(), false), path, what);  // same bytes whenever written
  Handle group = checked_handle(H5Gcreate2(location, name, H5P_DEFAULT, plist.get(), H5P_DEFAULT),
                                H5Gclose, path, what);
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
                           const GridSpec& grid, const Path& path, bool allocate_early,
                           int compress_level, hid_t access) {
  const std::string what = "create the dataset " + label(name);
  std::vector<hsize_t> dims = leading;
  dims.insert(dims.end(), {hsize_t(grid.nz()), hsize_t(grid.ny()), hsize_t(grid.nx())});
  Handle space = simple_space(dims, path);
  Handle plist = checked_handle(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, path, what);
  check(H5Pset_obj_track_times(plist.get(), false), path, what);
  const std::vector<hsize_t> chunk = map_chunk(leading, grid);
  check(H5Pset_chunk(plist.get(), int(chunk.size()), chunk.data()), path, what);
  if (allocate_early) {
    check(H5Pset_alloc_time(plist.get(), H5D_ALLOC_TIME_EARLY), path, what);
    check(H5Pset_fill_time(plist.get(), H5D_FILL_TIME_NEVER), path, what);
  }
  if (compress_level >= 0) {
    if (compress_level > 9)
      throw Error(path.string() + ": compression level " + std::to_string(compress_level) +
                  " is outside 0..9");
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
      throw Error(path.string() + ": this HDF5 library has no deflate (zlib) filter");
    check(H5Pset_shuffle(plist.get()), path, "enable the shuffle filter");
    check(H5Pset_deflate(plist.get(), unsigned(compress_level)), path, "enable deflate compression");
  }
  return checked_handle(H5Dcreate2(location, name, H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                                   plist.get(), access),
                        H5Dclose, path, what);
}

Dataset create_virtual_map_dataset(hid_t location, const char* name, std::size_t frames,
                                   const GridSpec& grid, const std::vector<VirtualSource>& sources,
                                   const Path& path) {
  const std::string what = "create the virtual dataset " + label(name);
  Handle space = simple_space(map_dims(frames, grid), path);
  Handle plist = checked_handle(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, path, what);
  check(H5Pset_obj_track_times(plist.get(), false), path, what);
  const float nan = std::numeric_limits<float>::quiet_NaN();  // a missing part shows, not zeros
  check(H5Pset_fill_value(plist.get(), H5T_NATIVE_FLOAT, &nan), path, what);
  for (const VirtualSource& s : sources) {
    Handle source_space = simple_space(map_dims(s.frames, grid), path);
    const std::array<hsize_t, 4> start = {s.first_frame, 0, 0, 0};
    const std::vector<hsize_t> count = map_dims(s.frames, grid);
    check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                              nullptr),
          path, what);
    check(H5Pset_virtual(plist.get(), space.get(), s.file.c_str(), s.dataset.c_str(),
                         source_space.get()),
          path, what + " (mapping " + s.file + ")");
  }
  check(H5Sselect_all(space.get()), path, what);
  return checked_handle(H5Dcreate2(location, name, H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                                   plist.get(), H5P_DEFAULT),
                        H5Dclose, path, what);
}

void write_map_attributes(hid_t dataset, const GridSpec& grid, const MapMetadata& meta,
                          const std::string& axis_order, const Path& path) {
  write_attribute(dataset, "origin", grid.origin, path);
  write_attribute(dataset, "spacing", grid.spacing, path);
  write_attribute(dataset, "dims", grid.dims, path);
  if (!grid.orthogonal()) {  // a cell's lattice: point (i, j, k) at origin + i·a + j·b + k·c
    write_attribute(dataset, "skew", grid.skew, path);
    write_attribute(dataset, "axes", grid.steps(), path);
  }
  write_attribute(dataset, "axis_order", axis_order, path);
  write_attribute(dataset, "long_name", std::string("electrostatic potential"), path);
  for_each_field(meta, [&](const char* name, const auto& value) {
    write_attribute(dataset, name, value, path);
  });
  for (const auto& [name, value] : meta.parameters)
    write_attribute(dataset, kParameterPrefix + name, value, path);
}

namespace {

// A 1-D float64 coordinate dataset made a dimension scale named after itself.
void create_scale(hid_t file, const char* name, const std::vector<double>& values,
                  const char* long_name, const char* units, const Path& path) {
  const std::string what = "create the coordinate " + label(name);
  Handle scale = create_column(file, name, {values.size()}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                               values.data(), path);
  check(H5DSset_scale(scale.get(), name), path, what);
  write_attribute(scale.get(), "long_name", std::string(long_name), path);
  if (*units) write_attribute(scale.get(), "units", std::string(units), path);
  if (name[1] == '\0' && name[0] >= 'x') {  // x, y, z: the CF axis
    const char axis[2] = {char(name[0] - 'a' + 'A'), '\0'};
    write_attribute(scale.get(), "axis", std::string(axis), path);
  }
}

}  // namespace

void attach_coordinates(hid_t file, hid_t dataset, const GridSpec& grid,
                        std::optional<std::size_t> frames, const Path& path,
                        std::size_t first_frame) {
  // A skewed grid's axes are the cell's lattice vectors: its coordinates are the distances along
  // them from the origin, named a, b and c (not the CF axes x, y, z).
  const bool skewed = !grid.orthogonal();
  const char* axes[3] = {"x", "y", "z"};
  const char* long_names[3] = {"x coordinate", "y coordinate", "z coordinate"};
  if (skewed) {
    axes[0] = "a", axes[1] = "b", axes[2] = "c";
    long_names[0] = "distance from the origin along the grid's first axis (the cell's a)";
    long_names[1] = "distance from the origin along the grid's second axis (the cell's b)";
    long_names[2] = "distance from the origin along the grid's third axis (the cell's c)";
  }
  if (!exists(file, axes[0], path)) {  // the first map of the file: say which conventions it follows
    Handle root = checked_handle(H5Gopen2(file, "/", H5P_DEFAULT), H5Gclose, path, "open the root group");
    write_attribute(root.get(), "Conventions", std::string("CF-1.8"), path);
  }
  for (int a = 0; a < 3; ++a) {
    if (exists(file, axes[a], path)) continue;
    std::vector<double> positions(std::size_t(grid.dims[a]));
    const double step = grid.step_length(a);
    for (std::size_t i = 0; i < positions.size(); ++i)
      positions[i] = skewed ? double(i) * step : grid.origin[a] + double(i) * grid.spacing[a];
    create_scale(file, axes[a], positions, long_names[a], "angstrom", path);
  }
  if (frames && !exists(file, names::frame, path)) {
    std::vector<double> index(*frames);
    for (std::size_t i = 0; i < index.size(); ++i) index[i] = double(first_frame + i);
    create_scale(file, names::frame, index, "frame index", "", path);
  }
  const unsigned first = frames ? 1 : 0;
  if (frames)
    check(H5DSattach_scale(dataset, open_dataset(file, names::frame, path).get(), 0), path,
          "attach the frame coordinate");
  for (unsigned d = 0; d < 3; ++d)  // dataset dimensions are z, y, x
    check(H5DSattach_scale(dataset, open_dataset(file, axes[2 - d], path).get(), first + d), path,
          std::string("attach the ") + axes[2 - d] + " coordinate");
}

void read_map_attributes(hid_t dataset, GridSpec& grid, MapMetadata& meta, const Path& path) {
  read_attribute(dataset, "origin", grid.origin, path);
  read_attribute(dataset, "spacing", grid.spacing, path);
  read_attribute(dataset, "dims", grid.dims, path);
  if (has_attribute(dataset, "skew", path)) read_attribute(dataset, "skew", grid.skew, path);
  try {
    validate(grid);
  } catch (const Error& e) {
    fail(path, std::string("attributes describe an invalid grid: ") + e.what());
  }
  for_each_field(meta, [&](const char* name, auto& value) {
    read_attribute(dataset, name, value, path);
  });
  const std::string prefix = kParameterPrefix;
  for (const std::string& name : attribute_names(dataset, path))
    if (name.compare(0, prefix.size(), prefix) == 0)
      read_attribute(dataset, name, meta.parameters[name.substr(prefix.size())], path);
}

namespace {

// Chunks larger than this are damage (ours are about 1 MiB): HDF5 allocates one to read it.
constexpr std::uint64_t kMaxChunkBytes = std::uint64_t(256) << 20;
constexpr std::uint64_t kMaxStorageBytes = ~std::uint64_t(0) >> 1;

hsize_t file_size_of(hid_t object, const Path& path) {
  Handle file = checked_handle(H5Iget_file_id(object), H5Fclose, path, "get the file's size");
  hsize_t size = 0;
  check(H5Fget_filesize(file.get(), &size), path, "get the file's size");
  return size;
}

// InputError unless every chunk is stored, each of a sane size, and the storage fits in the file.
// (Damage to the chunk index made HDF5 return fill values, zeros, for the chunks it lost: a
// silently wrong map.)
void check_chunks(hid_t dataset, hid_t plist, const std::vector<hsize_t>& dims,
                  std::size_t value_bytes, const Path& path) {
  std::vector<hsize_t> chunk(dims.size());
  if (H5Pget_chunk(plist, int(chunk.size()), chunk.data()) != int(dims.size()))
    fail(path, "a dataset has a damaged chunk layout");
  std::uint64_t chunk_bytes = value_bytes, expected = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (chunk[d] == 0 || chunk[d] > kMaxChunkBytes) fail(path, "a dataset has a damaged chunk layout");
    chunk_bytes *= chunk[d];
    if (chunk_bytes > kMaxChunkBytes)
      fail(path, "a dataset's chunks claim " + std::to_string(chunk_bytes) + " bytes or more each");
    expected *= (dims[d] + chunk[d] - 1) / chunk[d];
  }
  Handle space = checked_handle(H5Dget_space(dataset), H5Sclose, path, "get a dataset's chunks");
  hsize_t stored = 0;
  check(H5Dget_num_chunks(dataset, space.get(), &stored), path, "get a dataset's chunks");
  if (stored != expected)
    fail(path, "a dataset has " + std::to_string(stored) + " of its " + std::to_string(expected) +
                   " chunks stored: damaged or incomplete");
  // Each chunk found where it belongs: a damaged key in the index hid one (read as zeros) while
  // the count stayed right. H5Dget_chunk_storage_size searches the index for the chunk; HDF5
  // 1.10's H5Dget_chunk_info_by_coord walks all of it for each chunk, so the check grew with the
  // square of the frames (a 50,000-frame batch file: about 20 s to open, 200 s with the batch
  // files' capped metadata cache). A chunk's address is checked by HDF5 when it is read.
  const hsize_t file_size = file_size_of(dataset, path);
  std::vector<hsize_t> offset(dims.size(), 0);
  for (std::uint64_t i = 0; i < expected; ++i) {
    hsize_t size = 0;
    if (H5Dget_chunk_storage_size(dataset, offset.data(), &size) < 0 || size == 0 || size > file_size)
      fail(path, "a dataset's chunk " + std::to_string(i) + " of " + std::to_string(expected) +
                     " is missing or outside the file");
    for (std::size_t d = dims.size(); d-- > 0;) {  // the next chunk, last dimension fastest
      offset[d] += chunk[d];
      if (offset[d] < dims[d]) break;
      offset[d] = 0;
    }
  }
  // Unfiltered chunks are stored whole; HDF5 reads only as many bytes as the index says.
  const hsize_t storage = H5Dget_storage_size(dataset);
  if (storage > file_size ||
      (H5Pget_nfilters(plist) == 0 && storage != stored * chunk_bytes))
    fail(path, "a dataset's chunks claim " + std::to_string(storage) + " bytes of storage, not " +
                   std::to_string(stored * chunk_bytes));
}

// InputError unless a dataset's storage can hold what its shape says, inside the file: all chunks
// present, or contiguous/compact storage of exactly its values. (A damaged storage size or layout
// class made HDF5 copy past its buffers.)
void check_storage(hid_t dataset, const Path& path) {
  Handle plist = checked_handle(H5Dget_create_plist(dataset), H5Pclose, path, "get a dataset's storage");
  const std::vector<hsize_t> dims = shape(dataset, path);
  Handle type = checked_handle(H5Dget_type(dataset), H5Tclose, path, "get a dataset's type");
  const std::size_t value_bytes = H5Tget_size(type.get());
  if (value_bytes == 0) fail(path, "a dataset has a damaged type");
  const H5D_layout_t layout = H5Pget_layout(plist.get());
  if (layout == H5D_CHUNKED) return check_chunks(dataset, plist.get(), dims, value_bytes, path);
  if (layout == H5D_VIRTUAL) return;  // `dcsgrid merge`: the data stay in the part files it checked
  if (layout != H5D_CONTIGUOUS && layout != H5D_COMPACT) fail(path, "a dataset has a damaged layout");
  std::uint64_t bytes = value_bytes;
  for (hsize_t d : dims) bytes = d != 0 && bytes > kMaxStorageBytes / d ? kMaxStorageBytes : bytes * d;
  const hsize_t file_size = file_size_of(dataset, path);
  const haddr_t offset = layout == H5D_CONTIGUOUS ? H5Dget_offset(dataset) : 0;
  if (H5Dget_storage_size(dataset) != bytes || bytes > file_size || offset == HADDR_UNDEF ||
      offset > file_size - bytes)
    fail(path, "a dataset's storage does not match its shape");
}

}  // namespace

void check_map_shape(hid_t dataset, const GridSpec& grid, std::optional<std::size_t> frames,
                     const Path& path) {
  // Only the standard little-endian types: HDF5 converts any float layout a damaged type message
  // describes (byte order, exponent bits) into silently different values.
  Handle type = checked_handle(H5Dget_type(dataset), H5Tclose, path, "get /potential's type");
  if (H5Tequal(type.get(), H5T_IEEE_F32LE) <= 0 && H5Tequal(type.get(), H5T_IEEE_F64LE) <= 0)
    fail(path, "/potential is not IEEE little-endian float32 or float64");
  const std::vector<hsize_t> dims = shape(dataset, path);
  if (dims != map_dims(frames, grid))
    fail(path, "/potential's shape does not match its dims attribute ([nz][ny][nx] = [" +
                   std::to_string(grid.nz()) + "][" + std::to_string(grid.ny()) + "][" +
                   std::to_string(grid.nx()) + "])");
  check_storage(dataset, path);
}

OpenMap open_map(hid_t file, const char* name, const Path& path) {
  if (*name == 0 || !exists(file, name, path)) fail(path, "no dataset " + label(name));
  OpenMap map;
  map.dataset = open_dataset(file, name, path);
  const hid_t ds = map.dataset.get();
  const int dimensions = rank(ds, path);
  if (dimensions != 3 && dimensions != 4)
    fail(path, label(name) + " is neither a map (3-D) nor a batch (4-D)");
  read_map_attributes(ds, map.grid, map.meta, path);
  if (dimensions == 4) map.frames = shape(ds, path)[0];
  check_map_shape(ds, map.grid, map.frames, path);
  return map;
}

void write_map(hid_t dataset, std::optional<std::size_t> frame, const GridSpec& grid,
               const float* data, const Path& path, bool every_rank) {
  std::vector<hsize_t> start(frame ? 4 : 3, 0);
  if (frame) start[0] = *frame;
  write_block(dataset, start, map_dims(frame ? std::optional<std::size_t>(1) : std::nullopt, grid),
              data, path, frame ? "write frame " + std::to_string(*frame) : std::string("write a map"),
              every_rank);
}

namespace {

// How a dataset's whole chunks may be written straight to the file: float32 chunks, stored as they
// lie in memory or through shuffle and deflate (encoded here, on every core). Empty shape otherwise.
struct DirectChunks {
  std::vector<hsize_t> shape;
  std::optional<ShuffleDeflate> filters;
};

DirectChunks direct_chunks(hid_t dataset, std::size_t rank, const Path& path) {
  const std::string what = "look at a dataset's storage";
  Handle type = checked_handle(H5Dget_type(dataset), H5Tclose, path, what);
  if (check(H5Tequal(type.get(), H5T_NATIVE_FLOAT), path, what) <= 0) return {};
  Handle create = checked_handle(H5Dget_create_plist(dataset), H5Pclose, path, what);
  if (H5Pget_layout(create.get()) != H5D_CHUNKED) return {};
  DirectChunks direct;
  if (H5Pget_nfilters(create.get()) != 0) {
    direct.filters = shuffle_deflate_filters(create.get());
    if (!direct.filters) return {};
  }
  direct.shape.resize(rank);
  if (check(H5Pget_chunk(create.get(), int(rank), direct.shape.data()), path, what) != int(rank)) return {};
  return direct;
}

void write_hyperslab(hid_t dataset, const std::vector<hsize_t>& start,
                     const std::vector<hsize_t>& count, const float* data, const Path& path,
                     const std::string& what) {
  Handle file_space = checked_handle(H5Dget_space(dataset), H5Sclose, path, what);
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                            nullptr),
        path, what);
  Handle memory_space =
      checked_handle(H5Screate_simple(int(count.size()), count.data(), nullptr), H5Sclose, path, what);
  check(H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
        path, what);
}

// The dataset's partial edge chunk, the block's last `values` values, zero-padded to a whole
// chunk of `chunk_values` for a direct write. Through the chunk cache, HDF5 first read the chunk
// from the file (a hole there: the kernel zeroed pages ahead of it), 44% of a batch run's time
// on 1HPV frames (79 planes, chunks of 40). One chunk: at most about 1 MiB (map_chunk).
std::vector<float> padded_edge_chunk(const float* data, std::size_t values, std::size_t chunk_values) {
  std::vector<float> chunk(chunk_values, 0.0f);
  std::copy_n(data, values, chunk.begin());
  return chunk;
}

}  // namespace

// Map chunks are 1 along the leading dimensions, some length along one dimension (the split) and
// whole along the rest; a block of whole inner dimensions then holds each chunk it covers as one
// run of memory, which H5Dwrite_chunk writes without the chunk cache's copy and HDF5's selection
// walk (compressed maps: encoded first, in parallel, hdf5_chunk_filters.hpp); so does the
// dataset's partial edge chunk when the block holds all of it that lies in the dataset
// (zero-padded). Chunks the block covers in part (at its ends) go through H5Dwrite and the
// chunk cache, which completes them when a later block brings the rest.
void write_block(hid_t dataset, const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                 const float* data, const Path& path, const std::string& what, bool every_rank) {
  const std::size_t rank = start.size();
  const std::vector<hsize_t> dims = shape(dataset, path);
  if (count.size() != rank || dims.size() != rank)
    throw Error(path.string() + ": cannot " + what + ": a block of another rank than the dataset's");
  // Under MPI-IO HDF5 has no direct chunk writes (and asking the file for its driver would copy
  // its communicator: a collective call, where each rank writes on its own).
  const DirectChunks direct_chunk = every_rank ? DirectChunks{} : direct_chunks(dataset, rank, path);
  const std::vector<hsize_t>& chunk = direct_chunk.shape;
  std::size_t split = 0;
  while (!chunk.empty() && split + 1 < rank && chunk[split] == 1) ++split;
  bool direct = !chunk.empty();
  for (std::size_t d = split + 1; direct && d < rank; ++d)
    direct = chunk[d] == dims[d] && start[d] == 0 && count[d] == dims[d];
  if (!direct) return write_hyperslab(dataset, start, count, data, path, what);

  hsize_t inner = 1, outer = 1;
  for (std::size_t d = split + 1; d < rank; ++d) inner *= count[d];
  for (std::size_t d = 0; d < split; ++d) outer *= count[d];
  const hsize_t c = chunk[split], a = start[split], b = a + count[split];
  const hsize_t whole_end = dims[split] / c * c;  // chunks from here on are partial edge chunks
  const hsize_t first = std::min(b, (a + c - 1) / c * c);
  const hsize_t last = std::max(first, std::min(b, whole_end) / c * c);
  // Whole chunks to store: where, and their values. Compressed chunks are gathered from the whole
  // block first, so that they are encoded together, on every core.
  std::vector<std::vector<hsize_t>> chunk_at;
  std::vector<const float*> chunk_values;
  std::vector<std::vector<float>> padded;  // edge chunks, zero-padded copies
  const auto store = [&] {
    if (chunk_at.empty()) return;
    std::vector<std::vector<unsigned char>> encoded;
    if (direct_chunk.filters) encoded = encode_chunks(chunk_values, c * inner, *direct_chunk.filters);
    for (std::size_t k = 0; k < chunk_at.size(); ++k) {
      const void* bytes = encoded.empty() ? static_cast<const void*>(chunk_values[k]) : encoded[k].data();
      const std::size_t size = encoded.empty() ? c * inner * sizeof(float) : encoded[k].size();
      check(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, chunk_at[k].data(), size, bytes), path, what);
    }
    chunk_at.clear();
    chunk_values.clear();
    padded.clear();
  };
  std::vector<hsize_t> at(start), piece(count);
  for (hsize_t o = 0; o < outer; ++o) {
    hsize_t rest = o;  // o as an index over the leading dimensions
    for (std::size_t d = split; d-- > 0;) {
      at[d] = start[d] + rest % count[d];
      piece[d] = 1;
      rest /= count[d];
    }
    const float* row = data + o * count[split] * inner;
    auto through_cache = [&](hsize_t from, hsize_t to) {
      if (from >= to) return;
      at[split] = from;
      piece[split] = to - from;
      write_hyperslab(dataset, at, piece, row + (from - a) * inner, path, what);
    };
    auto direct_write = [&](hsize_t z, const float* values) {
      at[split] = z;
      chunk_at.push_back(at);
      chunk_values.push_back(values);
      if (!direct_chunk.filters) store();  // stored as they lie: nothing to gather
    };
    through_cache(a, first);
    for (hsize_t z = first; z < last; z += c) direct_write(z, row + (z - a) * inner);
    if (a <= last && last == whole_end && b == dims[split] && last < b) {
      padded.push_back(padded_edge_chunk(row + (last - a) * inner, (b - last) * inner, c * inner));
      direct_write(last, padded.back().data());
    } else {
      through_cache(last, b);
    }
  }
  store();
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
  if (data) check(H5Dwrite(ds.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), path, what);
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

namespace {

void write_selection(const Dataset& dataset, const MapSelection& s, hid_t memory_type,
                     const void* data, const Path& path, const std::string& what) {
  check(H5Dwrite(dataset.get(), memory_type, s.memory_space.get(), s.file_space.get(), H5P_DEFAULT,
                 data),
        path, what);
}

}  // namespace

void write_rows(const Dataset& dataset, std::size_t first, std::size_t rows, hid_t memory_type,
                const void* data, const Path& path) {
  const RowRun run{first, rows};
  write_selection(dataset, select_rows(dataset.get(), {&run, 1}, path), memory_type, data, path,
                  "write rows " + std::to_string(first) + " to " + std::to_string(first + rows));
}

void write_rows(const Dataset& dataset, std::span<const std::size_t> rows, hid_t memory_type,
                const void* data, const Path& path) {
  if (rows.empty()) return;
  std::vector<RowRun> runs;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i > 0 && rows[i] <= rows[i - 1])
      throw Error(path.string() + ": rows to write must ascend (" + std::to_string(rows[i - 1]) +
                  " then " + std::to_string(rows[i]) + ")");
    if (runs.empty() || rows[i] != runs.back().first + runs.back().count) runs.push_back({rows[i], 0});
    ++runs.back().count;
  }
  write_selection(dataset, select_rows(dataset.get(), runs, path), memory_type, data, path,
                  "write " + std::to_string(rows.size()) + " rows from " + std::to_string(rows.front()));
}

void read_rows(const Dataset& dataset, std::size_t first, std::size_t rows, hid_t memory_type,
               void* out, const Path& path) {
  const RowRun run{first, rows};
  MapSelection s = select_rows(dataset.get(), {&run, 1}, path);
  check(H5Dread(dataset.get(), memory_type, s.memory_space.get(), s.file_space.get(), H5P_DEFAULT,
                out),
        path, "read rows " + std::to_string(first) + " to " + std::to_string(first + rows));
}

void write_scalar(const Dataset& dataset, hid_t memory_type, const void* data, const Path& path) {
  check(H5Dwrite(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), path,
        "write a scalar");
}

void check_column(const Dataset& dataset, std::size_t n, const Path& path) {
  if (element_count(dataset.get(), path) != n)
    fail(path, "a table column holds " + std::to_string(element_count(dataset.get(), path)) +
                   " values, expected " + std::to_string(n));
  check_storage(dataset.get(), path);
}

void read_column(const Dataset& dataset, std::size_t n, hid_t memory_type, void* out,
                 const Path& path) {
  check_column(dataset, n, path);
  check(H5Dread(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), path,
        "read a table column");
}

void check_fits_in_file(hid_t dataset, std::size_t n, std::size_t bytes_each, const Path& path) {
  Handle file = checked_handle(H5Iget_file_id(dataset), H5Fclose, path, "get the file's size");
  hsize_t file_size = 0;
  check(H5Fget_filesize(file.get(), &file_size), path, "get the file's size");
  if (bytes_each != 0 && n > file_size / bytes_each)
    fail(path, "a dataset claims " + std::to_string(n) + " values of " + std::to_string(bytes_each) +
                   " bytes, more than the file's " + std::to_string(file_size) + " bytes");
}

Handle fixed_string_type(std::size_t size, const Path& path) {
  const std::string what = "make a string type";
  Handle type = checked_handle(H5Tcopy(H5T_C_S1), H5Tclose, path, what);
  check(H5Tset_size(type.get(), size), path, what);
  check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), path, what);
  return type;
}

Handle status_type(const Path& path) {
  Handle type = checked_handle(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose, path, "make the status type");
  const std::pair<const char*, FrameState> states[] = {{"pending", FrameState::pending},
                                                       {"complete", FrameState::complete},
                                                       {"failed", FrameState::failed},
                                                       {"missing", FrameState::missing}};
  for (const auto& [name, state] : states) {
    const std::int8_t value = std::int8_t(state);
    check(H5Tenum_insert(type.get(), name, &value), path, "make the status type");
  }
  return type;
}

std::vector<std::int8_t> read_status(hid_t file, std::size_t frames, const Path& path) {
  std::vector<std::int8_t> status(frames);
  read_column(open_dataset(file, names::status, path), frames, status_type(path).get(),
              status.data(), path);
  return status;
}

}  // namespace dcsgrid::io::hdf5
