// HDF5 under faults: a write that fails (disk full, file size limit) gives a clean error, removes
// the temporary and leaves the process able to exit and to write other files; corrupt input files
// (byte flips, truncations) read correctly or fail with InputError, never crash or hang; chunked
// maps of awkward dimensions are not padded to twice their size.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <thread>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/hdf5/maps.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "helpers.hpp"
#include "test_mutation_loop.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;

using test::run_in_child;

namespace {

// An analytic map: value = x + 10 y + 100 z at point (x, y, z) indices.
io::MapFile ramp_map(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  io::MapFile map;
  map.grid.origin = {-1.5, 2.0, 0.25};
  map.grid.spacing = {0.5, 0.5, 0.5};
  map.grid.dims = {nx, ny, nz};
  map.meta.units = "kT/e";
  map.data.resize(map.grid.point_count());
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x)
        map.data[std::size_t((z * ny + y) * nx + x)] = float(x + 10 * y + 100 * z);
  return map;
}

bool folder_is_empty(const fs::path& folder) { return fs::is_empty(folder); }

// In a child: writes a 7 MB map into `folder` where writing must fail; then the error must name
// the file and the cause, the folder must hold no temporary, and a map written elsewhere
// afterwards must read back (HDF5 still usable after the failed file).
int write_must_fail(const fs::path& folder, const fs::path& good_folder, const std::string& cause) {
  const io::MapFile map = ramp_map(139, 112, 113);
  const fs::path target = folder / "pot.h5";
  try {
    io::write_hdf5(target, map.grid, map.data.data(), map.meta);
    std::fprintf(stderr, "child: writing %s did not fail\n", target.c_str());
    return 2;
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.find(target.string()) == std::string::npos || message.find(cause) == std::string::npos ||
        std::count(message.begin(), message.end(), '\n') > 0) {
      std::fprintf(stderr, "child: unexpected message: %s\n", message.c_str());
      return 3;
    }
  }
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.path().filename().string().find("pot.h5") != std::string::npos) {
      std::fprintf(stderr, "child: %s left behind\n", entry.path().c_str());
      return 4;
    }
  const io::MapFile small = ramp_map(5, 4, 3);
  io::write_hdf5(good_folder / "after.h5", small.grid, small.data.data(), small.meta);
  if (io::read_hdf5(good_folder / "after.h5").data != small.data) return 5;
  return 0;
}

}  // namespace

// RLIMIT_FSIZE (SIGXFSZ ignored) makes every write beyond 1 MB fail with EFBIG: works anywhere.
// The write runs in a second thread (as batch writes do), and HDF5 must print nothing on stderr
// there: its error printing is set per thread.
TEST(IoHdf5Robust, WriteFailureFromFileSizeLimitIsACleanError) {
  const fs::path dir = test::temp_dir("h5_fsize");
  const fs::path stderr_file = dir / "stderr.txt";
  const std::string failure = run_in_child(
      [&] {
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit = {1 << 20, 1 << 20};
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
        if (!std::freopen(stderr_file.c_str(), "w", stderr)) return 11;
        const io::MapFile small = ramp_map(3, 3, 3);  // HDF5 used by this thread first
        io::write_hdf5(dir / "first.h5", small.grid, small.data.data(), small.meta);
        int result = 12;
        std::thread([&] { result = write_must_fail(dir, dir, std::strerror(EFBIG)); }).join();
        return result;
      },
      60);
  EXPECT_EQ(failure, "");
  std::ifstream in(stderr_file);
  const std::string printed{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(printed.find("HDF5-DIAG"), std::string::npos) << printed;
  fs::remove_all(dir);
}

// A real full file system: a 5 MB tmpfs (root only), filled to several levels before the write.
TEST(IoHdf5Robust, DiskFullOnTmpfsIsACleanError) {
  const fs::path dir = test::temp_dir("h5_full");
  const fs::path mount_point = dir / "full";
  fs::create_directories(mount_point);
  if (mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=5m") != 0) {
    fs::remove_all(dir);
    GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno)
                 << "): needs root; the file-size-limit test covers write failures";
  }
  for (int fill_kb : {0, 1000, 3000, 4500, 4990}) {
    SCOPED_TRACE("tmpfs filled with " + std::to_string(fill_kb) + " kB");
    {
      std::ofstream fill(mount_point / "fill", std::ios::binary | std::ios::trunc);
      const std::string block(1024, 'x');
      for (int k = 0; k < fill_kb; ++k) fill << block;
    }
    EXPECT_EQ(run_in_child([&] { return write_must_fail(mount_point, dir, std::strerror(ENOSPC)); }, 60),
              "");
    fs::remove(mount_point / "fill");
    EXPECT_TRUE(folder_is_empty(mount_point));
  }
  umount(mount_point.c_str());
  fs::remove_all(dir);
}

namespace {

bool same_grid(const GridSpec& a, const GridSpec& b) {
  return a.dims == b.dims && a.origin == b.origin && a.spacing == b.spacing;
}

// The values that differ between a and b (same size).
std::size_t differing(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return n;
}

// The outcome of reading a damaged map: 0 when it is a clean error naming the file, or a read
// whose values are those of the original except in the `damaged_values` the damage can reach
// (none when the damage missed the data; any when the header changed the grid).
int judge_map_read(const std::function<io::MapFile()>& read, const io::MapFile& original,
                   const fs::path& path, std::size_t damaged_values) {
  io::MapFile map;
  try {
    map = read();
  } catch (const Error& e) {
    if (std::string(e.what()).find(path.filename().string()) != std::string::npos) return 0;
    std::fprintf(stderr, "error without the file name: %s\n", e.what());
    return 3;
  }
  if (map.data.size() != map.grid.point_count()) return 4;
  if (!same_grid(map.grid, original.grid)) return 0;
  const std::size_t changed = differing(map.data, original.data);
  if (changed > damaged_values) {
    std::fprintf(stderr, "%zu values changed silently (damage reaches %zu)\n", changed, damaged_values);
    return 5;
  }
  return 0;
}

// How many float values of a raw-data layout the byte range [begin, end) can touch. Only damage
// inside the chunks' raw data may change values: everything else, the chunk addresses among it,
// is checksummed metadata in the 1.10 format, where damage is a clean error or a correct read.
std::size_t values_touched(const test::Mutation& m,
                           const std::vector<std::pair<std::size_t, std::size_t>>& data_ranges) {
  std::size_t n = 0;
  for (const auto& [first, last] : data_ranges)
    if (m.begin < last && m.end > first)
      n += (std::min(m.end, last) - std::max(m.begin, first)) / sizeof(float) + 2;
  return n;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (std::size_t i = 0; i < lines.size() && i < 20; ++i) text += "  " + lines[i] + "\n";
  return text;
}

}  // namespace

// Our own small .h5 map, damaged 400 ways (fixed seed) and at bits of its chunk's stored
// address: read_hdf5 reads it correctly (only values inside damaged raw data may differ) or throws
// an Error naming the file; no crash, no hang (a zeroed heap collection hung HDF5 for ever, a
// flipped heap index made it copy from a wild pointer).
TEST(IoHdf5Robust, DamagedHdf5MapReadsCorrectlyOrFailsCleanly) {
  const fs::path dir = test::temp_dir("h5_mutate");
  const io::MapFile original = ramp_map(9, 8, 7);
  io::MapMetadata meta = original.meta;
  meta.parameters["cutoff"] = "12 Å";
  io::write_hdf5(dir / "intact.h5", original.grid, original.data.data(), meta);
  ASSERT_EQ(io::read_hdf5(dir / "intact.h5").data, original.data);
  const auto data_ranges = test::chunk_ranges(dir / "intact.h5");
  ASSERT_FALSE(data_ranges.empty());

  const std::vector<char> bytes = test::file_bytes(dir / "intact.h5");
  const auto addresses = test::address_positions(bytes, data_ranges);
  ASSERT_FALSE(addresses.empty());

  const fs::path damaged = dir / "damaged.h5";
  auto list = test::mutations(bytes, test::mutation_count(400), 21);
  for (auto& m : test::address_flips(bytes, addresses)) list.push_back(std::move(m));
  const auto failures = test::run_mutations(list, damaged, [&](const test::Mutation& m) {
    return judge_map_read([&] { return io::read_hdf5(damaged); }, original, damaged,
                          values_touched(m, data_ranges));
  });
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << list.size()
                                << " damaged files were mishandled:\n" << joined(failures);
  fs::remove_all(dir);
}

// The same for an OpenDX map (text: a damaged digit changes one value, which is a correct read of
// the damaged file; a damaged header or a truncation must be an error).
TEST(IoHdf5Robust, DamagedDxMapReadsCorrectlyOrFailsCleanly) {
  const fs::path dir = test::temp_dir("dx_mutate");
  const io::MapFile original = ramp_map(6, 5, 4);
  io::write_dx(dir / "intact.dx", original.grid, original.data.data(), original.meta);
  ASSERT_EQ(io::read_dx(dir / "intact.dx").data, original.data);
  const std::vector<char> bytes = test::file_bytes(dir / "intact.dx");
  const std::string text(bytes.begin(), bytes.end());
  const std::size_t values_begin = text.find("data follows") ;
  ASSERT_NE(values_begin, std::string::npos);

  const fs::path damaged = dir / "damaged.dx";
  const auto list = test::mutations(bytes, test::mutation_count(300), 22);
  const auto failures = test::run_mutations(list, damaged, [&](const test::Mutation& m) {
    // One damaged byte of the value lines reaches at most the two numbers beside it.
    const std::size_t reach = m.end > values_begin ? 2 * (m.end - m.begin) + 2 : 0;
    return judge_map_read([&] { return io::read_dx(damaged); }, original, damaged, reach);
  });
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << list.size()
                                << " damaged files were mishandled:\n" << joined(failures);
  fs::remove_all(dir);
}

namespace {

// Bytes HDF5 stores for a map chunked as map_chunk says: whole chunks, edge ones padded.
double stored_fraction(const GridSpec& grid) {
  const std::vector<hsize_t> chunk = io::hdf5::map_chunk({}, grid);
  const std::int64_t dims[3] = {grid.nz(), grid.ny(), grid.nx()};
  double stored = 1, data = 1;
  for (int d = 0; d < 3; ++d) {
    stored *= double((hsize_t(dims[d]) + chunk[d] - 1) / chunk[d] * chunk[d]);
    data *= double(dims[d]);
  }
  return stored / data;
}

GridSpec grid_of(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  GridSpec grid;
  grid.origin = {0, 0, 0};
  grid.spacing = {1, 1, 1};
  grid.dims = {nx, ny, nz};
  return grid;
}

}  // namespace

// Chunks that do not divide the planes or rows are padded: with 2-plane chunks a 3-plane map of
// 0.5 MiB planes stored 4 planes. Any dims: at most a few % padding.
TEST(IoHdf5Robust, MapChunksWasteAtMostAFewPercent) {
  for (const auto& dims : std::vector<std::array<std::int64_t, 3>>{
           {512, 256, 3}, {517, 519, 524}, {100, 99, 203}, {700, 700, 5}, {1000, 300, 7},
           {300000, 2, 3}, {1, 1, 100001}, {33, 35, 1037}, {262145, 3, 2}, {400, 400, 2}}) {
    const GridSpec grid = grid_of(dims[0], dims[1], dims[2]);
    SCOPED_TRACE(std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]));
    EXPECT_LE(stored_fraction(grid), 1.03);
    const std::vector<hsize_t> chunk = io::hdf5::map_chunk({}, grid);
    EXPECT_LE(double(chunk[0] * chunk[1] * chunk[2]) * 4, 2.0 * (1 << 20));  // about 1 MiB
  }
  std::mt19937_64 random(5);
  for (int i = 0; i < 2000; ++i) {
    const GridSpec grid = grid_of(1 + std::int64_t(random() % 2000), 1 + std::int64_t(random() % 2000),
                                  1 + std::int64_t(random() % 600));
    ASSERT_LE(stored_fraction(grid), 1.03) << grid.nx() << "x" << grid.ny() << "x" << grid.nz();
  }
}

// The file on disk: data plus a small header, for awkward dims (read back with HDF5's own size).
TEST(IoHdf5Robust, MapFileSizeIsDataSizeForAwkwardDims) {
  const fs::path dir = test::temp_dir("h5_size");
  for (const auto& dims : std::vector<std::array<std::int64_t, 3>>{{512, 256, 3}, {517, 519, 3}, {700, 700, 5}}) {
    const io::MapFile map = ramp_map(dims[0], dims[1], dims[2]);
    const fs::path path = dir / "awkward.h5";
    io::write_hdf5(path, map.grid, map.data.data(), map.meta);
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hsize_t size = 0;
    H5Fget_filesize(file, &size);
    H5Fclose(file);
    const double data_bytes = double(map.data.size()) * sizeof(float);
    EXPECT_LE(double(size), 1.05 * data_bytes + 64 * 1024)
        << dims[0] << "x" << dims[1] << "x" << dims[2] << ": " << size << " bytes for " << data_bytes;
    fs::remove(path);
    fs::remove(fs::path(path).replace_extension(".xmf"));
  }
  fs::remove_all(dir);
}
