// Writing and reading potential maps: HDF5 (+ XDMF sidecar), OpenDX (plain or gzipped),
// CCP4/MRC, Gaussian cube; one registry of formats by file name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/maps/metadata.hpp"

namespace dcsgrid::io {

struct MapFile;
struct MapSelector;
struct WriteOptions;
class MapStreamWriter;

// One row of the map-format registry: everything the program knows of a format. A new format is
// one row of the table in src/io/maps/registry.cpp and one file src/io/maps/<format>.cpp with
// its reader and writer (declared below, as the others are); nothing else names formats. Every
// format stores the map's units, so the row has no column for them.
struct MapFormatInfo {
  const char* name;        // "OpenDX", for messages
  const char* extensions;  // ".ccp4/.mrc/.map": the name endings it is chosen by (any case),
                           // '/'-separated as help texts list them
  // What it can carry.
  bool several_maps;       // named datasets and batch frames (FILE:DATASET, FILE#FRAME), so a run's
                           // several methods and a batch's --std
  bool compression;        // honours WriteOptions::compress
  bool pymol_opens, chimerax_opens;  // the viewers' scripts load it (io/viewer_scripts)
  // The least bytes a value takes in the file (least_map_bytes): 0 when nothing is certain.
  unsigned least_value_bytes;
  // A map of the file (selector: the default unless several_maps; read_map checks it).
  MapFile (*read)(const std::filesystem::path& path, const MapSelector& selector);
  // A whole map, atomically; returns a warning for the log, empty when there is none.
  std::string (*write)(const std::filesystem::path& path, const GridSpec& grid, const float* data,
                       const MapMetadata& meta, const WriteOptions& options);
  // Null: a run holds the map whole in memory and calls write at the end; else the run streams
  // its slabs into the writer this opens (arguments as Hdf5MapWriter's).
  std::unique_ptr<MapStreamWriter> (*open_stream)(const std::filesystem::path& path,
                                                  const GridSpec& grid, const MapMetadata& meta,
                                                  const WriteOptions& options, bool every_rank);
  // A file written beside the map (null: none), and the check that an existing one may be
  // replaced (Error otherwise), made before any work.
  std::filesystem::path (*sidecar)(const std::filesystem::path& map);
  void (*require_replaceable_sidecar)(const std::filesystem::path& map);
};
// A map format: a row of the registry, never null; compared by identity.
using MapFormat = const MapFormatInfo*;
// Every format, in the order help texts list them.
std::span<const MapFormatInfo> map_formats();
// The one place a map file name is parsed (case-insensitive), by the longest of the formats'
// extensions it ends with: .h5/.hdf5 -> HDF5, .dx -> OpenDX, .dx.gz -> OpenDX gzipped,
// .ccp4/.mrc/.map -> CCP4, .cube -> cube. Throws Error naming the file and listing the formats for
// anything else. Callers keep the result rather than parse again.
MapFormat map_format_from_path(const std::filesystem::path& path);
// "... .h5/.hdf5 (HDF5 + XDMF), .dx (OpenDX), ..." for help texts and messages.
std::string map_format_list();

struct WriteOptions {
  bool compress = false;  // HDF5: shuffle + deflate
  // Level 1: on potential maps it keeps 97% of level 4's saving at 1.13 times its speed
  // (docs/performance.md, bench_io_hdf5_write --map).
  int compression_level = 1;
  // The structure the map was computed from, for formats that store atoms beside the map
  // (Gaussian cube: one atom record each, atomic number 0 as elements are unknown here, the
  // partial charge in the nuclear-charge column). Not owned; null: no atoms. Ignored by the
  // other formats.
  const AtomSet* atoms = nullptr;
};

// Streams planes into an HDF5 file, laid out as follows (h5py: f["potential"][k, j, i]):
//   dataset /potential   float32, shape [nz][ny][nx] (x fastest), chunked by whole x rows
//                        (io/hdf5_maps.hpp map_chunk), shuffle + deflate when options.compress
//   its attributes       origin, spacing (3 doubles each, x,y,z order, Å), dims (3 int64, nx,ny,nz),
//                        axis_order ("x fastest; dataset [nz][ny][nx]"), long_name, then every
//                        MapMetadata field under its own name (strings: variable-length UTF-8;
//                        atom_count: int64; the rest double; units among them) and each method
//                        parameter as the string attribute "parameter:<name>".
//   datasets /x, /y, /z  float64 point positions (Å), HDF5 dimension scales attached to
//                        /potential's dimensions (netCDF-4 / CF coordinates: xarray with h5netcdf
//                        opens a labelled array); root attribute Conventions = "CF-1.8".
// and an XDMF 2 sidecar <stem>.xmf (3DCoRectMesh, ORIGIN_DXDYDZ, Node attribute "potential" ->
// <file>.h5:/potential, relative) that ParaView and VisIt open directly.
// Slabs arrive in any order; the file and sidecar appear under their names only at finish(), which
// fails if a plane was never written. Destroyed without finish(), nothing is left on disk.
// Errors are dcsgrid::Error naming the file and the failed step. Calls into HDF5 are serialised
// (hdf5::library_mutex), so writers may be used from different threads.
//
// every_rank (builds with MPI, under mpirun): every rank of the job makes the same calls with the
// same arguments, and the one file is written through parallel HDF5 (MPI-IO). write_planes is
// then called in rounds by every rank, each with its own planes or none (planes = 0): a collective
// write where compressed, else each rank's independent write into storage allocated at creation.
// Rank 0 names the temporary (which every rank removes on a signal), writes the sidecar and, in
// publish() (collective too), renames both; share_written_planes() lets a rank read back planes
// that other ranks wrote. A rank destroying the writer before finish() (an error) removes the
// temporary and leaves the file's collective close undone, the job then being ended by MPI_Abort.
// The XDMF sidecar written beside an HDF5 map: <stem>.xmf in the same folder.
std::filesystem::path xdmf_sidecar(const std::filesystem::path& h5);
// Throws Error when the sidecar of `h5` exists and is not ours to replace: only an XDMF text that
// describes `h5` (an earlier run's sidecar of the same map) is replaced; anything else there (an
// input copied to that name, another map's sidecar, a folder) is kept and the run refused.
void require_replaceable_sidecar(const std::filesystem::path& h5);

// A map file written slab by slab as a run computes it, never whole in memory (a format's
// open_stream): several maps on one grid, planes in any order, the files appearing under their
// names only at publish().
class MapStreamWriter {
 public:
  virtual ~MapStreamWriter() = default;
  // A further map on the same grid (e.g. /potential_cutoff beside the direct /potential), with
  // its own metadata. Returns its number for write_planes; the first map is number 0.
  virtual std::size_t add_stream(const std::string& name, const MapMetadata& meta) = 0;
  // Planes [z_begin, z_begin+planes) of map number `map`, x fastest.
  virtual void write_planes(std::size_t map, std::int64_t z_begin, std::int64_t planes,
                            const float* data) = 0;
  // Collective under every_rank (else nothing to do): the planes every rank wrote are counted as
  // written and reach the file, where any rank's read_planes finds them.
  virtual void share_written_planes() = 0;
  // Reads back planes already written (a slab-by-slab comparison of two maps of one run).
  virtual void read_planes(std::size_t map, std::int64_t z_begin, std::int64_t planes, float* out) = 0;
  // A string attribute of the whole file (e.g. a JSON report).
  virtual void add_root_attribute(const std::string& name, const std::string& value) = 0;
  // A text attribute of map number `map` (one of its metadata fields, such as input_sha256),
  // replacing the value it was created with.
  virtual void replace_map_attribute(std::size_t map, const std::string& name, const std::string& value) = 0;
  // Completes the files under their temporary names; publish() then renames them into place, so
  // that several outputs of one run can appear together.
  virtual void finish_unpublished() = 0;
  virtual void publish() = 0;
};

class Hdf5MapWriter final : public MapStreamWriter {
 public:
  Hdf5MapWriter(const std::filesystem::path& path, const GridSpec& grid, const MapMetadata& meta,
                const WriteOptions& options = {}, bool every_rank = false);
  ~Hdf5MapWriter() override;
  Hdf5MapWriter(const Hdf5MapWriter&) = delete;
  Hdf5MapWriter& operator=(const Hdf5MapWriter&) = delete;
  // As dataset /<name> with its own metadata attributes; /potential is number 0.
  std::size_t add_stream(const std::string& name, const MapMetadata& meta) override;
  // Planes [z_begin, z_begin+planes) of /potential, x fastest.
  void write_planes(std::int64_t z_begin, std::int64_t planes, const float* data) {
    write_planes(0, z_begin, planes, data);
  }
  void write_planes(std::size_t map, std::int64_t z_begin, std::int64_t planes, const float* data) override;
  void share_written_planes() override;
  void read_planes(std::size_t map, std::int64_t z_begin, std::int64_t planes, float* out) override;
  // On the file's root group.
  void add_root_attribute(const std::string& name, const std::string& value) override;
  void replace_map_attribute(std::size_t map, const std::string& name, const std::string& value) override;
  // finish_unpublished() then publish().
  void finish();
  void finish_unpublished() override;
  void publish() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whole-grid writers, each atomic (temporary name in the target folder, then rename).
void write_hdf5(const std::filesystem::path& path, const GridSpec& grid, const float* data,
                const MapMetadata& meta, const WriteOptions& options = {});
// OpenDX as APBS writes it (VMD, PyMOL, ChimeraX read it): "# name: value" comments with units and
// provenance (the HDF5 attribute names; values on one line, cut at 1000 characters),
// gridpositions counts nx ny nz, origin, three axis-aligned deltas, gridconnections, one double array of nx*ny*nz values listed with x SLOWEST and z fastest
// (the transpose of our layout), three a line, each the shortest text that reads back as the same
// float32.
void write_dx(const std::filesystem::path& path, const GridSpec& grid, const float* data,
              const MapMetadata& meta);
// CCP4/MRC-2014, mode 2 (float32), MAPC/MAPR/MAPS = 1,2,3 (x fastest, as in memory). A non-periodic
// map: the "unit cell" is dims*spacing sampled by MX,MY,MZ = nx,ny,nz, so point i sits at
// (NXSTART + i)*spacing. The convention CCP4 programs, gemmi, PyMOL and GridDataFormats share:
// when the origin lies on that lattice (origin/spacing integral within 1e-6 relative), NXSTART..
// = origin/spacing and the MRC-2014 ORIGIN words (50-52) are zero (readers that add both would
// otherwise count the origin twice). Off the lattice, NXSTART.. = 0 and ORIGIN holds the origin in
// Å: ChimeraX, VMD, mrcfile and our reader place it exactly, gemmi and PyMOL's ccp4 loader ignore
// ORIGIN; the returned text says so (empty when the origin is on the lattice). PyMOL places
// these maps right only with `set normalize_ccp4_maps, 0` before loading (it also rescales the
// values otherwise); .dx avoids both. Two labels name the program, units, method and input.
std::string write_ccp4(const std::filesystem::path& path, const GridSpec& grid, const float* data,
                       const MapMetadata& meta);
// Gaussian cube (3Dmol.js, VMD, Jmol, ASE): two comment lines (units, provenance), the atom count
// and origin, then nx, ny, nz each with its step vector, lengths in Bohr (0.529177210903 Å);
// options.atoms as atom records; values with x slowest and z fastest, six a line, each the
// shortest text that reads back as the same float32. Values stay in the map's units (the comment
// names them), not atomic units.
void write_cube(const std::filesystem::path& path, const GridSpec& grid, const float* data,
                const MapMetadata& meta, const WriteOptions& options = {});
// OpenDX compressed with gzip as APBS writes .dx.gz (write_dx's text).
void write_dx_gz(const std::filesystem::path& path, const GridSpec& grid, const float* data,
                 const MapMetadata& meta);
// By format (parsed once by the caller) or by extension. Returns a warning for the log, empty
// when there is none (write_ccp4 off the lattice).
std::string write_map(const std::filesystem::path& path, MapFormat format, const GridSpec& grid,
                      const float* data, const MapMetadata& meta, const WriteOptions& options = {});
std::string write_map(const std::filesystem::path& path, const GridSpec& grid, const float* data,
                      const MapMetadata& meta, const WriteOptions& options = {});

struct MapFile {
  GridSpec grid;
  MapMetadata meta;
  std::vector<float> data;  // x fastest
};

// Which map of a file: an HDF5 dataset other than /potential (Hdf5MapWriter::add_stream), and for a
// batch file (4-D /potential) a frame. Only HDF5 files hold several maps.
struct MapSelector {
  std::string dataset = "potential";
  std::optional<std::size_t> frame;
};
// A map argument as commands take it: "FILE", "FILE:DATASET" (HDF5), "FILE#FRAME" (a batch file's
// frame, from 0). A name that exists as a file is taken whole, so files whose names hold ':' or
// '#' still open.
struct MapArgument {
  std::filesystem::path path;
  MapSelector selector;
};
MapArgument parse_map_argument(const std::string& text);

// Reads a map written by write_hdf5/Hdf5MapWriter (attributes included): /potential, or another
// dataset written the same way (Hdf5MapWriter::add_stream). Throws InputError naming the file on a
// missing dataset or attribute, or a dataset shape that disagrees with dims.
MapFile read_hdf5(const std::filesystem::path& path, const std::string& dataset = "potential");
// The map a selector names: read_hdf5 of its dataset, or read_hdf5_frame of its frame.
MapFile read_hdf5(const std::filesystem::path& path, const MapSelector& selector);
// One frame of a batch file (4-D /potential, /frames/status): InputError naming the file and frame
// when the frame does not exist or is not complete.
MapFile read_hdf5_frame(const std::filesystem::path& path, std::size_t frame);
// Reads an OpenDX map, plain or gzipped (the subset APBS, VMD and we write; axis-aligned grids,
// data in the file). "# name: value" comments with MapMetadata's field names fill meta; other
// comments are ignored. Throws InputError (file, line, problem) on anything else, extra values
// and anything after the data but the field trailer included.
MapFile read_dx(const std::filesystem::path& path);
// CCP4/MRC, modes 0, 1, 2, 6, any axis order, orthogonal cells (mode 2 is read exactly). Spacing
// = cell / sampling (MX, MY, MZ); origin = the ORIGIN words when any is non-zero (MRC-2014,
// ChimeraX's rule), else NXSTART.. times the spacing. meta.units from the first label where
// dcsgrid wrote the file, else empty (the format has no units field); the other fields keep
// their defaults. InputError naming the file on a bad header, a non-orthogonal cell or a file
// whose size disagrees with its header (checked before anything is allocated).
MapFile read_ccp4(const std::filesystem::path& path);
// Gaussian cube with one value per point (not orbital sets), lengths in Bohr (or Å when a count is
// negative, as the format allows). Atoms are skipped. meta.units from our own comment line,
// else empty. InputError (file, line, problem) on anything malformed or extra.
MapFile read_cube(const std::filesystem::path& path);
// Any format, by extension (or by the format parsed once). Only HDF5 honours a selector other
// than the default; other formats refuse one (InputError).
MapFile read_map(const std::filesystem::path& path, const MapSelector& selector = {});
MapFile read_map(const std::filesystem::path& path, MapFormat format, const MapSelector& selector);
MapFile read_map(const MapArgument& argument);

}  // namespace dcsgrid::io
