// HDF5 under faults: a write that fails (disk full, file size limit) gives a clean error, removes
// the temporary and leaves the process able to exit and to write other files; corrupt input files
// (byte flips, truncations) read correctly or fail with InputError, never crash or hang; chunked
// maps of awkward dimensions are not padded to twice their size.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/hdf5_maps.hpp"
#include "dcsgrid/io/map_io.hpp"
#include "helpers.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;

namespace {

// Runs body in a forked child (exit status = its return value) with a time limit, so that a crash
// or a hang fails the test instead of killing or stalling the suite. Returns a description of an
// abnormal end, or "" for exit status 0.
std::string run_in_child(const std::function<int()>& body, unsigned seconds) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return std::string("fork failed: ") + std::strerror(errno);
  if (pid == 0) {
    alarm(seconds);
    int code = 1;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: unexpected exception: %s\n", e.what());
    }
    std::exit(code);  // runs the exit hooks (HDF5's among them): part of what is tested
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    return WTERMSIG(status) == SIGALRM ? "child hung (killed after " + std::to_string(seconds) + " s)"
                                        : "child killed by signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0) return "child exited with status " + std::to_string(WEXITSTATUS(status));
  return "";
}

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
TEST(IoHdf5Robust, WriteFailureFromFileSizeLimitIsACleanError) {
  const fs::path dir = test::temp_dir("h5_fsize");
  const std::string failure = run_in_child(
      [&] {
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit = {1 << 20, 1 << 20};
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
        return write_must_fail(dir, dir, std::strerror(EFBIG));
      },
      60);
  EXPECT_EQ(failure, "");
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
