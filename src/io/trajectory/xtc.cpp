// GROMACS XTC: XDR (big-endian) frames
//   magic 1995, atoms, step, time (ps), box (3×3 nm), atoms again, then the coordinates:
//   up to 9 atoms as plain floats; otherwise precision, min/max integer corner, the first
//   "small" bit size and the bit stream (byte count, bytes padded to 4).
// The bit stream (xdr3dfcoord compression, as published with GROMACS): coordinates are scaled
// by the precision and rounded to integers. Each step reads one atom with the full bit width
// (the three integers packed into one mixed-radix number of the box's integer extents), then a
// flag; when set, 5 bits give a run length and a change of the small bit width (run mod 3 - 1).
// A run of run/3 atoms follows as small differences from the previous atom, packed the same
// way with the current small width. The first atom of a run swaps places with the full-width
// atom (water: O after H in the stream). The run length persists until a flag changes it.
#include <array>
#include <vector>

#include "io/trajectory/formats.hpp"

namespace dcsgrid::io::detail {
namespace {

constexpr std::int32_t xtc_magic = 1995;
constexpr int first_small_index = 9;
// Sizes of the "small" ranges by bit width index: about 2^(i/3), so three of them fit i bits.
constexpr std::array<std::uint32_t, 73> magic_ints = {
    0,       0,       0,       0,       0,       0,        0,        0,        0,       8,
    10,      12,      16,      20,      25,      32,       40,       50,       64,      80,
    101,     128,     161,     203,     256,     322,      406,      512,      645,     812,
    1024,    1290,    1625,    2048,    2580,    3250,     4096,     5060,     6501,    8192,
    10321,   13003,   16384,   20642,   26007,   32768,    41285,    52015,    65536,   82570,
    104031,  131072,  165140,  208063,  262144,  330280,   416127,   524287,   660561,  832255,
    1048576, 1321122, 1664510, 2097152, 2642245, 3329021,  4194304,  5284491,  6658042, 8388607,
    10568983, 13316085, 16777216};

// Bits of `value` (0 → 0), as the format counts them.
int bit_width_of(unsigned __int128 value) {
  int bits = 0;
  while (value) ++bits, value >>= 1;
  return bits;
}

// Most-significant-bit-first reader over the frame's bytes; reading past the end sets overrun.
class BitReader {
 public:
  BitReader(const unsigned char* data, std::size_t size) : p_(data), end_(data + size) {}
  std::uint32_t bits(int n) {  // n ≤ 32
    while (filled_ < n) {
      acc_ = (acc_ << 8) | (p_ < end_ ? *p_++ : (overrun_ = true, 0));
      filled_ += 8;
    }
    filled_ -= n;
    return std::uint32_t((acc_ >> filled_) & ((std::uint64_t(1) << n) - 1));
  }
  // Three integers packed as one number of `nbits` bits in the radices sizes[0..2] (sizes[0]
  // varies fastest), stored least significant byte first.
  void packed_ints(int nbits, const std::uint32_t sizes[3], std::int32_t out[3]) {
    if (nbits <= 64) {
      std::uint64_t v = 0;
      int shift = 0;
      for (; nbits >= 8; nbits -= 8, shift += 8) v |= std::uint64_t(bits(8)) << shift;
      if (nbits > 0) v |= std::uint64_t(bits(nbits)) << shift;
      split(v, sizes, out);
    } else {
      unsigned __int128 v = 0;
      int shift = 0;
      for (; nbits >= 8; nbits -= 8, shift += 8) v |= (unsigned __int128)(bits(8)) << shift;
      if (nbits > 0) v |= (unsigned __int128)(bits(nbits)) << shift;
      split(v, sizes, out);
    }
  }
  bool overrun() const { return overrun_; }

 private:
  template <class U>
  static void split(U v, const std::uint32_t sizes[3], std::int32_t out[3]) {
    out[2] = std::int32_t(v % sizes[2]);
    v /= sizes[2];
    out[1] = std::int32_t(v % sizes[1]);
    out[0] = std::int32_t(v / sizes[1]);
  }
  const unsigned char* p_;
  const unsigned char* end_;
  std::uint64_t acc_ = 0;
  int filled_ = 0;
  bool overrun_ = false;
};

struct CompressedHeader {
  float precision = 0;
  std::int32_t minint[3]{}, maxint[3]{};
  std::int32_t small_index = 0;
  std::uint32_t bytes = 0;
};

class XtcReader final : public SizedFrameReader {
 public:
  explicit XtcReader(const std::filesystem::path& path) : SizedFrameReader(path) {
    unsigned char head[8];
    const bool whole = file_.read_some(head, 8) == 8;
    if (whole && load_i32(head, true) == 2023)
      throw InputError(file_.name(), 0, "GROMACS' XTC layout for more than 298 million atoms "
                                        "(magic number 2023) is not supported");
    if (!whole || load_i32(head, true) != xtc_magic)
      throw InputError(file_.name(), 0, "not an XTC file: no magic number 1995 at the start");
    const std::int32_t atoms = load_i32(head + 4, true);
    // A compressed atom takes 3 bits or more: more atoms than 3 per byte is a damaged header.
    if (atoms <= 0 || std::uint64_t(atoms) > 3 * file_.size())
      throw InputError(file_.name(), 0, "impossible atom count " + std::to_string(atoms) +
                                            " for a file of " + std::to_string(file_.size()) +
                                            " bytes");
    start(std::size_t(atoms));
  }

 protected:
  std::uint64_t measure_frame(std::int64_t frame, FrameInfo* info) override;
  bool decode_frame(std::int64_t frame, float* xyz, FrameInfo& info) override;

 private:
  void read_head(std::int64_t frame, FrameInfo* info);
  CompressedHeader read_compressed_header(std::int64_t frame, std::uint64_t start);
  void decompress(std::int64_t frame, std::uint64_t start, const CompressedHeader& h,
                  float* xyz);

  unsigned char head_[56];
  std::vector<unsigned char> bytes_;
};

// The 56 bytes before the coordinates; checks magic and atom counts.
void XtcReader::read_head(std::int64_t frame, FrameInfo* info) {
  const std::uint64_t start = file_.tell();
  read_exact(file_, head_, sizeof head_);
  const std::int32_t magic = load_i32(head_, true);
  if (magic != xtc_magic)
    throw_frame_error(file_.name(), frame, start,
                      "bad magic number " + std::to_string(magic) + " (XTC frames start with 1995)");
  const std::int32_t atoms = load_i32(head_ + 4, true), atoms2 = load_i32(head_ + 52, true);
  if (atoms != std::int32_t(atoms_) || atoms2 != atoms)
    throw_frame_error(file_.name(), frame, start,
                      "atom count " + std::to_string(atoms) + "/" + std::to_string(atoms2) +
                          ", the file's first frame has " + std::to_string(atoms_));
  if (!info) return;
  info->step = load_i32(head_ + 8, true);
  info->time_ps = load_f32(head_ + 12, true);
  std::array<std::array<double, 3>, 3> box;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) box[r][c] = 10.0 * load_f32(head_ + 16 + 12 * r + 4 * c, true);
  info->box = cell_parameters_from_vectors(box);
}

CompressedHeader XtcReader::read_compressed_header(std::int64_t frame, std::uint64_t start) {
  unsigned char b[36];
  read_exact(file_, b, sizeof b);
  CompressedHeader h;
  h.precision = load_f32(b, true);
  for (int k = 0; k < 3; ++k) {
    h.minint[k] = load_i32(b + 4 + 4 * k, true);
    h.maxint[k] = load_i32(b + 16 + 4 * k, true);
    if (std::int64_t(h.maxint[k]) - h.minint[k] >= 0x7fffffff || h.maxint[k] < h.minint[k])
      throw_frame_error(file_.name(), frame, start, "bad integer range in the coordinate header");
  }
  h.small_index = load_i32(b + 28, true);
  h.bytes = load_u32(b + 32, true);
  // At most 3·32 bits per atom plus the run flags: a larger count is corruption.
  if (h.bytes > 16 * atoms_ + 64)
    throw_frame_error(file_.name(), frame, start,
                      "compressed size " + std::to_string(h.bytes) + " bytes is impossible for " +
                          std::to_string(atoms_) + " atoms");
  if (!(h.precision > 0))
    throw_frame_error(file_.name(), frame, start,
                      "bad precision " + std::to_string(h.precision));
  if (h.small_index < first_small_index || h.small_index >= int(magic_ints.size()))
    throw_frame_error(file_.name(), frame, start,
                      "bad small-integer bit size " + std::to_string(h.small_index));
  return h;
}

std::uint64_t XtcReader::measure_frame(std::int64_t frame, FrameInfo* info) {
  const std::uint64_t start = file_.tell();
  read_head(frame, info);
  if (atoms_ <= 9) return sizeof head_ + 12 * atoms_;
  const CompressedHeader h = read_compressed_header(frame, start);
  return sizeof head_ + 36 + ((std::uint64_t(h.bytes) + 3) & ~std::uint64_t(3));
}

bool XtcReader::decode_frame(std::int64_t frame, float* xyz, FrameInfo& info) {
  const std::uint64_t start = file_.tell();
  info = FrameInfo{};
  read_head(frame, &info);
  if (atoms_ <= 9) {
    unsigned char b[12 * 9];
    read_exact(file_, b, 12 * atoms_);
    for (std::size_t i = 0; i < 3 * atoms_; ++i) xyz[i] = 10.0f * load_f32(b + 4 * i, true);
    return true;
  }
  const CompressedHeader h = read_compressed_header(frame, start);
  if (h.bytes > file_.left()) throw ShortRead{file_.tell() + h.bytes};
  bytes_.resize((std::size_t(h.bytes) + 3) & ~std::size_t(3));
  read_exact(file_, bytes_.data(), bytes_.size());
  decompress(frame, start, h, xyz);
  return true;
}

void XtcReader::decompress(std::int64_t frame, std::uint64_t start, const CompressedHeader& h,
                           float* xyz) {
  const auto corrupt = [&](const std::string& why) {
    throw_frame_error(file_.name(), frame, start, "corrupt compressed coordinates: " + why);
  };
  std::uint32_t sizes[3];
  unsigned __int128 product = 1;
  bool large = false;  // a range beyond 24 bits: each integer on its own bit width
  int widths[3];
  for (int k = 0; k < 3; ++k) {
    sizes[k] = std::uint32_t(std::int64_t(h.maxint[k]) - h.minint[k] + 1);
    large |= sizes[k] > 0xffffff;
    widths[k] = bit_width_of(sizes[k]);
    product *= sizes[k];
  }
  const int full_bits = bit_width_of(product);
  // Integers → nm → Å, rounded twice as the reference decoder (xdrfile) and MDAnalysis do.
  const float inverse_precision = 1.0f / h.precision;
  BitReader in(bytes_.data(), h.bytes);
  int small_index = h.small_index;
  std::int32_t small_half = std::int32_t(magic_ints[small_index] / 2);
  std::int32_t smaller_half = std::int32_t(magic_ints[std::max(first_small_index, small_index - 1)] / 2);
  std::uint32_t small_sizes[3];
  std::fill(small_sizes, small_sizes + 3, magic_ints[small_index]);
  const auto emit = [&](std::size_t atom, const std::int32_t c[3]) {
    for (int k = 0; k < 3; ++k) xyz[3 * atom + k] = float(c[k]) * inverse_precision * 10.0f;
  };
  std::uint32_t run = 0;
  for (std::size_t atom = 0; atom < atoms_;) {
    std::int32_t previous[3];
    if (large) {
      for (int k = 0; k < 3; ++k) previous[k] = std::int32_t(in.bits(widths[k]));
    } else {
      in.packed_ints(full_bits, sizes, previous);
    }
    // Sums in 64 bits, wrapped to 32 (defined in C++20): damaged data may overflow.
    for (int k = 0; k < 3; ++k) previous[k] = std::int32_t(std::int64_t(previous[k]) + h.minint[k]);
    int width_change = 0;
    if (in.bits(1)) {
      run = in.bits(5);
      width_change = int(run % 3) - 1;
      run -= run % 3;
    }
    if (atom + 1 + run / 3 > atoms_) corrupt("a run goes past the last atom");
    if (run == 0) {
      emit(atom++, previous);
    } else {
      for (std::uint32_t k = 0; k < run; k += 3) {
        std::int32_t current[3];
        in.packed_ints(small_index, small_sizes, current);
        for (int d = 0; d < 3; ++d)
          current[d] = std::int32_t(std::int64_t(current[d]) + previous[d] - small_half);
        emit(atom++, current);
        if (k == 0) emit(atom++, previous);  // the swapped pair: this atom came first
        std::copy(current, current + 3, previous);
      }
    }
    small_index += width_change;
    if (small_index < first_small_index || small_index >= int(magic_ints.size()))
      corrupt("small-integer bit size " + std::to_string(small_index) + " out of range");
    if (width_change < 0) {
      small_half = smaller_half;
      smaller_half = small_index > first_small_index ? std::int32_t(magic_ints[small_index - 1] / 2) : 0;
    } else if (width_change > 0) {
      smaller_half = small_half;
      small_half = std::int32_t(magic_ints[small_index] / 2);
    }
    std::fill(small_sizes, small_sizes + 3, magic_ints[small_index]);
    if (in.overrun()) corrupt("the bit stream ends before the last atom");
  }
}

}  // namespace

std::unique_ptr<TrajectoryReader> open_xtc(const std::filesystem::path& path) {
  return std::make_unique<XtcReader>(path);
}

}  // namespace dcsgrid::io::detail
