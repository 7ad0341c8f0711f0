// Internal to the map writers: a binary/text output file with every stdio call checked, whose
// errors name the file the user asked for (not the temporary it is written under).
#pragma once
#include <array>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "dcsgrid/core/grid.hpp"

struct gzFile_s;

namespace dcsgrid::io {

class OutputFile {
 public:
  enum class Compression { none, gzip };
  // Opens disk_path for writing; shown is the name used in error messages. With gzip the bytes
  // written are compressed into one gzip stream (zlib, default level).
  OutputFile(const std::filesystem::path& disk_path, std::filesystem::path shown,
             Compression compression = Compression::none);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // closes without checking when close() was not reached (an error is under way)

  void write(const void* bytes, std::size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Flushes and closes; throws Error when the data did not all reach the file (a full disk).
  void close();

 private:
  [[noreturn]] void fail(const std::string& what) const;
  std::FILE* file_ = nullptr;
  gzFile_s* gz_ = nullptr;
  std::filesystem::path shown_;
};

// Writes a map's values (x fastest in memory) as text listed with x slowest and z fastest (the
// order of OpenDX and cube files), each the shortest text that reads back as the same float32: a
// line ends after per_line values, after each z-row too when rows_on_own_lines, and at the end.
void write_values_z_fastest(OutputFile& out, const GridSpec& grid, const float* data,
                            std::size_t per_line, bool rows_on_own_lines);

// Shortest text that reads back as the same number ("0.5", "-12.25", "1e-07").
std::string shortest(double value);
// Metadata text on one line (line breaks become spaces), cut to max_length characters ("..." at
// the end) where a format's readers take lines of bounded length.
std::string one_line(std::string text, std::size_t max_length = std::string::npos);
std::string shortest(float value);
// "(x, y, z)", each number as above.
std::string shortest(const std::array<double, 3>& values);

}  // namespace dcsgrid::io
