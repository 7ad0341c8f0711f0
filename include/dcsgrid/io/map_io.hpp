// Writing and reading potential maps: HDF5 (+ XDMF sidecar), OpenDX, CCP4/MRC.
#pragma once
#include <cstdint>
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

// Streams planes into an HDF5 file, laid out as follows (h5py: f["potential"][k, j, i]):
//   dataset /potential   float32, shape [nz][ny][nx] (x fastest), chunked by whole x rows,
//                        shuffle + deflate when options.compress
//   its attributes       origin, spacing (3 doubles each, x,y,z order, Å), dims (3 int64, nx,ny,nz),
//                        axis_order ("x fastest; dataset [nz][ny][nx]"), then every MapMetadata
//                        field under its own name (strings: variable-length UTF-8; atom_count:
//                        int64; the rest double) and each method parameter as the string attribute
//                        "parameter:<name>".
// and an XDMF 2 sidecar <stem>.xmf (3DCoRectMesh, ORIGIN_DXDYDZ, Node attribute "potential" ->
// <file>.h5:/potential, relative) that ParaView and VisIt open directly.
// Slabs arrive in any order; the file and sidecar appear under their names only at finish(), which
// fails if a plane was never written. Destroyed without finish(), nothing is left on disk.
// Errors are dcsgrid::Error naming the file and the failed step. Calls into HDF5 are serialised
// (hdf5::library_mutex), so writers may be used from different threads.
class Hdf5MapWriter {
 public:
  Hdf5MapWriter(const std::filesystem::path& path, const GridSpec& grid, const MapMetadata& meta,
                const WriteOptions& options = {});
  ~Hdf5MapWriter();
  Hdf5MapWriter(const Hdf5MapWriter&) = delete;
  Hdf5MapWriter& operator=(const Hdf5MapWriter&) = delete;
  // A further map on the same grid, streamed like the first, as dataset /<name> with its own
  // metadata attributes (e.g. /potential_cutoff beside the direct /potential). Returns its number
  // for write_planes; /potential is number 0.
  std::size_t add_stream(const std::string& name, const MapMetadata& meta);
  // Planes [z_begin, z_begin+planes) of /potential, x fastest.
  void write_planes(std::int64_t z_begin, std::int64_t planes, const float* data) {
    write_planes(0, z_begin, planes, data);
  }
  // The same for map number `map`.
  void write_planes(std::size_t map, std::int64_t z_begin, std::int64_t planes, const float* data);
  // Reads back planes already written (a slab-by-slab comparison of two maps of one run).
  void read_planes(std::size_t map, std::int64_t z_begin, std::int64_t planes, float* out);
  // A string attribute on the file's root group (e.g. a JSON report).
  void add_root_attribute(const std::string& name, const std::string& value);
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whole-grid writers, each atomic (temporary name in the target folder, then rename).
void write_hdf5(const std::filesystem::path& path, const GridSpec& grid, const float* data,
                const MapMetadata& meta, const WriteOptions& options = {});
// OpenDX as APBS writes it (VMD, PyMOL, ChimeraX read it): "# name: value" comments with units and
// provenance (the HDF5 attribute names; values on one line, cut at 1000 characters), gridpositions counts nx ny nz, origin, three axis-aligned
// deltas, gridconnections, one double array of nx*ny*nz values listed with x SLOWEST and z fastest
// (the transpose of our layout), three a line, each the shortest text that reads back as the same
// float32.
void write_dx(const std::filesystem::path& path, const GridSpec& grid, const float* data,
              const MapMetadata& meta);
// CCP4/MRC-2014, mode 2 (float32), MAPC/MAPR/MAPS = 1,2,3 (x fastest, as in memory). A non-periodic
// map: the "unit cell" is dims*spacing sampled by MX,MY,MZ = nx,ny,nz, so point i sits at
// (NXSTART + i)*spacing. NXSTART.. = round(origin/spacing) when the origin lies on that lattice
// (else 0), and the MRC-2014 ORIGIN words (50-52) always hold the origin in Å, so viewers that
// use either place the map alike (off the lattice, only those reading ORIGIN place it exactly). Two labels name the program, units, method and input.
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
// Reads a map written by write_hdf5/Hdf5MapWriter (attributes included): /potential, or another
// dataset written the same way (Hdf5MapWriter::add_stream). Throws InputError naming the file on a
// missing dataset or attribute, or a dataset shape that disagrees with dims.
MapFile read_hdf5(const std::filesystem::path& path, const std::string& dataset = "potential");
// Reads an OpenDX map (the subset APBS, VMD and we write; axis-aligned grids, data in the file).
// "# name: value" comments with MapMetadata's field names fill meta; other comments are ignored.
// Throws InputError (file, line, problem) on anything else.
MapFile read_dx(const std::filesystem::path& path);

// Hex SHA-256 of a file's bytes (provenance attribute).
std::string sha256_file(const std::filesystem::path& path);

}  // namespace dcsgrid::io
