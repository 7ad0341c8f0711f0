// The HDF5 layout of map files, shared by single maps (io::Hdf5MapWriter, read_hdf5) and batch
// files (analysis::BatchFile): map datasets [leading...][nz][ny][nx] with the grid and metadata
// attributes, netCDF-4 dimension scales x, y, z (and frame), small table datasets, and the frame
// status column of batch files. Callers hold library_mutex(); `path` names the file in errors.
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/hdf5/open.hpp"
#include "dcsgrid/io/hdf5/util.hpp"
#include "dcsgrid/io/maps/metadata.hpp"

namespace dcsgrid::io::hdf5 {

using Dataset = Handle;
using Path = std::filesystem::path;

// Dataset names (relative to the file's root).
namespace names {
inline constexpr const char* potential = "potential";
inline constexpr const char* status = "frames/status";
inline constexpr const char* frame = "frame";  // batch files: the frame dimension's scale
}  // namespace names

// The axis_order attribute of single maps and of batch files' /potential.
inline constexpr const char* kMapAxisOrder = "x fastest; dataset [nz][ny][nx]";
inline constexpr const char* kBatchAxisOrder = "x fastest; dataset [frame][nz][ny][nx]";

bool exists(hid_t location, const char* name, const Path& path);
Dataset open_dataset(hid_t location, const char* name, const Path& path);
void create_group(hid_t location, const char* name, const Path& path);
int rank(hid_t dataset, const Path& path);
std::vector<hsize_t> shape(hid_t dataset, const Path& path);

// Chunks of whole x rows of one map, at most about 1 MiB: several planes (or, for planes over
// 1 MiB, rows of one plane), split so that the last chunk pads the map by at most 2%; 1 along
// leading dimensions.
std::vector<hsize_t> map_chunk(const std::vector<hsize_t>& leading, const GridSpec& grid);
// A float32 map dataset [leading...][nz][ny][nx] (leading: {} or {frames}), chunked by
// map_chunk. allocate_early: storage allocated now and never filled (batch files: afterwards only
// raw data are written). compress_level >= 0: shuffle + deflate at that level.
Dataset create_map_dataset(hid_t location, const char* name, const std::vector<hsize_t>& leading,
                           const GridSpec& grid, const Path& path, bool allocate_early = true,
                           int compress_level = -1, hid_t access = H5P_DEFAULT);
// A float32 map dataset [frames][nz][ny][nx] that is an HDF5 virtual dataset: frames
// [first_frame, first_frame + frames) of it are the dataset `dataset` ([frames][nz][ny][nx]) of
// `file` (relative paths are found from the folder of the file holding the virtual dataset).
// Frames no source covers, or whose source file is missing, read as NaN.
struct VirtualSource {
  std::string file, dataset;
  std::size_t first_frame = 0, frames = 0;
};
Dataset create_virtual_map_dataset(hid_t location, const char* name, std::size_t frames,
                                   const GridSpec& grid, const std::vector<VirtualSource>& sources,
                                   const Path& path);
// The attributes map datasets carry: origin, spacing (3 doubles, x,y,z, Å), dims (3 int64),
// axis_order, long_name, every MapMetadata field under its own name (units among them), and each
// method parameter as the string attribute "parameter:<name>".
void write_map_attributes(hid_t dataset, const GridSpec& grid, const MapMetadata& meta,
                          const std::string& axis_order, const Path& path);
void read_map_attributes(hid_t dataset, GridSpec& grid, MapMetadata& meta, const Path& path);
// netCDF-4 / CF coordinates: creates (once per file) the 1-D float64 datasets /x, /y, /z (point
// positions, Å, with units, long_name and axis attributes) and, for a batch (frames given),
// /frame (first_frame, first_frame + 1, ...: a shard's frames keep their numbers in the whole
// batch), as HDF5 dimension scales, and attaches them to dataset's dimensions, so
// netCDF readers (xarray with h5netcdf or netCDF4) see a labelled array with coordinates; the
// root group gets Conventions = "CF-1.8" with the first map.
void attach_coordinates(hid_t file, hid_t dataset, const GridSpec& grid,
                        std::optional<std::size_t> frames, const Path& path,
                        std::size_t first_frame = 0);
// A map dataset opened for reading: its grid and metadata from its attributes, and a batch's
// frame count.
struct OpenMap {
  Dataset dataset;
  GridSpec grid;
  MapMetadata meta;
  std::optional<std::size_t> frames;  // [frames][nz][ny][nx]; none for a map [nz][ny][nx]
};
// The one way a map dataset is opened: `name` of `file`, its attributes read and its shape
// checked against them. InputError naming the file when there is no such dataset, it is neither
// 3-D nor 4-D, an attribute is missing or the shape disagrees with dims.
OpenMap open_map(hid_t file, const char* name, const Path& path);
// InputError unless the dataset is float [frames][nz][ny][nx] (or [nz][ny][nx] without frames).
void check_map_shape(hid_t dataset, const GridSpec& grid, std::optional<std::size_t> frames,
                     const Path& path);
// The shape of a map dataset: [frames][nz][ny][nx], or [nz][ny][nx] without frames.
std::vector<hsize_t> map_dims(std::optional<std::size_t> frames, const GridSpec& grid);
// One map: frame `frame` of a 4-D dataset, or the whole 3-D one. every_rank: the file is open
// through MPI-IO by every rank (write_block).
void write_map(hid_t dataset, std::optional<std::size_t> frame, const GridSpec& grid,
               const float* data, const Path& path, bool every_rank);
// Writes the block [start, start + count) of a float32 dataset from data (row-major over count).
// The chunks it covers whole go to the file by HDF5's direct chunk write (as they lie in memory,
// or shuffled and deflated on every core when those are the dataset's filters), and the dataset's
// partial edge chunk when the block holds all of it, zero-padded, where the dataset is chunked as
// maps are, unless every_rank (a file open through MPI-IO, which has no direct chunk writes); the
// rest through H5Dwrite. `what` names the write in an error.
void write_block(hid_t dataset, const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                 const float* data, const Path& path, const std::string& what, bool every_rank);
void read_map(hid_t dataset, std::optional<std::size_t> frame, const GridSpec& grid, float* out,
              const Path& path);

// Small datasets (dims {} = scalar), contiguous, storage allocated now and filled with data (or,
// when data is null, zeros).
Dataset create_column(hid_t location, const char* name, const std::vector<hsize_t>& dims,
                      hid_t file_type, hid_t memory_type, const void* data, const Path& path);
// The fixed-length string type of the batch tables: size bytes, zero padded.
Handle fixed_string_type(std::size_t size, const Path& path);
// A 1-D fixed-length string dataset (size bytes each, zero padded; longer texts are cut).
Dataset create_string_column(hid_t location, const char* name, const std::vector<std::string>& texts,
                             std::size_t size, const Path& path);
// Rows [first, first + rows) of a 1-D or 2-D dataset, from or into a contiguous buffer.
void write_rows(const Dataset& dataset, std::size_t first, std::size_t rows, hid_t memory_type,
                const void* data, const Path& path);
void read_rows(const Dataset& dataset, std::size_t first, std::size_t rows, hid_t memory_type,
               void* out, const Path& path);
// Rows `rows` (ascending) of a 1-D or 2-D dataset from a buffer holding them in that order, in
// one H5Dwrite whatever their spacing (a batch writes a group of frames' rows so).
void write_rows(const Dataset& dataset, std::span<const std::size_t> rows, hid_t memory_type,
                const void* data, const Path& path);
void write_scalar(const Dataset& dataset, hid_t memory_type, const void* data, const Path& path);
// InputError when n values of bytes_each bytes could not fit in the file holding dataset: sizes
// read from a damaged file are checked before they size an allocation.
void check_fits_in_file(hid_t dataset, std::size_t n, std::size_t bytes_each, const Path& path);
// InputError unless the dataset holds n elements in storage that matches its shape (checked
// before reading a damaged file's column in blocks).
void check_column(const Dataset& dataset, std::size_t n, const Path& path);
// Whole datasets of n elements (InputError on another size).
void read_column(const Dataset& dataset, std::size_t n, hid_t memory_type, void* out,
                 const Path& path);

// /frames/status of batch files: enum int8 {pending = 0, complete = 1, failed = 2}.
enum class FrameState : std::int8_t { pending = 0, complete = 1, failed = 2, missing = 3 };
Handle status_type(const Path& path);
// The status of every frame of a 4-D /potential.
std::vector<std::int8_t> read_status(hid_t file, std::size_t frames, const Path& path);

}  // namespace dcsgrid::io::hdf5
