// Writing and reading potential maps: HDF5 (+ XDMF sidecar), OpenDX, CCP4/MRC.
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/map_metadata.hpp"

namespace dcsgrid::io {

enum class MapFormat { hdf5, dx, ccp4 };
// .h5/.hdf5 -> hdf5, .dx -> dx, .ccp4/.map/.mrc -> ccp4. Throws Error for anything else.
MapFormat map_format_from_path(const std::filesystem::path& path);

struct WriteOptions {
  bool compress = false;  // HDF5: shuffle + deflate
  int compression_level = 4;
};

// Streams planes into an HDF5 file: dataset /potential, float32, [nz][ny][nx], chunked, with the
// grid and metadata as attributes, and an XDMF sidecar (same stem, .xmf). Slabs arrive in any
// order; the file appears under its name only at finish().
class Hdf5MapWriter {
 public:
  Hdf5MapWriter(const std::filesystem::path& path, const GridSpec& grid, const MapMetadata& meta,
                const WriteOptions& options = {});
  ~Hdf5MapWriter();
  Hdf5MapWriter(const Hdf5MapWriter&) = delete;
  Hdf5MapWriter& operator=(const Hdf5MapWriter&) = delete;
  // planes [z_begin, z_begin+planes) of the grid, x fastest.
  void write_planes(std::int64_t z_begin, std::int64_t planes, const float* data);
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whole-grid writers, each atomic (temporary name, then rename).
void write_hdf5(const std::filesystem::path& path, const GridSpec& grid, const float* data,
                const MapMetadata& meta, const WriteOptions& options = {});
void write_dx(const std::filesystem::path& path, const GridSpec& grid, const float* data,
              const MapMetadata& meta);
void write_ccp4(const std::filesystem::path& path, const GridSpec& grid, const float* data,
                const MapMetadata& meta);
// By extension.
void write_map(const std::filesystem::path& path, const GridSpec& grid, const float* data,
               const MapMetadata& meta, const WriteOptions& options = {});

struct MapFile {
  GridSpec grid;
  MapMetadata meta;
  std::vector<float> data;  // x fastest
};
// Reads a map written by write_hdf5/Hdf5MapWriter (attributes included). Throws Error naming the
// file on anything missing or inconsistent.
MapFile read_hdf5(const std::filesystem::path& path);
// Reads an OpenDX map (the subset APBS, VMD and we write).
MapFile read_dx(const std::filesystem::path& path);

// Hex SHA-256 of a file's bytes (provenance attribute).
std::string sha256_file(const std::filesystem::path& path);

}  // namespace dcsgrid::io
