#include "io/maps/output_file.hpp"

#include <zlib.h>

#include <algorithm>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"

namespace dcsgrid::io {

OutputFile::OutputFile(const std::filesystem::path& disk_path, std::filesystem::path shown,
                       Compression compression)
    : shown_(output_name(shown)) {
  errno = 0;
  if (compression == Compression::gzip) {
    gz_ = gzopen(disk_path.c_str(), "wb");
    if (!gz_) fail("cannot create the file");
    return;
  }
  file_ = std::fopen(disk_path.c_str(), "wb");
  if (!file_) fail("cannot create the file");
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
  if (gz_) gzclose_w(gz_);
}

void OutputFile::write(const void* bytes, std::size_t size) {
  if (!size) return;
  if (gz_) {
    // gzwrite takes an unsigned count: large blocks go in pieces.
    const char* p = static_cast<const char*>(bytes);
    for (std::size_t done = 0; done < size;) {
      const unsigned piece = unsigned(std::min<std::size_t>(size - done, 1u << 30));
      if (gzwrite(gz_, p + done, piece) != int(piece)) fail("cannot write");
      done += piece;
    }
    return;
  }
  if (std::fwrite(bytes, 1, size, file_) != size) fail("cannot write");
}

void OutputFile::close() {
  if (gz_) {
    gzFile_s* gz = gz_;
    gz_ = nullptr;
    if (gzclose_w(gz) != Z_OK) fail("cannot finish writing");
    return;
  }
  const bool flushed = std::fflush(file_) == 0 && !std::ferror(file_);
  const int saved_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed) errno = saved_errno;
  if (!flushed || !closed) fail("cannot finish writing");
}

void OutputFile::fail(const std::string& what) const {
  throw Error(shown_.string() + ": " + what + (errno ? std::string(": ") + std::strerror(errno) : ""));
}

void write_values_z_fastest(OutputFile& out, const GridSpec& grid, const float* data,
                            std::size_t per_line, bool rows_on_own_lines) {
  constexpr std::size_t block_bytes = std::size_t(1) << 20;
  std::string block;
  block.reserve(block_bytes + 64);
  std::size_t on_line = 0, n = 0;
  for (std::int64_t i = 0; i < grid.nx(); ++i)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t k = 0; k < grid.nz(); ++k) {
        char number[32];
        const auto end = std::to_chars(number, number + sizeof number, data[grid.index(i, j, k)]).ptr;
        block.append(number, end);
        ++on_line;
        ++n;
        const bool line_end = on_line == per_line || n == grid.point_count() ||
                              (rows_on_own_lines && k + 1 == grid.nz());
        block += line_end ? '\n' : ' ';
        if (line_end) on_line = 0;
        if (block.size() >= block_bytes) {
          out.write(block);
          block.clear();
        }
      }
  out.write(block);
}

namespace {
template <typename T>
std::string shortest_text(T value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}
}  // namespace

std::string shortest(double value) { return shortest_text(value); }

std::string one_line(std::string text, std::size_t max_length) {
  if (text.size() > max_length) text = text.substr(0, max_length - 3) + "...";
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}
std::string shortest(float value) { return shortest_text(value); }
std::string shortest(const std::array<double, 3>& values) {
  return "(" + shortest(values[0]) + ", " + shortest(values[1]) + ", " + shortest(values[2]) + ")";
}

}  // namespace dcsgrid::io
