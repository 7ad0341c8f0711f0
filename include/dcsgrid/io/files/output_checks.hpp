// Checks on where outputs will go, made before any compute: a run must not spend its hours and
// then fail for want of a writable folder or of disk space.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/maps/io.hpp"

namespace dcsgrid::io {

// Throws Error naming `output` when its folder does not exist, `output` is a folder, or the
// folder takes no new file (read-only file system, permissions, an immutable folder): a probe
// file is created there and removed, which asks the file system itself instead of guessing from
// mode bits (root passes every mode check).
void require_writable_output(const std::filesystem::path& output);

// The files a map output writes: the output and its format's sidecar, if any (HDF5's XDMF).
std::vector<std::filesystem::path> files_written(const std::filesystem::path& output, MapFormat format);

// One rule for every file a run writes, sidecars included, checked before any work: none is one
// of `inputs`, no two outputs write one file (-o b.h5 -o b.hdf5 share b.xmf; the same file under
// two spellings), and an existing sidecar is replaced only when it is ours
// (require_replaceable_sidecar). Throws Error naming the files.
struct MapOutputPath {
  std::filesystem::path path;
  MapFormat format = nullptr;  // never left null: map_format_from_path(path)
};
void require_outputs_apart(const std::vector<MapOutputPath>& outputs,
                           const std::vector<std::filesystem::path>& inputs);

// Bytes free to this user on the file system that holds the existing `path` (statvfs).
std::uint64_t free_bytes(const std::filesystem::path& path);

// An output file and the bytes it will take at least.
struct PlannedOutput {
  std::filesystem::path path;
  std::uint64_t bytes = 0;
};
// Throws Error, with the bytes needed and free, when the outputs on one file system need more
// than it has free. An output replacing an old file needs its whole size: the old one stays
// until the new one is complete.
void require_free_space(const std::vector<PlannedOutput>& outputs);

// The least a map file of `maps` maps on `grid` takes: the format's least_value_bytes a point
// (float32 for HDF5 and CCP4, a digit and a separator for the text formats, nothing certain for
// gzipped ones), times the maps where it holds several, nothing certain when compressing.
std::uint64_t least_map_bytes(MapFormat format, const GridSpec& grid, std::size_t maps,
                              const WriteOptions& options);

}  // namespace dcsgrid::io
