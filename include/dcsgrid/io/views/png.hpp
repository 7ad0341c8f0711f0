// PNG output of a picture held in memory (the rendered surface, analysis/render.hpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

namespace dcsgrid::io {

// Pixels row by row from the top, 4 bytes each (red, green, blue, alpha; alpha 255 = opaque).
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;
};

// Writes 8-bit PNG (zlib's deflate): RGB when every pixel is opaque, else RGBA. Atomic (AtomicFile);
// throws Error naming the file when it cannot be written, or when the image is empty or its
// buffer does not hold width × height pixels.
void write_png(const std::filesystem::path& path, const Image& image);

}  // namespace dcsgrid::io
