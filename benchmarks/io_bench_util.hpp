// Helpers of the I/O benchmarks: test values and fsync of a written file.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
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

// Where a benchmark writes: a disk folder (each write ends with fsync) or a memory file system.
struct Place {
  std::string name;
  std::filesystem::path dir;
  bool sync;
};

struct IoBenchOptions {
  std::vector<Place> places = {{"disk", "/tmp", true}, {"shm", "/dev/shm", false}};
  int repeats = 3;
  std::filesystem::path map;  // --map, for the benchmarks that take one
};

// --disk DIR, --shm DIR, --repeats N, and --map FILE where map_allowed; false, with a message,
// on anything else.
inline bool parse_io_bench_options(int argc, char** argv, bool map_allowed, IoBenchOptions& o) {
  for (int i = 1; i < argc; i += 2) {
    const std::string option = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", option.c_str());
      return false;
    }
    if (option == "--disk") o.places[0].dir = argv[i + 1];
    else if (option == "--shm") o.places[1].dir = argv[i + 1];
    else if (option == "--repeats") o.repeats = std::atoi(argv[i + 1]);
    else if (option == "--map" && map_allowed) o.map = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", option.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace dcsgrid::bench
