// GROMACS TRR: XDR (big-endian) frames, each a header
//   magic 1993, version string ("GMX_trn_file" as an XDR string after its length + 1),
//   13 integers: ir, e, box, vir, pres, top, sym, x, v, f sizes in bytes, atoms, step, nre;
//   time and lambda as reals
// then box (3×3), virial, pressure, x, v, f, each present when its size is non-zero. Reals are
// float or double: the sizes tell which. Records without coordinates (velocities or forces
// written more often than positions) are passed over: a frame here is a record with x, and the
// frame numbers count those only.
#include <array>
#include <vector>

#include "io/trajectory/formats.hpp"

namespace dcsgrid::io::detail {
namespace {

constexpr std::int32_t trr_magic = 1993;

struct TrrHeader {
  std::uint64_t header_bytes = 0;
  std::int64_t box = 0, vir = 0, pres = 0, x = 0, v = 0, f = 0;
  std::int64_t atoms = 0, step = 0;
  int real_size = 4;
  double time = 0;
  std::uint64_t record_bytes() const {
    return header_bytes + std::uint64_t(box + vir + pres + x + v + f);
  }
};

class TrrReader final : public SizedFrameReader {
 public:
  explicit TrrReader(const std::filesystem::path& path) : SizedFrameReader(path) {
    try {
      start(std::size_t(read_header(0).atoms));
    } catch (const ShortRead&) {
      throw InputError(file_.name(), 0,
                       "frame 0 (byte offset 0) is truncated: the file holds no whole frame");
    }
  }

 protected:
  std::uint64_t measure_frame(std::int64_t frame, FrameInfo* info) override;
  bool decode_frame(std::int64_t frame, float* xyz, FrameInfo& info) override;

 private:
  TrrHeader read_header(std::int64_t frame);
  std::optional<TrrHeader> next_record_with_coordinates(std::int64_t frame);
  void read_reals(std::size_t count, int real_size, double scale, float* out);

  std::vector<unsigned char> buffer_;
};

TrrHeader TrrReader::read_header(std::int64_t frame) {
  const std::uint64_t start = file_.tell();
  const auto bad = [&](const std::string& why) { throw_frame_error(file_.name(), frame, start, why); };
  unsigned char b[16];  // 12 header bytes, later the time and lambda (two doubles at most)
  read_exact(file_, b, 12);
  if (load_i32(b, true) != trr_magic)
    bad("bad magic number " + std::to_string(load_i32(b, true)) + " (TRR frames start with 1993)");
  const std::uint32_t version_length = load_u32(b + 8, true);
  if (version_length > 128) bad("bad version string length " + std::to_string(version_length));
  unsigned char rest[128 + 13 * 4 + 16];
  read_exact(file_, rest, ((version_length + 3) & ~3u) + 13 * 4);
  const unsigned char* ints = rest + ((version_length + 3) & ~3u);
  const auto field = [&](int i) { return std::int64_t(load_i32(ints + 4 * i, true)); };
  TrrHeader h;
  h.box = field(2), h.vir = field(3), h.pres = field(4);
  h.x = field(7), h.v = field(8), h.f = field(9);
  h.atoms = field(10), h.step = field(11);
  for (std::int64_t size : {h.box, h.vir, h.pres, h.x, h.v, h.f})
    if (size < 0) bad("negative block size " + std::to_string(size));
  if (h.atoms <= 0) bad("atom count " + std::to_string(h.atoms));
  if (atoms_ && std::size_t(h.atoms) != atoms_)
    bad("atom count " + std::to_string(h.atoms) + ", the first frame has " + std::to_string(atoms_));
  const std::int64_t vector_bytes = 3 * h.atoms;
  if (h.box) h.real_size = int(h.box / 9);
  else if (h.x) h.real_size = int(h.x / vector_bytes);
  else if (h.v) h.real_size = int(h.v / vector_bytes);
  else if (h.f) h.real_size = int(h.f / vector_bytes);
  if (h.real_size != 4 && h.real_size != 8) bad("cannot tell float from double from the sizes");
  for (std::int64_t size : {h.x, h.v, h.f})
    if (size && size != vector_bytes * h.real_size) bad("block size " + std::to_string(size) +
                                                        " does not fit the atom count");
  read_exact(file_, b, 2 * std::size_t(h.real_size));
  h.time = h.real_size == 4 ? load_f32(b, true) : load_f64(b, true);
  h.header_bytes = file_.tell() - start;
  // Blocks past the end of the file: a truncated frame (or a damaged size, caught here before
  // anything that large is allocated).
  if (start + h.record_bytes() > file_.size()) throw ShortRead{start + h.record_bytes()};
  return h;
}

// Passes over records without coordinates; leaves the file after the header of the next record
// with them, or returns nullopt at the end of the file.
std::optional<TrrHeader> TrrReader::next_record_with_coordinates(std::int64_t frame) {
  while (file_.left() > 0) {
    const std::uint64_t start = file_.tell();
    const TrrHeader h = read_header(frame);
    if (h.x) return h;
    file_.seek(start + h.record_bytes());
  }
  return std::nullopt;
}

std::uint64_t TrrReader::measure_frame(std::int64_t frame, FrameInfo* info) {
  const std::uint64_t start = file_.tell();
  const auto h = next_record_with_coordinates(frame);
  if (!h) return 0;
  if (info) info->step = h->step, info->time_ps = h->time;  // the box would need a read
  return file_.tell() - h->header_bytes + h->record_bytes() - start;
}

void TrrReader::read_reals(std::size_t count, int real_size, double scale, float* out) {
  buffer_.resize(count * std::size_t(real_size));
  read_exact(file_, buffer_.data(), buffer_.size());
  const unsigned char* p = buffer_.data();
  if (real_size == 4)
    for (std::size_t i = 0; i < count; ++i) out[i] = float(load_f32(p + 4 * i, true) * scale);
  else
    for (std::size_t i = 0; i < count; ++i) out[i] = float(load_f64(p + 8 * i, true) * scale);
}

bool TrrReader::decode_frame(std::int64_t frame, float* xyz, FrameInfo& info) {
  const auto found = next_record_with_coordinates(frame);
  if (!found) return false;
  const TrrHeader& h = *found;
  info = FrameInfo{};
  info.step = h.step;
  info.time_ps = h.time;
  if (h.box) {
    float m[9];
    read_reals(9, h.real_size, 10.0, m);  // nm → Å
    info.box = cell_parameters_from_vectors(
        {{{m[0], m[1], m[2]}, {m[3], m[4], m[5]}, {m[6], m[7], m[8]}}});
  }
  file_.seek(file_.tell() + std::uint64_t(h.vir + h.pres));
  read_reals(3 * atoms_, h.real_size, 10.0, xyz);
  // v and f are passed over: the next frame starts after them.
  file_.seek(file_.tell() + std::uint64_t(h.v + h.f));
  return true;
}

}  // namespace

std::unique_ptr<TrajectoryReader> open_trr(const std::filesystem::path& path) {
  return std::make_unique<TrrReader>(path);
}

}  // namespace dcsgrid::io::detail
