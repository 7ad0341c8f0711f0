// PNG by hand over zlib: signature, IHDR, one IDAT holding the deflated rows (each behind a
// filter byte: "Up", which turns the flat runs of a rendered picture into zeros), IEND.
#include "dcsgrid/io/views/png.hpp"

#include <array>
#include <string>

#include <zlib.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "io/maps/output_file.hpp"

namespace dcsgrid::io {
namespace {

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(std::uint8_t(v >> shift));
}

// length, type, data, CRC-32 of type and data.
void write_chunk(OutputFile& out, const char (&type)[5], const std::vector<std::uint8_t>& data) {
  std::vector<std::uint8_t> head;
  put_u32(head, std::uint32_t(data.size()));
  head.insert(head.end(), type, type + 4);
  uLong crc = crc32(0L, head.data() + 4, 4);
  crc = crc32_z(crc, data.data(), data.size());
  std::vector<std::uint8_t> tail;
  put_u32(tail, std::uint32_t(crc));
  out.write(head.data(), head.size());
  out.write(data.data(), data.size());
  out.write(tail.data(), tail.size());
}

// The rows as PNG's filter stream: each row's filter byte (2, Up) then its bytes minus those above.
std::vector<std::uint8_t> filtered_rows(const Image& image, int channels) {
  const std::size_t row_bytes = std::size_t(image.width) * channels;
  std::vector<std::uint8_t> rows((row_bytes + 1) * image.height);
  std::vector<std::uint8_t> previous(row_bytes, 0), current(row_bytes);
  for (int y = 0; y < image.height; ++y) {
    const std::uint8_t* pixel = image.rgba.data() + std::size_t(y) * image.width * 4;
    for (int x = 0; x < image.width; ++x)
      for (int c = 0; c < channels; ++c) current[std::size_t(x) * channels + c] = pixel[x * 4 + c];
    std::uint8_t* row = rows.data() + std::size_t(y) * (row_bytes + 1);
    row[0] = 2;
    for (std::size_t i = 0; i < row_bytes; ++i) row[i + 1] = std::uint8_t(current[i] - previous[i]);
    previous.swap(current);
  }
  return rows;
}

std::vector<std::uint8_t> deflated(const std::vector<std::uint8_t>& data, const std::string& file) {
  uLongf size = compressBound(uLong(data.size()));
  std::vector<std::uint8_t> out(size);
  if (compress2(out.data(), &size, data.data(), uLong(data.size()), Z_DEFAULT_COMPRESSION) != Z_OK)
    throw Error(file + ": zlib could not compress the picture (out of memory?)");
  out.resize(size);
  return out;
}

}  // namespace

void write_png(const std::filesystem::path& path, const Image& image) {
  const std::string name = printable(path.string());
  // 2^30 pixels keeps every size below within zlib's 32-bit lengths.
  if (image.width <= 0 || image.height <= 0 || std::int64_t(image.width) * image.height > (1 << 30))
    throw Error(name + ": a picture of " + std::to_string(image.width) + " × " +
                std::to_string(image.height) + " pixels cannot be written (1 to 2^30 pixels)");
  if (image.rgba.size() != std::size_t(image.width) * image.height * 4)
    throw Error(name + ": the picture's buffer does not hold width × height RGBA pixels");
  bool opaque = true;
  for (std::size_t i = 3; i < image.rgba.size() && opaque; i += 4) opaque = image.rgba[i] == 255;
  const int channels = opaque ? 3 : 4;

  std::vector<std::uint8_t> header;
  put_u32(header, std::uint32_t(image.width));
  put_u32(header, std::uint32_t(image.height));
  // bit depth 8; colour type 2 (RGB) or 6 (RGBA); deflate; adaptive filters; no interlace
  header.insert(header.end(), {8, std::uint8_t(opaque ? 2 : 6), 0, 0, 0});
  const std::vector<std::uint8_t> data = deflated(filtered_rows(image, channels), name);

  AtomicFile target(path);
  OutputFile out(target.temp_path(), path);
  static constexpr std::array<std::uint8_t, 8> kSignature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  out.write(kSignature.data(), kSignature.size());
  write_chunk(out, "IHDR", header);
  write_chunk(out, "IDAT", data);
  write_chunk(out, "IEND", {});
  out.close();
  target.commit();
}

}  // namespace dcsgrid::io
