// HDF5 maps: the streaming writer, its XDMF sidecar, and the reader.
#include <algorithm>
#include <type_traits>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/atomic_file.hpp"
#include "dcsgrid/io/hdf5_maps.hpp"
#include "dcsgrid/io/map_io.hpp"
#include "map_output_file.hpp"

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
        <DataItem Dimensions=")" + dims + R"(" NumberType="Float" Precision="4" Format="HDF">)" +
                  escape_xml(h5_name) + ":/" + escape_xml(name) + R"(</DataItem>
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

}  // namespace

// One dataset the writer streams planes into.
struct Stream {
  std::string name;
  Handle dataset;
  std::vector<bool> plane_written;
};

struct Hdf5MapWriter::Impl {
  // Declared first so they are destroyed last: the temporaries go once every handle is closed.
  AtomicFile h5;
  AtomicFile xmf;
  GridSpec grid;
  MapMetadata meta;
  Handle file;
  std::vector<Stream> streams;
  WriteOptions options;
  bool finished = false;

  Impl(const fs::path& path, const GridSpec& g, const MapMetadata& m, const WriteOptions& o)
      : h5(path), xmf(fs::path(path).replace_extension(".xmf")), grid(g), meta(m), options(o) {}
  // Datasets before the file, whose close may fail (a full disk) on the way out of an error.
  ~Impl() {
    streams.clear();
    hdf5::close_temporary_file(file);
  }
  const fs::path& target() const { return h5.target(); }

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
    Handle dataset = hdf5::create_map_dataset(file.get(), name.c_str(), {}, grid, path, false,
                                              compression_level(options), access.get());
    hdf5::write_map_attributes(dataset.get(), grid, map_meta, hdf5::kMapAxisOrder, path);
    hdf5::attach_coordinates(file.get(), dataset.get(), grid, std::nullopt, path);
    streams.push_back({name, std::move(dataset), std::vector<bool>(std::size_t(grid.nz()), false)});
    return streams.size() - 1;
  }
  // Reads or writes planes [z_begin, z_begin+planes) of a stream.
  void transfer(Stream& s, std::int64_t z_begin, std::int64_t planes, float* read_into,
                const float* write_from) {
    const fs::path& path = target();
    if (z_begin < 0 || planes <= 0 || z_begin + planes > grid.nz())
      throw Error(path.string() + ": planes " + std::to_string(z_begin) + ".." +
                  std::to_string(z_begin + planes - 1) + " are outside the grid's " +
                  std::to_string(grid.nz()) + " planes");
    const hsize_t start[3] = {hsize_t(z_begin), 0, 0};
    const hsize_t count[3] = {hsize_t(planes), hsize_t(grid.ny()), hsize_t(grid.nx())};
    const std::string what = std::string(write_from ? "write" : "read back") + " planes " +
                             std::to_string(z_begin) + ".." + std::to_string(z_begin + planes - 1) +
                             " of /" + s.name;
    Handle file_space = checked_handle(H5Dget_space(s.dataset.get()), H5Sclose, path, what);
    hdf5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
                path, what);
    Handle memory_space = checked_handle(H5Screate_simple(3, count, nullptr), H5Sclose, path, what);
    if (write_from) {
      hdf5::check(H5Dwrite(s.dataset.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
                           H5P_DEFAULT, write_from),
                  path, what);
      std::fill_n(s.plane_written.begin() + z_begin, planes, true);
      return;
    }
    if (!std::all_of(s.plane_written.begin() + z_begin, s.plane_written.begin() + z_begin + planes,
                     [](bool w) { return w; }))
      throw Error(path.string() + ": cannot " + what + ": not all of them are written yet");
    hdf5::check(H5Dread(s.dataset.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
                        H5P_DEFAULT, read_into),
                path, what);
  }
};

Hdf5MapWriter::Hdf5MapWriter(const fs::path& path, const GridSpec& grid, const MapMetadata& meta,
                             const WriteOptions& options) {
  validate(grid);
  std::lock_guard lock(hdf5::library_mutex());
  hdf5::silence_errors();
  auto impl = std::make_unique<Impl>(path, grid, meta, options);
  impl->file = hdf5::create_file(impl->h5.temp_path(), path,
                                 "create the file (as " + impl->h5.temp_path().filename().string() + ")");
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

void Hdf5MapWriter::finish() {
  finish_unpublished();
  publish();
}

void Hdf5MapWriter::publish() {
  std::lock_guard lock(hdf5::library_mutex());
  Impl& w = *impl_;
  if (!w.finished) throw Error(w.target().string() + ": publish() before finish_unpublished()");
  w.h5.commit();
  w.xmf.commit();
}

void Hdf5MapWriter::finish_unpublished() {
  std::lock_guard lock(hdf5::library_mutex());
  Impl& w = *impl_;
  const fs::path& path = w.target();
  if (w.finished) throw Error(path.string() + ": finish() called twice");
  std::vector<std::string> names;
  for (Stream& s : w.streams) {
    const auto missing = std::find(s.plane_written.begin(), s.plane_written.end(), false);
    if (missing != s.plane_written.end())
      throw Error(path.string() + ": plane " + std::to_string(missing - s.plane_written.begin()) +
                  " of /" + s.name + " was never written");
    hdf5::check(s.dataset.close(), path, "write /" + s.name + " (its last chunks)");
    names.push_back(s.name);
  }
  hdf5::check(hdf5::close_temporary_file(w.file), path, "finish writing the file");

  OutputFile xmf(w.xmf.temp_path(), w.xmf.target());
  xmf.write(xdmf_text(w.grid, path.filename().string(), w.meta, names));
  xmf.close();
  w.finished = true;
}

void write_hdf5(const fs::path& path, const GridSpec& grid, const float* data,
                const MapMetadata& meta, const WriteOptions& options) {
  Hdf5MapWriter writer(path, grid, meta, options);
  writer.write_planes(0, grid.nz(), data);
  writer.finish();
}

namespace {

// Opens path for reading (InputError when it is missing or not HDF5), names the file in errors.
Handle open_for_reading(const fs::path& path) {
  hdf5::silence_errors();
  return hdf5::open_file(path, false);
}

}  // namespace

MapFile read_hdf5(const fs::path& path, const std::string& dataset_name) {
  std::lock_guard lock(hdf5::library_mutex());
  Handle file = open_for_reading(path);
  const std::string dataset_path = "/" + dataset_name;
  if (dataset_name.empty() || !hdf5::exists(file.get(), dataset_path.c_str(), path))
    throw InputError(path.string(), 0, "no dataset " + dataset_path);
  Handle dataset = hdf5::open_dataset(file.get(), dataset_path.c_str(), path);
  const hid_t ds = dataset.get();
  MapFile map;
  hdf5::read_map_attributes(ds, map.grid, map.meta, path);
  if (hdf5::rank(ds, path) == 4)
    throw InputError(path.string(), 0, dataset_path + " is a batch of frames: choose one (FILE#FRAME)");
  hdf5::check_map_shape(ds, map.grid, std::nullopt, path);
  map.data.resize(map.grid.point_count());
  hdf5::read_map(ds, std::nullopt, map.grid, map.data.data(), path);
  return map;
}

MapFile read_hdf5_frame(const fs::path& path, std::size_t frame) {
  std::lock_guard lock(hdf5::library_mutex());
  Handle file = open_for_reading(path);
  const hid_t f = file.get();
  Handle dataset = hdf5::open_dataset(f, hdf5::names::potential, path);
  const hid_t ds = dataset.get();
  if (hdf5::rank(ds, path) != 4)
    throw InputError(path.string(), 0, "not a batch file (/potential is not [frame][nz][ny][nx])");
  MapFile map;
  hdf5::read_map_attributes(ds, map.grid, map.meta, path);
  const std::size_t frames = hdf5::shape(ds, path)[0];
  hdf5::check_map_shape(ds, map.grid, frames, path);
  if (frame >= frames)
    throw InputError(path.string(), 0, "frame " + std::to_string(frame) + " does not exist (the file has " +
                                           std::to_string(frames) + ", numbered from 0)");
  if (hdf5::FrameState(hdf5::read_status(f, frames, path)[frame]) != hdf5::FrameState::complete)
    throw InputError(path.string(), 0, "frame " + std::to_string(frame) + " is not complete");
  map.data.resize(map.grid.point_count());
  hdf5::read_map(ds, frame, map.grid, map.data.data(), path);
  return map;
}

}  // namespace dcsgrid::io
