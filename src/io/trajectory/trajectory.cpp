// Trajectory plumbing shared by the formats: the binary file, errors with frame and offset,
// frames of varying size with their index, opening by extension, and unit cells.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <numbers>

#include <unistd.h>

#include "dcsgrid/io/trajectory/trajectory.hpp"
#include "io/trajectory/formats.hpp"

namespace dcsgrid::io {
namespace detail {

BinaryFile::BinaryFile(const std::filesystem::path& path) : name_(path.string()) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(name_, 0, "is a folder, not a trajectory file");
  file_ = std::fopen(name_.c_str(), "rb");
  if (!file_) throw InputError(name_, 0, std::string("cannot open: ") + std::strerror(errno));
  // Reads of a frame or more go straight to the caller's buffer; small header reads (XTC, TRR)
  // are served from this one.
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
  if (fseeko(file_, 0, SEEK_END) != 0) throw InputError(name_, 0, "cannot seek in the file");
  size_ = std::uint64_t(ftello(file_));
  fseeko(file_, 0, SEEK_SET);
}

BinaryFile::~BinaryFile() {
  if (file_) std::fclose(file_);
}

void BinaryFile::seek(std::uint64_t offset) {
  if (offset == offset_) return;
  if (fseeko(file_, off_t(offset), SEEK_SET) != 0)
    throw InputError(name_, 0, "cannot seek to byte offset " + std::to_string(offset));
  offset_ = offset;
}

std::size_t BinaryFile::read_some(void* dst, std::size_t n) {
  const std::size_t got = std::fread(dst, 1, n, file_);
  if (got < n && std::ferror(file_))
    throw InputError(name_, 0, "read error at byte offset " + std::to_string(offset_ + got) +
                                   ": " + std::strerror(errno));
  offset_ += got;
  return got;
}

std::size_t BinaryFile::read_at(std::uint64_t offset, void* dst, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fileno(file_), static_cast<char*>(dst) + done, n - done,
                                off_t(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw InputError(name_, 0, "read error at byte offset " + std::to_string(offset + done) +
                                     ": " + std::strerror(errno));
    if (got == 0) break;
    done += std::size_t(got);
  }
  return done;
}

void read_exact(BinaryFile& file, void* dst, std::size_t n) {
  const std::uint64_t wanted_end = file.tell() + n;
  if (file.read_some(dst, n) != n) throw ShortRead{wanted_end};
}

void throw_frame_error(const std::string& file, std::int64_t frame, std::uint64_t offset,
                       const std::string& problem) {
  throw InputError(file, 0, "frame " + std::to_string(frame) + " (byte offset " +
                                std::to_string(offset) + "): " + problem);
}

bool SizedFrameReader::next(float* xyz, FrameInfo& info) {
  if (done_ || file_.left() == 0) return false;
  const std::uint64_t start = file_.tell();
  try {
    if (!decode_frame(frame_, xyz, info)) return !(done_ = true);
  } catch (const ShortRead& s) {
    record_truncation(start, s);
    return false;
  }
  info.file = 0;
  info.index = info.serial = frame_++;
  return true;
}

bool SizedFrameReader::skip(FrameInfo& info) {
  if (done_ || file_.left() == 0) return false;
  const std::uint64_t start = file_.tell();
  std::uint64_t length = 0;
  info = FrameInfo{};
  try {
    length = measure_frame(frame_, &info);
    if (start + length > file_.size()) throw ShortRead{start + length};
  } catch (const ShortRead& s) {
    record_truncation(start, s);
    return false;
  }
  if (length == 0) return !(done_ = true);
  file_.seek(start + length);
  info.index = info.serial = frame_++;
  return true;
}

void SizedFrameReader::record_truncation(std::uint64_t start, const ShortRead& s) {
  done_ = true;
  if (!truncations_.empty()) return;  // met again after seeking back
  truncations_.push_back({file_.name(), frame_, start,
                          "the file ends at byte " + std::to_string(file_.size()) +
                              ", the frame needs " + std::to_string(s.wanted_end - start) +
                              " bytes or more"});
}

void SizedFrameReader::check_file_number(std::size_t file) const {
  if (file != 0)
    throw Error(file_.name() + ": a single trajectory file has no file " + std::to_string(file));
}

const std::vector<std::uint64_t>& SizedFrameReader::frame_offsets(std::size_t file) {
  check_file_number(file);
  if (indexed_) return offsets_;
  const std::uint64_t saved_offset = file_.tell();
  const std::int64_t saved_frame = frame_;
  std::vector<std::uint64_t> offsets;
  file_.seek(0);
  for (frame_ = 0; file_.left() > 0; ++frame_) {
    const std::uint64_t start = file_.tell();
    std::uint64_t length = 0;
    try {
      length = measure_frame(frame_, nullptr);
    } catch (const ShortRead&) {
      break;  // a truncated last frame: reported when reading reaches it
    }
    if (length == 0 || start + length > file_.size()) break;
    offsets.push_back(start);
    file_.seek(start + length);
  }
  offsets_ = std::move(offsets);
  indexed_ = true;
  frame_ = saved_frame;
  file_.seek(saved_offset);
  return offsets_;
}

void SizedFrameReader::set_frame_offsets(std::vector<std::uint64_t> offsets, std::size_t file) {
  check_file_number(file);
  const auto stale = [&](const std::string& why) {
    throw InputError(file_.name(), 0, "the cached frame index does not fit this file: " + why);
  };
  if (!std::is_sorted(offsets.begin(), offsets.end()) ||
      std::adjacent_find(offsets.begin(), offsets.end()) != offsets.end())
    stale("offsets not increasing");
  if (!offsets.empty() && offsets.front() != 0) stale("the first frame is not at offset 0");
  const std::uint64_t saved_offset = file_.tell();
  // The last indexed frame must be whole, and no whole frame may follow it.
  std::uint64_t end = 0;
  if (!offsets.empty()) {
    file_.seek(offsets.back());
    std::uint64_t length = 0;
    try {
      length = measure_frame(std::int64_t(offsets.size()) - 1, nullptr);
    } catch (const ShortRead&) {
      stale("its last frame runs past the end of the file");
    }
    end = offsets.back() + length;
    if (length == 0 || end > file_.size()) stale("its last frame runs past the end of the file");
  }
  if (end < file_.size()) {
    file_.seek(end);
    bool whole_frame_follows = false;
    try {
      const std::uint64_t length = measure_frame(std::int64_t(offsets.size()), nullptr);
      whole_frame_follows = length > 0 && end + length <= file_.size();
    } catch (const ShortRead&) {
    }
    if (whole_frame_follows) stale("the file has frames after the indexed ones");
  }
  file_.seek(saved_offset);
  offsets_ = std::move(offsets);
  indexed_ = true;
}

void SizedFrameReader::seek(std::int64_t frame) {
  if (frame < 0) throw Error(file_.name() + ": cannot seek to negative frame " + std::to_string(frame));
  const auto& offsets = frame_offsets();
  frame_ = frame;
  done_ = frame >= std::int64_t(offsets.size());
  file_.seek(done_ ? file_.size() : offsets[std::size_t(frame)]);
}

std::optional<std::int64_t> SizedFrameReader::frame_count() const {
  if (!indexed_) return std::nullopt;
  return std::int64_t(offsets_.size());
}

}  // namespace detail

std::string Truncation::message() const {
  return file + ": frame " + std::to_string(frame) + " at byte offset " + std::to_string(offset) +
         " is truncated (" + problem + "); the " + std::to_string(frame) +
         " frames before it were read";
}

bool TrajectoryReader::skip(FrameInfo& info) {
  std::vector<float> scratch(3 * atom_count());
  return next(scratch.data(), info);
}

void TrajectoryReader::seek(std::int64_t) {
  const auto names = files();
  throw Error((names.empty() ? std::string("trajectory") : names.front()) +
              ": this trajectory cannot seek");
}

bool netcdf_supported() { return detail::netcdf_available(); }

IndexedTrajectory* as_indexed(TrajectoryReader& reader) {
  return dynamic_cast<IndexedTrajectory*>(&reader);
}

namespace {
std::string lower_extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}
}  // namespace

bool is_trajectory_path(const std::filesystem::path& path) {
  const std::string ext = lower_extension(path);
  return ext == ".dcd" || ext == ".xtc" || ext == ".trr" || ext == ".nc" || ext == ".ncdf";
}

std::unique_ptr<TrajectoryReader> open_trajectory(const std::filesystem::path& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".dcd") return detail::open_dcd(path);
  if (ext == ".xtc") return detail::open_xtc(path);
  if (ext == ".trr") return detail::open_trr(path);
  if (ext == ".nc" || ext == ".ncdf") return detail::open_netcdf(path);
  throw InputError(path.string(), 0,
                   "unknown trajectory format '" + ext + "' (known: .dcd .xtc .trr .nc .ncdf)");
}

void check_atom_count(const std::string& topology_file, std::size_t topology_atoms,
                      const TrajectoryReader& trajectory) {
  if (trajectory.atom_count() == topology_atoms) return;
  const auto names = trajectory.files();
  throw InputError(topology_file, 0,
                   "has " + std::to_string(topology_atoms) + " atoms but the trajectory " +
                       (names.empty() ? std::string("?") : names.front()) + " has " +
                       std::to_string(trajectory.atom_count()));
}

std::optional<CellParameters> cell_parameters_from_vectors(const std::array<std::array<double, 3>, 3>& v) {
  const std::optional<UnitCell> cell = cell_from_vectors(v);
  if (!cell) return std::nullopt;
  return CellParameters{cell->lengths[0], cell->lengths[1], cell->lengths[2],
                        cell->angles[0],  cell->angles[1],  cell->angles[2]};
}

std::optional<UnitCell> frame_cell(const FrameInfo& frame) {
  if (!frame.box) return std::nullopt;
  const CellParameters& p = *frame.box;
  try {
    return make_cell({p[0], p[1], p[2]}, {p[3], p[4], p[5]});
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace dcsgrid::io
