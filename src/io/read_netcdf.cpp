// AMBER NetCDF trajectories (.nc, .ncdf) through libnetcdf: dimensions frame, atom, spatial;
// variables coordinates(frame, atom, spatial) in Å, optional time(frame) in ps and
// cell_lengths/cell_angles(frame, 3). Random access by frame comes with the format.
#include "trajectory_formats.hpp"

#ifdef DCSGRID_HAVE_NETCDF
#include <netcdf.h>

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

class NetcdfReader final : public TrajectoryReader {
 public:
  explicit NetcdfReader(const std::filesystem::path& path);
  ~NetcdfReader() override { nc_close(ncid_); }
  std::size_t atom_count() const override { return atoms_; }
  bool next(float* xyz, FrameInfo& info) override;
  bool skip() override { return frame_ < frames_ ? (++frame_, true) : false; }
  bool can_seek() const override { return true; }
  void seek(std::int64_t frame) override { frame_ = std::max<std::int64_t>(frame, 0); }
  std::optional<std::int64_t> frame_count() const override { return frames_; }
  std::vector<std::string> files() const override { return {name_}; }

 private:
  void check(int status, const std::string& what) const {
    if (status != NC_NOERR)
      throw InputError(name_, 0, what + ": " + nc_strerror(status));
  }
  int variable(const char* name, bool required) const;
  std::size_t dimension(const char* name) const;

  std::string name_;
  int ncid_ = -1, coordinates_ = -1, time_ = -1, lengths_ = -1, angles_ = -1;
  std::size_t atoms_ = 0;
  std::int64_t frames_ = 0, frame_ = 0;
  float scale_ = 1;
};

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
  } catch (...) {
    nc_close(ncid_);
    throw;
  }
}

bool NetcdfReader::next(float* xyz, FrameInfo& info) {
  if (frame_ >= frames_) return false;
  const std::size_t f = std::size_t(frame_);
  const auto where = "frame " + std::to_string(frame_);
  const std::size_t start[3] = {f, 0, 0}, count[3] = {1, atoms_, 3};
  check(nc_get_vara_float(ncid_, coordinates_, start, count, xyz), where + ": coordinates");
  if (scale_ != 1)
    for (std::size_t i = 0; i < 3 * atoms_; ++i) xyz[i] *= scale_;
  info = FrameInfo{};
  info.index = info.serial = frame_;
  info.time_ps = std::numeric_limits<double>::quiet_NaN();
  if (time_ >= 0) check(nc_get_var1_double(ncid_, time_, &f, &info.time_ps), where + ": time");
  if (lengths_ >= 0) {
    UnitCell cell;
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
