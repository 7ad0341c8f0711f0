// Whole float32 chunks through HDF5's shuffle and deflate filters, on all cores: HDF5 runs its
// filter pipeline on the writing thread alone (one core deflated about 60 MB/s, a tenth of what
// a disk takes: docs/performance.md), so --compress encodes the chunks itself and hands them to
// H5Dwrite_chunk as stored bytes. HDF5 reads them back through its own pipeline.
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace dcsgrid::io::hdf5 {

// The filters of a dataset whose chunks this file can encode: shuffle, then deflate.
struct ShuffleDeflate {
  int level = 0;
};

// The dataset creation properties' filters when they are exactly shuffle then deflate.
std::optional<ShuffleDeflate> shuffle_deflate_filters(hid_t create_plist);

// Each chunk of chunk_values floats, shuffled (the bytes of every value grouped by significance,
// as HDF5's shuffle filter stores them) and deflated (a zlib stream, as HDF5's deflate filter
// stores it), the chunks encoded in parallel. Throws Error when zlib fails.
std::vector<std::vector<unsigned char>> encode_chunks(std::span<const float* const> chunks,
                                                      std::size_t chunk_values, const ShuffleDeflate& filters);

}  // namespace dcsgrid::io::hdf5
