// The HDF5 write path the I/O benchmarks measure against: maps chunked as the writers chunk them,
// written block by block through H5Dwrite and a 32 MiB chunk cache (what every filtered dataset
// still takes, and what unfiltered ones took before direct chunk writes).
#pragma once
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "dcsgrid/io/hdf5/maps.hpp"
#include "io_bench_util.hpp"

namespace dcsgrid::bench {

// A float32 dataset /potential [leading...][nz][ny][nx] chunked as the writers chunk maps, with
// the Fletcher32 filter when checksum; allocate_early: storage allocated at creation (as batch
// files are). Without fill writes where the filter allows it (HDF5 refuses "never fill" for
// filtered chunks).
inline io::hdf5::Handle create_cached_map_dataset(hid_t file, const std::vector<hsize_t>& leading,
                                                  const GridSpec& grid, bool checksum,
                                                  bool allocate_early,
                                                  const std::filesystem::path& path) {
  namespace h5 = io::hdf5;
  const std::vector<hsize_t> dims =
      h5::map_dims(leading.empty() ? std::nullopt : std::optional<std::size_t>(leading[0]), grid);
  h5::Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
  h5::Handle plist(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  const std::vector<hsize_t> chunk = h5::map_chunk(leading, grid);
  h5::check(H5Pset_chunk(plist.get(), int(chunk.size()), chunk.data()), path, "set chunks");
  if (checksum) h5::check(H5Pset_fletcher32(plist.get()), path, "enable Fletcher32");
  if (allocate_early) h5::check(H5Pset_alloc_time(plist.get(), H5D_ALLOC_TIME_EARLY), path, "allocate early");
  if (!checksum) h5::check(H5Pset_fill_time(plist.get(), H5D_FILL_TIME_NEVER), path, "no fill");
  h5::Handle access(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose);
  h5::check(H5Pset_chunk_cache(access.get(), 521, std::size_t(32) << 20, 1.0), path, "chunk cache");
  return h5::checked_handle(H5Dcreate2(file, "potential", H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                                       plist.get(), access.get()),
                            H5Dclose, path, "create /potential");
}

// The block [start, start + count) of a dataset through H5Dwrite (and its chunk cache).
inline void write_hyperslab(hid_t dataset, const std::vector<hsize_t>& start,
                            const std::vector<hsize_t>& count, const float* data,
                            const std::filesystem::path& path) {
  namespace h5 = io::hdf5;
  h5::Handle file_space(H5Dget_space(dataset), H5Sclose);
  h5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                                nullptr),
            path, "select");
  h5::Handle memory(H5Screate_simple(int(count.size()), count.data(), nullptr), H5Sclose);
  h5::check(H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory.get(), file_space.get(), H5P_DEFAULT, data),
            path, "write");
}

// A map file: created, written in slabs of slab_planes planes, closed (and fsync'd when sync).
inline void write_map_through_cache(const std::filesystem::path& path, const GridSpec& grid,
                                    const float* data, bool checksum, bool sync,
                                    std::int64_t slab_planes) {
  namespace h5 = io::hdf5;
  std::filesystem::remove(path);
  {
    h5::Handle file = h5::create_file(path, path, "create");
    h5::Handle dataset = create_cached_map_dataset(file.get(), {}, grid, checksum, false, path);
    for (std::int64_t z = 0; z < grid.nz(); z += slab_planes) {
      const std::int64_t planes = std::min(slab_planes, grid.nz() - z);
      write_hyperslab(dataset.get(), {hsize_t(z), 0, 0}, {hsize_t(planes), hsize_t(grid.ny()), hsize_t(grid.nx())},
                      data + std::size_t(z) * grid.plane_size(), path);
    }
    h5::check(dataset.close(), path, "close /potential");
    h5::check(file.close(), path, "close");
  }
  if (sync) fsync_file(path);
}

}  // namespace dcsgrid::bench
