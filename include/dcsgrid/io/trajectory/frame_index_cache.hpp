// Frame indexes of XTC and TRR files kept between runs in a small file (batch keeps it next to
// its output), so that a resume or a re-run with another --frames seeks at once instead of
// passing over every frame header again. A file's index is reused only when the file still has
// the size, modification time and first and last KiB (hashed) it had when the index was made;
// otherwise it is rebuilt and the cache rewritten.
#pragma once
#include <cstddef>
#include <filesystem>

#include "dcsgrid/io/trajectory/trajectory.hpp"

namespace dcsgrid::io {

// How many of the stream's files needing an index took it from the cache, and how many were
// indexed by a pass over their frame headers.
struct FrameIndexUse {
  std::size_t cached = 0;
  std::size_t built = 0;
};

// Gives every file of `reader` that needs an index (XTC, TRR) its index: from `cache` where it
// matches the file, else built, after which the cache is rewritten (complete or not at all,
// through AtomicFile). A missing cache is normal; an unreadable or malformed one is ignored
// with a warning, as is a cache that cannot be written. Call before select_frames(); a reader
// that needs no index (a single DCD or NetCDF file) is left as it is.
FrameIndexUse apply_frame_index_cache(TrajectoryReader& reader, const std::filesystem::path& cache);

}  // namespace dcsgrid::io
