#include "io/hdf5/chunk_filters.hpp"

#include <zlib.h>

#include <cstring>
#include <string>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::io::hdf5 {

std::optional<ShuffleDeflate> shuffle_deflate_filters(hid_t create_plist) {
  if (H5Pget_nfilters(create_plist) != 2) return std::nullopt;
  unsigned flags = 0;
  std::size_t values = 1;
  unsigned level = 0;
  char name[16];
  if (H5Pget_filter2(create_plist, 0, &flags, nullptr, nullptr, sizeof name, name, nullptr) !=
      H5Z_FILTER_SHUFFLE)
    return std::nullopt;
  if (H5Pget_filter2(create_plist, 1, &flags, &values, &level, sizeof name, name, nullptr) !=
          H5Z_FILTER_DEFLATE ||
      values < 1 || level > 9)
    return std::nullopt;
  return ShuffleDeflate{int(level)};
}

std::vector<std::vector<unsigned char>> encode_chunks(std::span<const float* const> chunks,
                                                      std::size_t chunk_values, const ShuffleDeflate& filters) {
  const std::size_t count = chunks.size();
  std::vector<std::vector<unsigned char>> encoded(count);
  const std::size_t bytes = chunk_values * sizeof(float);
  int failed = Z_OK;
#pragma omp parallel num_threads(team_size()) if (count > 1)
  {
    std::vector<unsigned char> shuffled(bytes);
#pragma omp for schedule(dynamic, 1)
    for (std::size_t c = 0; c < count; ++c) {
      const auto* in = reinterpret_cast<const unsigned char*>(chunks[c]);
      for (std::size_t v = 0; v < chunk_values; ++v)
        for (std::size_t b = 0; b < sizeof(float); ++b) shuffled[b * chunk_values + v] = in[v * sizeof(float) + b];
      uLongf size = compressBound(uLong(bytes));
      encoded[c].resize(size);
      const int status = compress2(encoded[c].data(), &size, shuffled.data(), uLong(bytes), filters.level);
      if (status != Z_OK) {
#pragma omp critical
        failed = status;
      }
      encoded[c].resize(size);
    }
  }
  if (failed != Z_OK)
    throw Error("deflate of a map chunk failed (zlib status " + std::to_string(failed) + ")");
  return encoded;
}

}  // namespace dcsgrid::io::hdf5
