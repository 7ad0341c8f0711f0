// Helpers of the I/O benchmarks: test values and fsync of a written file.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <vector>

namespace dcsgrid::bench {

// n floats in a repeating ramp (never all equal, so nothing compresses to nothing).
inline std::vector<float> ramp(std::size_t n) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = float(i % 1000) * 0.001f - 0.5f;
  return values;
}

// The file's data on the disk (what `dd conv=fsync` waits for).
inline void fsync_file(const std::filesystem::path& path) {
  const int descriptor = ::open(path.c_str(), O_RDONLY);
  if (descriptor >= 0) {
    (void)fsync(descriptor);
    ::close(descriptor);
  }
}

}  // namespace dcsgrid::bench
