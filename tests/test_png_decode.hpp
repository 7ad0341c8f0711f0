// PNG pictures decoded by Pillow (tests/png_to_rgba.py), not by our own code: the tests of the
// rendered surface read their pixels through it.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace dcsgrid::test {

struct DecodedPng {
  int width = 0, height = 0;
  std::string mode;  // as stored: "RGB", "RGBA"
  std::vector<std::uint8_t> rgba;
  std::array<int, 4> pixel(int x, int y) const {
    const std::uint8_t* p = &rgba[(std::size_t(y) * width + x) * 4];
    return {p[0], p[1], p[2], p[3]};
  }
};

// The python3 that has Pillow, or "" (the caller skips, saying so).
inline std::string python_with_pillow() { return python_with("PIL"); }

// Decodes png with `python`; failure (Pillow refusing the file) is a test failure, reported with
// Pillow's message, and gives nullopt.
inline std::optional<DecodedPng> decode_png(const std::string& python, const std::filesystem::path& png) {
  const std::filesystem::path raw = png.string() + ".raw";
  const CommandResult r = run_command(python + " " + (source_dir() / "tests" / "png_to_rgba.py").string() +
                                      " '" + png.string() + "' '" + raw.string() + "'");
  if (r.status != 0) {
    ADD_FAILURE() << "Pillow could not read " << png << ": " << r.output;
    return std::nullopt;
  }
  DecodedPng d;
  std::ifstream in(raw, std::ios::binary);
  in >> d.width >> d.height >> d.mode;
  in.get();
  d.rgba.resize(std::size_t(d.width) * d.height * 4);
  in.read(reinterpret_cast<char*>(d.rgba.data()), std::streamsize(d.rgba.size()));
  if (!in) {
    ADD_FAILURE() << "short pixel data from " << raw;
    return std::nullopt;
  }
  return d;
}

}  // namespace dcsgrid::test
