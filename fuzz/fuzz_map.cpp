// Map readers (io::read_map, as `info`, `compare` and `sample` read maps): OpenDX, CCP4/MRC,
// Gaussian cube and HDF5 single maps, one target each (FUZZ_FILE_NAME gives the extension). The
// grid a reader returns must hold exactly the values it read.
#include <string>

#include "dcsgrid/io/maps/io.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path path = dcsgrid::fuzz::input_file(data, size, FUZZ_FILE_NAME);
  dcsgrid::fuzz::expect_clean(path, [&] {
    const dcsgrid::io::MapFile map = dcsgrid::io::read_map(path);
    if (map.grid.point_count() != map.data.size())
      dcsgrid::fuzz::finding("map data size disagrees with its dims",
                             std::to_string(map.data.size()).c_str());
  });
  return 0;
}
