// AMBER NetCDF trajectories (.nc, .ncdf) through libnetcdf: dimensions frame, atom, spatial;
// variables coordinates(frame, atom, spatial) in Å, optional time(frame) in ps and
// cell_lengths/cell_angles(frame, 3). Random access by frame comes with the format.
#include "io/trajectory/formats.hpp"

#ifdef DCSGRID_HAVE_NETCDF
#include <netcdf.h>

#include <algorithm>
#include <cstring>
#include <limits>
#endif

namespace dcsgrid::io::detail {

#ifndef DCSGRID_HAVE_NETCDF

bool netcdf_available() { return false; }

std::unique_ptr<TrajectoryReader> open_netcdf(const std::filesystem::path& path) {
  throw InputError(path.string(), 0,
                   "AMBER NetCDF trajectories need libnetcdf, and this dcsgrid was built without "
                   "it (install libnetcdf-dev and reconfigure)");
}

#else

namespace {

// Classic and 64-bit-offset files (CDF1, CDF2: what AMBER and MDAnalysis write) keep each frame
// as one record at a fixed place; libnetcdf reads a record cut off by a truncated file as fill
// values without an error, so the complete records are counted here from the header's
// variable offsets and the file size. Other formats (netCDF-4/HDF5) fail loudly by themselves.
struct RecordLayout {
  std::int64_t complete = 0;   // records wholly inside the file
  std::uint64_t first = 0;     // offset of record 0
  std::uint64_t record = 0;    // bytes per record
};

class ClassicHeader {
 public:
  explicit ClassicHeader(BinaryFile& file) : file_(file) {}
  std::optional<RecordLayout> layout();

 private:
  std::uint32_t u32() {
    unsigned char b[4];
    read_exact(file_, b, 4);
    return load_u32(b, true);
  }
  std::uint64_t u64() {
    unsigned char b[8];
    read_exact(file_, b, 8);
    return load_u64(b, true);
  }
  // A count read from the header, each counted item taking at least least_bytes_each of what is
  // left: libnetcdf sizes its allocations from these counts before it checks them (a damaged count
  // made it allocate gigabytes, or crash and loop while freeing after a failed allocation).
  std::uint32_t count(std::uint64_t least_bytes_each, const char* what) {
    const std::uint64_t at = file_.tell();
    const std::uint32_t n = u32();
    if (std::uint64_t(n) * least_bytes_each > file_.left())
      damaged(at, std::to_string(n) + " " + what + " cannot fit in the " + std::to_string(file_.left()) +
                      " bytes left");
    return n;
  }
  [[noreturn]] void damaged(std::uint64_t at, const std::string& what) const {
    throw InputError(file_.name(), 0, "damaged NetCDF header at byte " + std::to_string(at) + ": " + what);
  }
  void skip_name() { skip_padded(count(1, "name bytes")); }
  void skip_padded(std::uint64_t bytes) {
    const std::uint64_t padded = (bytes + 3) & ~std::uint64_t(3);
    if (bytes > file_.left() || padded > file_.left())
      damaged(file_.tell(), std::to_string(bytes) + " bytes of values run past the end of the file");
    file_.seek(file_.tell() + padded);
  }
  void skip_attributes();
  static std::uint64_t type_size(std::uint32_t type) {
    static const std::uint64_t sizes[] = {0, 1, 1, 2, 4, 4, 8};
    return type < 7 ? sizes[type] : 0;
  }
  BinaryFile& file_;
};

void ClassicHeader::skip_attributes() {
  const std::uint32_t tag = u32(), attributes = count(12, "attributes");
  if (tag == 0) return;
  for (std::uint32_t a = 0; a < attributes; ++a) {
    skip_name();
    const std::uint64_t at = file_.tell();
    const std::uint32_t type = u32(), values = u32();
    if (type_size(type) == 0) damaged(at, "attribute type " + std::to_string(type) + " is not a classic type");
    skip_padded(std::uint64_t(values) * type_size(type));
  }
}

std::optional<RecordLayout> ClassicHeader::layout() {
  unsigned char magic[4];
  read_exact(file_, magic, 4);
  if (std::memcmp(magic, "CDF", 3) != 0 || (magic[3] != 1 && magic[3] != 2)) return std::nullopt;
  const bool wide_offsets = magic[3] == 2;
  u32();  // record count: libnetcdf's
  std::vector<std::uint64_t> dims;  // 0 for the record dimension
  u32();                            // dimension tag (absent: a zero count follows)
  for (std::uint32_t d = 0, n = count(8, "dimensions"); d < n; ++d) skip_name(), dims.push_back(u32());
  if (std::count(dims.begin(), dims.end(), 0) > 1)
    damaged(file_.tell(), "more than one dimension is unlimited (length 0)");
  skip_attributes();
  const std::uint32_t var_tag = u32(), vars = count(24, "variables");
  RecordLayout layout;
  std::uint64_t first = ~std::uint64_t(0);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> records;  // begin, bytes per record
  for (std::uint32_t v = 0; var_tag != 0 && v < vars; ++v) {
    skip_name();
    const std::uint32_t ndims = count(4, "dimensions of a variable");
    std::vector<std::uint32_t> ids(ndims);
    for (std::uint32_t k = 0; k < ndims; ++k) {
      if (ids[k] = u32(); ids[k] >= dims.size())
        damaged(file_.tell() - 4, "a variable names dimension " + std::to_string(ids[k]) + " of " +
                                      std::to_string(dims.size()));
      // libnetcdf divides by the product of a variable's later dimensions (SIGFPE when one is 0).
      if (k > 0 && dims[ids[k]] == 0)
        damaged(file_.tell() - 4, "the unlimited dimension is not a variable's first");
    }
    skip_attributes();
    const std::uint32_t type = u32();
    if (type_size(type) == 0) damaged(file_.tell() - 4, "variable type " + std::to_string(type) + " is not a classic type");
    const std::uint64_t vsize = u32();
    const std::uint64_t begin = wide_offsets ? u64() : u32();
    if (ndims == 0 || dims[ids[0]] != 0) continue;  // not a record variable
    std::uint64_t bytes = type_size(type);
    for (std::uint32_t k = 1; k < ndims; ++k) bytes *= dims[ids[k]];  // ids checked above
    records.emplace_back(begin, bytes);
    layout.record += (vsize + 3) & ~std::uint64_t(3);
    first = std::min(first, begin);
  }
  // A lone record variable is stored without padding between records.
  if (records.size() == 1) layout.record = records[0].second;
  if (records.empty() || layout.record == 0) return std::nullopt;
  layout.first = first;
  layout.complete = std::numeric_limits<std::int64_t>::max();
  for (const auto& [begin, bytes] : records) {
    const std::uint64_t end = begin + bytes;
    layout.complete = std::min<std::int64_t>(
        layout.complete,
        file_.size() < end ? 0 : std::int64_t((file_.size() - end) / layout.record + 1));
  }
  return layout;
}

class NetcdfReader final : public TrajectoryReader {
 public:
  explicit NetcdfReader(const std::filesystem::path& path);
  ~NetcdfReader() override { nc_close(ncid_); }
  std::size_t atom_count() const override { return atoms_; }
  bool next(float* xyz, FrameInfo& info) override;
  bool skip(FrameInfo& info) override;
  bool can_seek() const override { return true; }
  void seek(std::int64_t frame) override { frame_ = std::max<std::int64_t>(frame, 0); }
  std::optional<std::int64_t> frame_count() const override { return frames_; }
  std::vector<std::string> files() const override { return {name_}; }

 private:
  void number(FrameInfo& info) const;
  void check(int status, const std::string& what) const {
    if (status != NC_NOERR)
      throw InputError(name_, 0, what + ": " + nc_strerror(status));
  }
  int variable(const char* name, bool required) const;
  std::size_t dimension(const char* name) const;
  // A record cut off by the end of the file (classic files: layout from their header): the frames
  // end before it, and reading there reports it.
  void check_complete_records(const std::optional<RecordLayout>& layout);
  bool at_end();

  std::string name_;
  int ncid_ = -1, coordinates_ = -1, time_ = -1, lengths_ = -1, angles_ = -1;
  std::size_t atoms_ = 0;
  std::int64_t frames_ = 0, frame_ = 0;
  float scale_ = 1;
  std::optional<Truncation> cut_;  // a cut-off last record, reported when reading reaches it
};

void NetcdfReader::check_complete_records(const std::optional<RecordLayout>& layout) {
  if (!layout || layout->complete >= frames_) return;
  const std::uint64_t start = layout->first + std::uint64_t(layout->complete) * layout->record;
  cut_ = Truncation{name_, layout->complete, start,
                    "the file ends before the end of this " + std::to_string(layout->record) +
                        "-byte record; the header lists " + std::to_string(frames_) + " frames"};
  frames_ = layout->complete;
}

bool NetcdfReader::at_end() {
  if (cut_ && frame_ == frames_) {
    truncations_.push_back(*cut_);
    cut_.reset();
  }
  return false;
}

int NetcdfReader::variable(const char* name, bool required) const {
  int id = -1;
  const int status = nc_inq_varid(ncid_, name, &id);
  if (status == NC_ENOTVAR && !required) return -1;
  check(status, std::string("no variable '") + name + "' (not an AMBER NetCDF trajectory?)");
  return id;
}

std::size_t NetcdfReader::dimension(const char* name) const {
  int id = -1;
  check(nc_inq_dimid(ncid_, name, &id),
        std::string("no dimension '") + name + "' (not an AMBER NetCDF trajectory?)");
  std::size_t length = 0;
  check(nc_inq_dimlen(ncid_, id, &length), std::string("dimension '") + name + "'");
  return length;
}

NetcdfReader::NetcdfReader(const std::filesystem::path& path) : name_(path.string()) {
  std::optional<RecordLayout> layout;
  try {  // a classic header is walked first: libnetcdf trusts its counts (ClassicHeader::count)
    BinaryFile file(name_);
    layout = ClassicHeader(file).layout();
  } catch (const ShortRead&) {
    throw InputError(name_, 0, "the NetCDF header ends before its variables do (a truncated file?)");
  }
  check(nc_open(name_.c_str(), NC_NOWRITE, &ncid_), "cannot open as NetCDF");
  try {
    atoms_ = dimension("atom");
    frames_ = std::int64_t(dimension("frame"));
    if (dimension("spatial") != 3) throw InputError(name_, 0, "dimension 'spatial' is not 3");
    if (atoms_ == 0) throw InputError(name_, 0, "holds no atoms");
    coordinates_ = variable("coordinates", true);
    time_ = variable("time", false);
    lengths_ = variable("cell_lengths", false);
    angles_ = variable("cell_angles", false);
    if ((lengths_ < 0) != (angles_ < 0)) lengths_ = angles_ = -1;
    float scale = 1;
    if (nc_get_att_float(ncid_, coordinates_, "scale_factor", &scale) == NC_NOERR) scale_ = scale;
    check_complete_records(layout);
  } catch (...) {
    nc_close(ncid_);
    throw;
  }
}

// The frame's number and its time (one value of the time variable; NaN without one).
void NetcdfReader::number(FrameInfo& info) const {
  const std::size_t f = std::size_t(frame_);
  info = FrameInfo{};
  info.index = info.serial = frame_;
  info.time_ps = std::numeric_limits<double>::quiet_NaN();
  if (time_ >= 0)
    check(nc_get_var1_double(ncid_, time_, &f, &info.time_ps), "frame " + std::to_string(frame_) + ": time");
}

bool NetcdfReader::skip(FrameInfo& info) {
  if (frame_ >= frames_) return at_end();
  number(info);
  ++frame_;
  return true;
}

bool NetcdfReader::next(float* xyz, FrameInfo& info) {
  if (frame_ >= frames_) return at_end();
  const std::size_t f = std::size_t(frame_);
  const auto where = "frame " + std::to_string(frame_);
  const std::size_t start[3] = {f, 0, 0}, count[3] = {1, atoms_, 3};
  check(nc_get_vara_float(ncid_, coordinates_, start, count, xyz), where + ": coordinates");
  if (scale_ != 1)
    for (std::size_t i = 0; i < 3 * atoms_; ++i) xyz[i] *= scale_;
  number(info);
  if (lengths_ >= 0) {
    CellParameters cell;
    const std::size_t cell_start[2] = {f, 0}, cell_count[2] = {1, 3};
    check(nc_get_vara_double(ncid_, lengths_, cell_start, cell_count, cell.data()),
          where + ": cell_lengths");
    check(nc_get_vara_double(ncid_, angles_, cell_start, cell_count, cell.data() + 3),
          where + ": cell_angles");
    if (cell[0] > 0 && cell[1] > 0 && cell[2] > 0) info.box = cell;
  }
  ++frame_;
  return true;
}

}  // namespace

bool netcdf_available() { return true; }

std::unique_ptr<TrajectoryReader> open_netcdf(const std::filesystem::path& path) {
  return std::make_unique<NetcdfReader>(path);
}

#endif

}  // namespace dcsgrid::io::detail
