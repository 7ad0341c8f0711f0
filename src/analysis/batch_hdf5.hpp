// Internal to the analysis layer: the HDF5 pieces of batch and analysis files, on top of
// io/hdf5_util.hpp. Callers hold io::hdf5::library_mutex(). `path` names the file in errors.
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/hdf5_util.hpp"
#include "dcsgrid/io/map_metadata.hpp"

namespace dcsgrid::analysis::h5 {

using Dataset = io::hdf5::Handle;
using Path = std::filesystem::path;

// Dataset names (relative to the file's root).
namespace names {
inline constexpr const char* potential = "potential";
inline constexpr const char* status = "frames/status";
inline constexpr const char* stats = "analysis/stats";
inline constexpr const char* histogram = "analysis/histogram";
inline constexpr const char* edges = "analysis/histogram_edges";
}  // namespace names

// Opens an existing HDF5 file (InputError when missing or not HDF5).
io::hdf5::Handle open_file(const Path& path, bool writable);
bool exists(hid_t location, const char* name, const Path& path);
Dataset open_dataset(hid_t location, const char* name, const Path& path);
void create_group(hid_t location, const char* name, const Path& path);
int rank(hid_t dataset, const Path& path);
std::vector<hsize_t> shape(hid_t dataset, const Path& path);

// A float32 map dataset [leading...][nz][ny][nx] (leading: {} or {frames}), chunked by a few
// planes of one map, storage allocated now, never filled (unwritten maps are undefined).
Dataset create_map_dataset(hid_t location, const char* name, const std::vector<hsize_t>& leading,
                           const GridSpec& grid, const Path& path);
// The attributes single-map files carry (origin, spacing, dims, axis_order, metadata fields,
// "parameter:" method parameters), as io's HDF5 map writer names them.
void write_map_attributes(hid_t dataset, const GridSpec& grid, const io::MapMetadata& meta,
                          const std::string& axis_order, const Path& path);
void read_map_attributes(hid_t dataset, GridSpec& grid, io::MapMetadata& meta, const Path& path);
// InputError unless the dataset is [frames][nz][ny][nx] (or [nz][ny][nx] without frames).
void check_map_shape(hid_t dataset, const GridSpec& grid, std::optional<std::size_t> frames,
                     const Path& path);
// One map: frame `frame` of a 4-D dataset, or the whole 3-D one.
void write_map(hid_t dataset, std::optional<std::size_t> frame, const GridSpec& grid,
               const float* data, const Path& path);
void read_map(hid_t dataset, std::optional<std::size_t> frame, const GridSpec& grid, float* out,
              const Path& path);

// Small datasets (dims {} = scalar), contiguous, storage allocated now and filled with data.
Dataset create_column(hid_t location, const char* name, const std::vector<hsize_t>& dims,
                      hid_t file_type, hid_t memory_type, const void* data, const Path& path);
// A 1-D fixed-length string dataset (size bytes each, zero padded; longer texts are cut).
Dataset create_string_column(hid_t location, const char* name, const std::vector<std::string>& texts,
                             std::size_t size, const Path& path);
// Row i of a 1-D or 2-D dataset (one element, or one row of the second dimension).
void write_row(const Dataset& dataset, std::size_t i, hid_t memory_type, const void* data,
               const Path& path);
void write_string_element(const Dataset& dataset, std::size_t i, const std::string& text,
                          const Path& path);
void write_scalar(const Dataset& dataset, hid_t memory_type, const void* data, const Path& path);
// Whole datasets of n elements (InputError on another size).
void read_column(const Dataset& dataset, std::size_t n, hid_t memory_type, void* out,
                 const Path& path);
std::vector<std::string> read_string_column(const Dataset& dataset, std::size_t n, const Path& path);

// The /frames/status enum type (pending, complete, failed as FrameStatus).
io::hdf5::Handle status_type(const Path& path);
// The status of every frame of a 4-D /potential.
std::vector<std::int8_t> read_status(hid_t file, std::size_t frames, const Path& path);

// /analysis/stats [frames][6] (min max mean std count non_finite), /analysis/histogram
// [frames][bins+2], /analysis/histogram_edges [frames][bins+1], rows NaN/0 until written. The
// /analysis group must exist.
void create_stats_datasets(hid_t file, std::size_t frames, std::size_t bins, const std::string& units,
                           const Path& path);
void write_stats_row(hid_t file, std::size_t frame, const MapStats& stats, std::size_t bins,
                     const Path& path);
// Every row (frames × bins from the datasets' shapes).
std::vector<MapStats> read_stats_rows(hid_t file, const Path& path);

}  // namespace dcsgrid::analysis::h5
