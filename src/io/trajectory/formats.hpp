// Shared by the trajectory readers: a binary file with byte offsets, byte-order loads, errors
// that name file/frame/offset, and the per-format factories behind open_trajectory().
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/trajectory/trajectory.hpp"

namespace dcsgrid::io::detail {

// A read-only file that knows its size and the offset of the next byte.
class BinaryFile {
 public:
  explicit BinaryFile(const std::filesystem::path& path);  // InputError when it cannot be read
  ~BinaryFile();
  BinaryFile(const BinaryFile&) = delete;
  BinaryFile& operator=(const BinaryFile&) = delete;

  const std::string& name() const { return name_; }
  std::uint64_t size() const { return size_; }
  std::uint64_t tell() const { return offset_; }
  std::uint64_t left() const { return offset_ < size_ ? size_ - offset_ : 0; }
  void seek(std::uint64_t offset);
  // Reads n bytes, or fewer at the end of the file; returns how many.
  std::size_t read_some(void* dst, std::size_t n);
  // Reads n bytes at `offset` straight into dst (no copy through the stream's buffer), leaving
  // the stream where it was; returns how many (fewer at the end of the file).
  std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n);

 private:
  std::FILE* file_ = nullptr;
  std::string name_;
  std::uint64_t size_ = 0, offset_ = 0;
};

// Loads from bytes in the given order (big = true for XDR and big-endian DCD).
inline std::uint32_t load_u32(const unsigned char* p, bool big) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return big == (std::endian::native == std::endian::big) ? v : __builtin_bswap32(v);
}
inline std::uint64_t load_u64(const unsigned char* p, bool big) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return big == (std::endian::native == std::endian::big) ? v : __builtin_bswap64(v);
}
inline std::int32_t load_i32(const unsigned char* p, bool big) {
  return std::int32_t(load_u32(p, big));
}
inline float load_f32(const unsigned char* p, bool big) {
  return std::bit_cast<float>(load_u32(p, big));
}
inline double load_f64(const unsigned char* p, bool big) {
  return std::bit_cast<double>(load_u64(p, big));
}

// InputError "FILE: frame F (byte offset O): PROBLEM".
[[noreturn]] void throw_frame_error(const std::string& file, std::int64_t frame,
                                    std::uint64_t offset, const std::string& problem);

// Thrown by read_exact when the file ends first; the readers turn it into a Truncation when a
// frame was cut short (it never escapes them).
struct ShortRead {
  std::uint64_t wanted_end;  // offset the read needed to reach
};
// Reads exactly n bytes or throws ShortRead.
void read_exact(BinaryFile& file, void* dst, std::size_t n);

// A stream of frames of varying size, each starting with a header that gives its length
// (XTC, TRR): sequential reading and skipping, plus an index of frame offsets for seeking.
class SizedFrameReader : public TrajectoryReader, public IndexedTrajectory {
 public:
  explicit SizedFrameReader(const std::filesystem::path& path) : file_(path) {}
  bool next(float* xyz, FrameInfo& info) override;
  bool skip(FrameInfo& info) override;
  bool can_seek() const override { return true; }
  void seek(std::int64_t frame) override;
  std::optional<std::int64_t> frame_count() const override;
  std::vector<std::string> files() const override { return {file_.name()}; }
  std::size_t atom_count() const override { return atoms_; }
  bool needs_index(std::size_t file) const override { return file == 0; }
  const std::vector<std::uint64_t>& frame_offsets(std::size_t file = 0) override;
  void set_frame_offsets(std::vector<std::uint64_t> offsets, std::size_t file = 0) override;

 protected:
  // Reads the frame header at the current offset (frame `frame`) and returns the frame's whole
  // length in bytes, or 0 when the rest of the file holds no more frames (TRR: records without
  // coordinates only); the file is left anywhere within the frame. Fills info's step and time
  // (and the box where the header holds it) when info is given.
  virtual std::uint64_t measure_frame(std::int64_t frame, FrameInfo* info) = 0;
  // Decodes the frame at the current offset; false when there is none (as measure_frame's 0).
  virtual bool decode_frame(std::int64_t frame, float* xyz, FrameInfo& info) = 0;
  // The end of a subclass's constructor: the atom count its first header gave, and reading
  // starts again at frame 0.
  void start(std::size_t atoms) {
    atoms_ = atoms;
    file_.seek(0);
  }

  BinaryFile file_;
  std::size_t atoms_ = 0;

 private:
  void record_truncation(std::uint64_t start, const ShortRead& s);
  void check_file_number(std::size_t file) const;
  std::vector<std::uint64_t> offsets_;  // complete frames, once indexed
  bool indexed_ = false, done_ = false;
  std::int64_t frame_ = 0;              // number of the frame at the file's offset
};

std::unique_ptr<TrajectoryReader> open_dcd(const std::filesystem::path& path);
std::unique_ptr<TrajectoryReader> open_xtc(const std::filesystem::path& path);
std::unique_ptr<TrajectoryReader> open_trr(const std::filesystem::path& path);
std::unique_ptr<TrajectoryReader> open_netcdf(const std::filesystem::path& path);
bool netcdf_available();

}  // namespace dcsgrid::io::detail
