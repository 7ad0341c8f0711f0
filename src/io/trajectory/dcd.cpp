// DCD (CHARMM, NAMD, X-PLOR). Fortran unformatted records (a length marker before and after
// each record, 4 or 8 bytes, in the file's byte order):
//   "CORD" + 20 control integers | title lines | atom count | frames
// Every frame has the same size: [unit cell, 6 doubles] x, y, z (float32 each) [w for 4D], so
// frame k starts at header + k·frame size and seeking needs no pass over the file.
#include <cmath>
#include <numbers>
#include <vector>

#include "io/trajectory/formats.hpp"

namespace dcsgrid::io::detail {
namespace {

constexpr double akma_time_ps = 4.888821e-2;  // CHARMM's AKMA time unit in ps

struct DcdLayout {
  bool big = false;             // byte order
  std::size_t marker = 4;       // record marker size
  bool charmm = false;          // CHARMM flavour (else X-PLOR: no cell, double time step)
  bool has_cell = false, four_dims = false;
  std::int64_t istart = 0, nsavc = 0;
  double delta = 0;             // time step, AKMA units
  std::size_t atoms = 0;
  std::uint64_t header_bytes = 0, frame_bytes = 0;
};

class DcdReader final : public TrajectoryReader {
 public:
  explicit DcdReader(const std::filesystem::path& path) : file_(path) { read_header(); }
  std::size_t atom_count() const override { return layout_.atoms; }
  bool next(float* xyz, FrameInfo& info) override;
  bool skip(FrameInfo& info) override;
  bool can_seek() const override { return true; }
  void seek(std::int64_t frame) override { frame_ = std::max<std::int64_t>(frame, 0); }
  std::optional<std::int64_t> frame_count() const override { return whole_frames_; }
  std::vector<std::string> files() const override { return {file_.name()}; }

 private:
  void read_header();
  std::uint64_t read_marker();
  std::vector<unsigned char> read_record(const char* what);
  bool frame_fits();
  void number(FrameInfo& info);
  std::uint64_t marker_at(const unsigned char* p) const {
    return layout_.marker == 8 ? load_u64(p, layout_.big) : load_u32(p, layout_.big);
  }
  std::optional<CellParameters> decode_cell(const unsigned char* p) const;
  void interleave(const unsigned char* const axes[3], std::size_t n, float* xyz) const;
  void check_marker(const unsigned char* p, std::uint64_t expected, std::uint64_t frame_start,
                    const char* what) const;

  BinaryFile file_;
  DcdLayout layout_;
  std::int64_t whole_frames_ = 0, frame_ = 0;
  bool truncation_reported_ = false;
  std::vector<unsigned char> buffer_;
};

std::uint64_t DcdReader::read_marker() {
  unsigned char b[8];
  const std::uint64_t at = file_.tell();
  try {
    read_exact(file_, b, layout_.marker);
  } catch (const ShortRead&) {
    throw InputError(file_.name(), 0, "the header ends early, at byte offset " + std::to_string(at));
  }
  return marker_at(b);
}

// One header record; its length is checked against the closing marker.
std::vector<unsigned char> DcdReader::read_record(const char* what) {
  const std::uint64_t at = file_.tell();
  const std::uint64_t length = read_marker();
  if (length > file_.left())
    throw InputError(file_.name(), 0, std::string("the ") + what + " record at byte offset " +
                                          std::to_string(at) + " claims " + std::to_string(length) +
                                          " bytes, more than the file holds");
  std::vector<unsigned char> data(length);
  read_exact(file_, data.data(), length);
  if (read_marker() != length)
    throw InputError(file_.name(), 0, std::string("the ") + what + " record at byte offset " +
                                          std::to_string(at) + " has mismatched length markers");
  return data;
}

void DcdReader::read_header() {
  unsigned char head[12] = {};
  const std::size_t got = file_.read_some(head, sizeof head);
  const auto is_cord = [&](const unsigned char* p) { return std::memcmp(p, "CORD", 4) == 0; };
  bool found = false;
  for (bool big : {false, true}) {
    if (got >= 8 && load_u32(head, big) == 84 && is_cord(head + 4))
      layout_.big = big, layout_.marker = 4, found = true;
    else if (got >= 12 && load_u64(head, big) == 84 && is_cord(head + 8))
      layout_.big = big, layout_.marker = 8, found = true;
    if (found) break;
  }
  if (!found)
    throw InputError(file_.name(), 0,
                     "not a DCD file: it does not start with an 84-byte \"CORD\" record");
  file_.seek(0);
  const auto control = read_record("control");
  const auto icntrl = [&](int i) { return load_i32(control.data() + 4 + 4 * i, layout_.big); };
  layout_.charmm = icntrl(19) != 0;
  layout_.istart = icntrl(1);
  layout_.nsavc = icntrl(2);
  if (layout_.charmm) {
    layout_.delta = load_f32(control.data() + 4 + 4 * 9, layout_.big);
    layout_.has_cell = icntrl(10) != 0;
    layout_.four_dims = icntrl(11) != 0;
  } else {
    layout_.delta = load_f64(control.data() + 4 + 4 * 9, layout_.big);
  }
  read_record("title");
  const auto natom = read_record("atom count");
  if (natom.size() != 4) throw InputError(file_.name(), 0, "the atom count record is not 4 bytes");
  const std::int32_t atoms = load_i32(natom.data(), layout_.big);
  if (atoms <= 0) throw InputError(file_.name(), 0, "atom count " + std::to_string(atoms));
  layout_.atoms = std::size_t(atoms);
  if (const std::int32_t fixed = icntrl(8); fixed != 0)
    throw InputError(file_.name(), 0,
                     "has " + std::to_string(fixed) + " fixed atoms (NAMNF); DCD files with fixed "
                     "atoms store only the free ones after the first frame and are not supported");
  layout_.header_bytes = file_.tell();
  const std::uint64_t m2 = 2 * layout_.marker, coords = 4 * layout_.atoms + m2;
  layout_.frame_bytes = (layout_.has_cell ? 48 + m2 : 0) + (layout_.four_dims ? 4 : 3) * coords;
  whole_frames_ =
      std::int64_t((file_.size() - layout_.header_bytes) / layout_.frame_bytes);
  if (whole_frames_ == 0 && layout_.frame_bytes > 16 * file_.size())
    throw InputError(file_.name(), 0, "atom count " + std::to_string(atoms) +
                                          " is impossible for a file of " +
                                          std::to_string(file_.size()) + " bytes");
}

// Whether frame_ is a whole frame in the file; records the truncation of a partial last one.
bool DcdReader::frame_fits() {
  if (frame_ < whole_frames_) return true;
  const std::uint64_t start = layout_.header_bytes + std::uint64_t(frame_) * layout_.frame_bytes;
  if (frame_ == whole_frames_ && start < file_.size() && !truncation_reported_) {
    truncation_reported_ = true;
    truncations_.push_back(
        {file_.name(), frame_, start,
         "the file ends " + std::to_string(file_.size() - start) + " bytes into a " +
             std::to_string(layout_.frame_bytes) + "-byte frame"});
  }
  return false;
}

void DcdReader::check_marker(const unsigned char* p, std::uint64_t expected,
                             std::uint64_t frame_start, const char* what) const {
  const std::uint64_t value = marker_at(p);
  if (value != expected)
    throw_frame_error(file_.name(), frame_, frame_start + std::uint64_t(p - buffer_.data()),
                      std::string("bad record marker before/after the ") + what + ": " +
                          std::to_string(value) + ", expected " + std::to_string(expected));
}

bool DcdReader::next(float* xyz, FrameInfo& info) {
  if (!frame_fits()) return false;
  const std::uint64_t start = layout_.header_bytes + std::uint64_t(frame_) * layout_.frame_bytes;
  buffer_.resize(layout_.frame_bytes);
  if (file_.read_at(start, buffer_.data(), buffer_.size()) != buffer_.size())
    throw_frame_error(file_.name(), frame_, start, "the file shrank while being read");
  const unsigned char* p = buffer_.data();
  const std::size_t m = layout_.marker, n = layout_.atoms;
  info = FrameInfo{};
  if (layout_.has_cell) {
    check_marker(p, 48, start, "unit cell");
    check_marker(p + m + 48, 48, start, "unit cell");
    info.box = decode_cell(p + m);
    p += 48 + 2 * m;
  }
  static const char* const axis_names[] = {"x coordinates", "y coordinates", "z coordinates"};
  const unsigned char* axes[3];
  for (int axis = 0; axis < 3; ++axis) {
    check_marker(p, 4 * n, start, axis_names[axis]);
    check_marker(p + m + 4 * n, 4 * n, start, axis_names[axis]);
    axes[axis] = p + m;
    p += 4 * n + 2 * m;
  }
  interleave(axes, n, xyz);
  number(info);
  return true;
}

// The frame's number and its time from the header: frame i was saved at step ISTART + i·NSAVC.
void DcdReader::number(FrameInfo& info) {
  info.index = info.serial = frame_;
  info.time_ps = double(layout_.istart + frame_ * layout_.nsavc) * layout_.delta * akma_time_ps;
  ++frame_;
}

// x, y and z records into x0 y0 z0 x1 ...: one pass with contiguous stores.
void DcdReader::interleave(const unsigned char* const axes[3], std::size_t n, float* xyz) const {
  if (layout_.big == (std::endian::native == std::endian::big)) {
    for (std::size_t i = 0; i < n; ++i)
      for (int axis = 0; axis < 3; ++axis) std::memcpy(xyz + 3 * i + axis, axes[axis] + 4 * i, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i)
      for (int axis = 0; axis < 3; ++axis) xyz[3 * i + axis] = load_f32(axes[axis] + 4 * i, true);
  }
}

bool DcdReader::skip(FrameInfo& info) {
  if (!frame_fits()) return false;
  info = FrameInfo{};
  number(info);
  return true;
}

// CHARMM order [A, gamma, B, beta, alpha, C]; the angles as cosines (CHARMM, NAMD > 2.5) or in
// degrees (NAMD 2.5), or the symmetric cell matrix (newer CHARMM: negative entries or angles
// beyond 180 give it away) as [h11, h21, h22, h31, h32, h33].
std::optional<CellParameters> DcdReader::decode_cell(const unsigned char* p) const {
  double u[6];
  for (int i = 0; i < 6; ++i) u[i] = load_f64(p + 8 * i, layout_.big);
  CellParameters cell{u[0], u[2], u[5], u[4], u[3], u[1]};
  if (cell[0] == 0 && cell[1] == 0 && cell[2] == 0) return std::nullopt;
  const bool cosines = std::abs(cell[3]) <= 1 && std::abs(cell[4]) <= 1 && std::abs(cell[5]) <= 1;
  if (cosines) {
    for (int i = 3; i < 6; ++i) cell[i] = 90.0 - std::asin(cell[i]) * 180.0 / std::numbers::pi;
    return cell;
  }
  bool matrix = false;
  for (int i = 0; i < 6; ++i) matrix |= cell[i] < 0 || (i >= 3 && cell[i] > 180);
  if (!matrix) return cell;
  return cell_parameters_from_vectors({{{u[0], u[1], u[3]}, {u[1], u[2], u[4]}, {u[3], u[4], u[5]}}});
}

}  // namespace

std::unique_ptr<TrajectoryReader> open_dcd(const std::filesystem::path& path) {
  return std::make_unique<DcdReader>(path);
}

}  // namespace dcsgrid::io::detail
