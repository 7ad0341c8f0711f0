// HDF5 maps: the streaming writer, its XDMF sidecar, and the reader.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <system_error>
#include <type_traits>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/files/space_reservation.hpp"
#include "dcsgrid/io/hdf5/maps.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/maps/reader.hpp"
#include "io/maps/output_file.hpp"

namespace dcsgrid::io {

namespace fs = std::filesystem;
using hdf5::checked_handle;
using hdf5::Handle;

namespace {

constexpr const char* kDataset = hdf5::names::potential;

std::string escape_xml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// The text every sidecar of `h5_name` holds: its datasets' references.
std::string xdmf_reference(const std::string& h5_name) { return ">" + escape_xml(h5_name) + ":/"; }

// Three numbers in z, y, x order, as XDMF wants for 3DCoRectMesh.
template <typename T>
std::string zyx(const std::array<T, 3>& v) {
  auto text = [](T x) {
    if constexpr (std::is_floating_point_v<T>) return shortest(x);
    else return std::to_string(x);
  };
  return text(v[2]) + " " + text(v[1]) + " " + text(v[0]);
}

// XDMF 2 description of the HDF5 map so ParaView and VisIt open it directly: one node attribute
// per dataset.
std::string xdmf_text(const GridSpec& grid, const std::string& h5_name, const MapMetadata& meta,
                      const std::vector<std::string>& datasets) {
  const std::string dims = zyx(grid.dims);
  std::string attributes;
  for (const auto& name : datasets)
    attributes += R"(      <Attribute Name=")" + escape_xml(name) +
                  R"(" AttributeType="Scalar" Center="Node">
        <DataItem Dimensions=")" + dims + R"(" NumberType="Float" Precision="4" Format="HDF")" +
                  xdmf_reference(h5_name) + escape_xml(name) + R"(</DataItem>
      </Attribute>
)";
  return R"(<?xml version="1.0" ?>
<!DOCTYPE Xdmf SYSTEM "Xdmf.dtd" []>
<Xdmf Version="2.0">
  <Domain>
    <Grid Name="potential" GridType="Uniform">
      <Information Name="units" Value=")" + escape_xml(meta.units) + R"("/>
      <Topology TopologyType="3DCoRectMesh" Dimensions=")" + dims + R"("/>
      <Geometry GeometryType="ORIGIN_DXDYDZ">
        <DataItem Name="Origin" Dimensions="3" NumberType="Float" Precision="8" Format="XML">)" +
         zyx(grid.origin) + R"(</DataItem>
        <DataItem Name="Spacing" Dimensions="3" NumberType="Float" Precision="8" Format="XML">)" +
         zyx(grid.spacing) + R"(</DataItem>
      </Geometry>
)" + attributes + R"(    </Grid>
  </Domain>
</Xdmf>
)";
}

// The deflate level when compressing, -1 for none.
int compression_level(const WriteOptions& options) {
  if (!options.compress) return -1;
  if (options.compression_level < 0) throw Error("compression level below 0");
  return options.compression_level;
}

// Dataset access: a chunk cache that holds the partly written chunks at a slab boundary until the
// next slab completes them (w0 = 1 evicts fully written chunks first).
Handle access_properties(const fs::path& file) {
  Handle plist = checked_handle(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, file, "set up the chunk cache");
  hdf5::check(H5Pset_chunk_cache(plist.get(), 521, std::size_t(32) << 20, 1.0), file,
              "set up the chunk cache");
  return plist;
}

// Data transfer of every rank at once (MPI-IO collective), which parallel HDF5 needs for filtered
// datasets.
Handle collective_transfer(const fs::path& file) {
  Handle plist = checked_handle(H5Pcreate(H5P_DATASET_XFER), H5Pclose, file, "set up a collective write");
#ifdef DCSGRID_HAVE_MPI
  hdf5::check(H5Pset_dxpl_mpio(plist.get(), H5FD_MPIO_COLLECTIVE), file, "set up a collective write");
#endif
  return plist;
}

#ifdef DCSGRID_HAVE_MPI
int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Rank 0's text, on every rank.
std::string text_of_rank_0(std::string text) {
  unsigned long long size = text.size();
  MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  text.resize(size);
  MPI_Bcast(text.data(), int(size), MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}
#else
int world_rank() { return 0; }
std::string text_of_rank_0(std::string text) { return text; }
#endif

}  // namespace

fs::path xdmf_sidecar(const fs::path& h5) { return fs::path(h5).replace_extension(".xmf"); }

void require_replaceable_sidecar(const fs::path& h5) {
  const fs::path sidecar = xdmf_sidecar(h5);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(sidecar, ec))) return;
  // Our sidecars are a few kB; the head is enough to tell.
  std::string head(64 << 10, '\0');
  std::ifstream in(sidecar, std::ios::binary);
  in.read(head.data(), std::streamsize(head.size()));
  head.resize(std::size_t(std::max<std::streamsize>(in.gcount(), 0)));
  const bool ours = fs::is_regular_file(sidecar, ec) && head.starts_with("<?xml") &&
                    head.find("<Xdmf") != std::string::npos &&
                    head.find(xdmf_reference(h5.filename().string())) != std::string::npos;
  if (!ours)
    throw Error(sidecar.string() + " exists and is not the XDMF sidecar of " + h5.string() +
                ", which writing " + h5.string() + " would replace: move it away, or choose "
                "another output name");
}

// One dataset the writer streams planes into.
struct Stream {
  std::string name;
  Handle dataset;
  std::vector<std::uint8_t> plane_written;  // 0 or 1 a plane (bytes, for MPI's reductions)
};

struct Hdf5MapWriter::Impl {
  // Declared first so they are destroyed last: the temporaries go once every handle is closed.
  // With every_rank, rank 0 names the temporary and every rank holds it; only rank 0 writes the
  // sidecar.
  std::optional<AtomicFile> h5, xmf;
  std::vector<std::unique_ptr<SpaceReservation>> reservations;  // a map's bytes each, while the caller computes
  bool every_rank = false;
  bool root = true;  // the process that names, publishes or removes the temporaries
  GridSpec grid;
  MapMetadata meta;
  Handle file;
  std::vector<Stream> streams;
  WriteOptions options;
  bool finished = false;

  Impl(const fs::path& path, const GridSpec& g, const MapMetadata& m, const WriteOptions& o, bool all)
      : every_rank(all), root(!all || world_rank() == 0), grid(g), meta(m), options(o) {
    if (root) {
      require_replaceable_sidecar(path);
      h5.emplace(path);
      // XDMF's uniform grids have axes along x, y and z: a skewed grid (a cell's lattice) gets no
      // sidecar, and a sidecar left by an earlier map of this name goes when the file is published.
      xmf.emplace(xdmf_sidecar(path));
    }
    if (every_rank) {
      const std::string temp = text_of_rank_0(root ? h5->temp_path().string() : std::string());
      if (!root) h5.emplace(path, temp);
    }
  }
  // Datasets before the file, whose close may fail (a full disk) on the way out of an error. A
  // file of every rank is left open there: its close is collective, and this rank is alone (the
  // temporary goes all the same, and MPI_Abort then ends the job).
  ~Impl() {
    if (every_rank && !finished) {
      for (Stream& s : streams) s.dataset.release();
      file.release();
      return;
    }
    streams.clear();
    hdf5::close_temporary_file(file);
  }
  const fs::path& target() const { return h5->target(); }
  const fs::path& temp_path() const { return h5->temp_path(); }

  void require_open(const char* call) const {
    if (finished) throw Error(target().string() + ": " + call + " after finish()");
  }
  Stream& stream(std::size_t index) {
    if (index >= streams.size())
      throw Error(target().string() + ": no map number " + std::to_string(index));
    return streams[index];
  }
  std::size_t create_stream(const std::string& name, const MapMetadata& map_meta) {
    const fs::path& path = target();
    Handle access = access_properties(path);
    // Every rank's file: storage allocated at creation and never filled, as parallel HDF5 wants
    // for unfiltered chunks (filtered ones are allocated by the collective writes).
    const bool allocate_early = every_rank && !options.compress;
    Handle dataset = hdf5::create_map_dataset(file.get(), name.c_str(), {}, grid, path, allocate_early,
                                              compression_level(options), access.get());
    hdf5::write_map_attributes(dataset.get(), grid, map_meta, hdf5::kMapAxisOrder, path);
    hdf5::attach_coordinates(file.get(), dataset.get(), grid, std::nullopt, path);
    streams.push_back({name, std::move(dataset), std::vector<std::uint8_t>(std::size_t(grid.nz()), 0)});
    // The file will hold at least every map's values: a large map's space is reserved from the
    // start, as the map after the maps before it, and so is every map after the first (written
    // once the passes before it are done: a method compared with direct). Compressed maps have
    // no size known ahead; every rank's file is allocated by HDF5 itself; a small first map is
    // written in a few milliseconds, which a reservation beside the writes would only delay.
    constexpr std::uint64_t kReservedFrom = std::uint64_t(64) << 20;
    const std::uint64_t map_bytes = grid_bytes(grid);
    if (!every_rank && !options.compress && (map_bytes >= kReservedFrom || streams.size() > 1))
      reservations.push_back(
          std::make_unique<SpaceReservation>(temp_path(), (streams.size() - 1) * map_bytes, map_bytes));
    return streams.size() - 1;
  }
  // Reads or writes planes [z_begin, z_begin+planes) of a stream; with every_rank, a write may
  // hold no plane (a collective one needs every rank).
  void transfer(Stream& s, std::int64_t z_begin, std::int64_t planes, float* read_into,
                const float* write_from) {
    const fs::path& path = target();
    const bool none = every_rank && write_from && planes == 0;
    if (!none && (z_begin < 0 || planes <= 0 || z_begin + planes > grid.nz()))
      throw Error(path.string() + ": planes " + std::to_string(z_begin) + ".." +
                  std::to_string(z_begin + planes - 1) + " are outside the grid's " +
                  std::to_string(grid.nz()) + " planes");
    const hsize_t start[3] = {hsize_t(z_begin), 0, 0};
    const hsize_t count[3] = {hsize_t(std::max<std::int64_t>(planes, 1)), hsize_t(grid.ny()), hsize_t(grid.nx())};
    const std::string what = std::string(write_from ? "write" : "read back") + " planes " +
                             std::to_string(z_begin) + ".." + std::to_string(z_begin + planes - 1) +
                             " of /" + s.name;
    if (write_from && !every_rank) {
      hdf5::write_block(s.dataset.get(), {start, start + 3}, {count, count + 3}, write_from, path, what,
                        false);
      std::fill_n(s.plane_written.begin() + z_begin, planes, 1);
      return;
    }
    Handle file_space = checked_handle(H5Dget_space(s.dataset.get()), H5Sclose, path, what);
    Handle memory_space = checked_handle(H5Screate_simple(3, count, nullptr), H5Sclose, path, what);
    if (none) {
      hdf5::check(H5Sselect_none(file_space.get()), path, what);
      hdf5::check(H5Sselect_none(memory_space.get()), path, what);
    } else {
      hdf5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
                  path, what);
    }
    if (write_from) {
      // Compressed chunks get their storage from the writes, which parallel HDF5 then wants
      // collective; uncompressed storage was allocated at creation, and each rank writing its own
      // bytes independently measured faster than the collective write (docs/scaling.md).
      const bool collective = every_rank && options.compress;
      if (none && !collective) return;
      const Handle transfer_plist = collective ? collective_transfer(path) : Handle();
      hdf5::check(H5Dwrite(s.dataset.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
                           collective ? transfer_plist.get() : H5P_DEFAULT, write_from),
                  path, what);
      if (!none) std::fill_n(s.plane_written.begin() + z_begin, planes, 1);
      return;
    }
    if (!std::all_of(s.plane_written.begin() + z_begin, s.plane_written.begin() + z_begin + planes,
                     [](std::uint8_t w) { return w != 0; }))
      throw Error(path.string() + ": cannot " + what + ": not all of them are written yet");
    hdf5::check(H5Dread(s.dataset.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
                        H5P_DEFAULT, read_into),
                path, what);
  }
  // Collective: every rank's written planes counted, the data on disk (MPI-IO's sync, barrier,
  // sync: what one rank wrote is then what another reads).
  void share_written_planes() {
#ifdef DCSGRID_HAVE_MPI
    if (!every_rank) return;
    const fs::path& path = target();
    for (Stream& s : streams)
      MPI_Allreduce(MPI_IN_PLACE, s.plane_written.data(), int(s.plane_written.size()), MPI_UINT8_T,
                    MPI_MAX, MPI_COMM_WORLD);
    hdf5::check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), path, "flush the file");
    MPI_Barrier(MPI_COMM_WORLD);
    hdf5::check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), path, "flush the file");
#endif
  }
};

Hdf5MapWriter::Hdf5MapWriter(const fs::path& path, const GridSpec& grid, const MapMetadata& meta,
                             const WriteOptions& options, bool every_rank) {
  validate(grid);
  std::lock_guard lock(hdf5::library_mutex());
  hdf5::silence_errors();
  auto impl = std::make_unique<Impl>(path, grid, meta, options, every_rank);
  impl->file = hdf5::create_file(impl->temp_path(), path,
                                 "create the file (as " + impl->temp_path().filename().string() + ")",
                                 every_rank);
  impl->create_stream(kDataset, meta);
  impl_ = std::move(impl);
}

Hdf5MapWriter::~Hdf5MapWriter() {
  std::lock_guard lock(hdf5::library_mutex());
  impl_.reset();
}

std::size_t Hdf5MapWriter::add_stream(const std::string& name, const MapMetadata& meta) {
  std::lock_guard lock(hdf5::library_mutex());
  impl_->require_open("add_stream()");
  return impl_->create_stream(name, meta);
}

void Hdf5MapWriter::write_planes(std::size_t map, std::int64_t z_begin, std::int64_t planes,
                                 const float* data) {
  std::lock_guard lock(hdf5::library_mutex());
  impl_->require_open("write_planes()");
  impl_->transfer(impl_->stream(map), z_begin, planes, nullptr, data);
}

void Hdf5MapWriter::read_planes(std::size_t map, std::int64_t z_begin, std::int64_t planes,
                                float* out) {
  std::lock_guard lock(hdf5::library_mutex());
  impl_->require_open("read_planes()");
  impl_->transfer(impl_->stream(map), z_begin, planes, out, nullptr);
}

void Hdf5MapWriter::add_root_attribute(const std::string& name, const std::string& value) {
  std::lock_guard lock(hdf5::library_mutex());
  Impl& w = *impl_;
  if (w.finished) throw Error(w.target().string() + ": add_root_attribute() after finish()");
  Handle root = checked_handle(H5Gopen2(w.file.get(), "/", H5P_DEFAULT), H5Gclose, w.target(),
                               "open the root group");
  hdf5::write_attribute(root.get(), name, value, w.target());
}

void Hdf5MapWriter::replace_map_attribute(std::size_t map, const std::string& name, const std::string& value) {
  std::lock_guard lock(hdf5::library_mutex());
  impl_->require_open("replace_map_attribute()");
  hdf5::replace_attribute(impl_->stream(map).dataset.get(), name, value, impl_->target());
}

void Hdf5MapWriter::finish() {
  finish_unpublished();
  publish();
}

void Hdf5MapWriter::share_written_planes() {
  std::lock_guard lock(hdf5::library_mutex());
  impl_->require_open("share_written_planes()");
  impl_->share_written_planes();
}

void Hdf5MapWriter::publish() {
  std::lock_guard lock(hdf5::library_mutex());
  Impl& w = *impl_;
  if (!w.finished) throw Error(w.target().string() + ": publish() before finish_unpublished()");
  if (w.root) {
    w.h5->commit();
    if (w.grid.orthogonal()) {
      w.xmf->commit();
    } else {
      std::error_code ignored;
      fs::remove(w.xmf->target(), ignored);
    }
  }
#ifdef DCSGRID_HAVE_MPI
  // The other ranks' temporaries are rank 0's: renamed before any of them can remove it.
  if (w.every_rank) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void Hdf5MapWriter::finish_unpublished() {
  std::lock_guard lock(hdf5::library_mutex());
  Impl& w = *impl_;
  const fs::path& path = w.target();
  if (w.finished) throw Error(path.string() + ": finish() called twice");
  w.share_written_planes();
  std::vector<std::string> names;
  for (Stream& s : w.streams) {
    const auto missing = std::find(s.plane_written.begin(), s.plane_written.end(), 0);
    if (missing != s.plane_written.end())
      throw Error(path.string() + ": plane " + std::to_string(missing - s.plane_written.begin()) +
                  " of /" + s.name + " was never written");
    hdf5::check(s.dataset.close(), path, "write /" + s.name + " (its last chunks)");
    names.push_back(s.name);
  }
  hdf5::check(hdf5::close_temporary_file(w.file), path, "finish writing the file");
  w.finished = true;
  if (!w.root || !w.grid.orthogonal()) return;
  OutputFile xmf(w.xmf->temp_path(), w.xmf->target());
  xmf.write(xdmf_text(w.grid, path.filename().string(), w.meta, names));
  xmf.close();
}

void write_hdf5(const fs::path& path, const GridSpec& grid, const float* data,
                const MapMetadata& meta, const WriteOptions& options) {
  Hdf5MapWriter writer(path, grid, meta, options);
  writer.write_planes(0, grid.nz(), data);
  writer.finish();
}

MapFile read_hdf5(const fs::path& path, const std::string& dataset_name) {
  std::lock_guard lock(hdf5::library_mutex());
  Handle file = hdf5::open_file(path, false);
  hdf5::OpenMap opened = hdf5::open_map(file.get(), dataset_name.c_str(), path);
  if (opened.frames)
    throw InputError(path.string(), 0, "/" + dataset_name + " is a batch of frames: choose one (FILE#FRAME)");
  MapFile map{opened.grid, std::move(opened.meta), std::vector<float>(opened.grid.point_count())};
  hdf5::read_map(opened.dataset.get(), std::nullopt, map.grid, map.data.data(), path);
  return map;
}

// A batch's frames are read as every command reads them, by MapReader.
MapFile read_hdf5_frame(const fs::path& path, std::size_t frame) {
  const MapReader reader(path);
  if (!reader.is_batch())
    throw InputError(path.string(), 0, "not a batch file (/potential is not [frame][nz][ny][nx])");
  if (frame >= reader.frame_count())
    throw InputError(path.string(), 0, "frame " + std::to_string(frame) + " does not exist (the file has " +
                                           std::to_string(reader.frame_count()) + ", numbered from 0)");
  for (std::size_t i = 0; i < reader.size(); ++i)
    if (reader.frame_index(i) == frame) {
      MapFile map{reader.grid(), reader.meta(), std::vector<float>(reader.grid().point_count())};
      reader.read(i, map.data.data());
      return map;
    }
  throw InputError(path.string(), 0, "frame " + std::to_string(frame) + " is not complete");
}

MapFile read_hdf5(const fs::path& path, const MapSelector& selector) {
  if (!selector.frame) return read_hdf5(path, selector.dataset);
  if (selector.dataset != MapSelector{}.dataset)
    throw InputError(path.string(), 0, "a frame is chosen from /potential, not /" + selector.dataset);
  return read_hdf5_frame(path, *selector.frame);
}

}  // namespace dcsgrid::io
