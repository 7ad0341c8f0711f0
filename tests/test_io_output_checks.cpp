// Checks made on outputs before any compute (issue 21): a folder that takes no new file, and
// sizes beyond the free space of the output's file system, refused with the figures. Issue 35:
// one rule for every file written, XDMF sidecars included, one writer a path (OutputLock, held by
// another process), and the temporaries of outputs removed when a library ends the process with
// exit().
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/files/output_checks.hpp"
#include "dcsgrid/io/files/output_lock.hpp"
#include "dcsgrid/io/files/space_reservation.hpp"
#include "helpers.hpp"
#include "lock_holder.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;

namespace {

std::string error_of(const std::function<void()>& call) {
  const std::string message = test::error_message(call);
  return message.empty() ? "(no error)" : message;
}

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(OutputChecks, WritableFolderPassesAndLeavesNothing) {
  const fs::path dir = test::temp_dir("outcheck");
  EXPECT_NO_THROW(io::require_writable_output(dir / "pot.h5"));
  EXPECT_TRUE(test::listing(dir).empty());
  EXPECT_NE(error_of([&] { io::require_writable_output(dir / "absent" / "pot.h5"); }).find("does not exist"),
            std::string::npos);
  EXPECT_NE(error_of([&] { io::require_writable_output(dir); }).find("is a folder"), std::string::npos);
  fs::remove_all(dir);
}

// A folder that takes no file: mode 0555 for a user, a read-only tmpfs mounted over it for root
// (root passes every mode check); skipped where neither can be made.
TEST(OutputChecks, ReadOnlyFolderIsRefusedWithItsReason) {
  const fs::path dir = test::temp_dir("outcheck_ro");
  const fs::path ro = dir / "ro";
  fs::create_directory(ro);
  bool mounted = false;
  if (::geteuid() == 0) {
    mounted = ::mount("tmpfs", ro.c_str(), "tmpfs", MS_RDONLY, "size=64k") == 0;
    if (!mounted) {
      fs::remove_all(dir);
      GTEST_SKIP() << "running as root without the right to mount a read-only tmpfs";
    }
  } else {
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  }
  const std::string message = error_of([&] { io::require_writable_output(ro / "pot.dx"); });
  if (mounted) ::umount(ro.c_str());
  fs::permissions(ro, fs::perms::owner_all);
  EXPECT_NE(message.find("cannot write " + (ro / "pot.dx").string()), std::string::npos) << message;
  EXPECT_TRUE(message.find("Read-only") != std::string::npos ||
              message.find("Permission denied") != std::string::npos)
      << message;
  EXPECT_TRUE(test::listing(ro).empty());
  fs::remove_all(dir);
}

TEST(OutputChecks, FreeSpaceIsStatvfsAndOutputsOnOneFileSystemAddUp) {
  const fs::path dir = test::temp_dir("outcheck_space");
  struct statvfs info {};
  ASSERT_EQ(::statvfs(dir.c_str(), &info), 0);
  const std::uint64_t free_now = std::uint64_t(info.f_bavail) * info.f_frsize;
  // Other processes write meanwhile: within 1 GiB.
  EXPECT_NEAR(double(io::free_bytes(dir)), double(free_now), double(1 << 30));

  const std::uint64_t have = io::free_bytes(dir);
  EXPECT_NO_THROW(io::require_free_space({{dir / "a.h5", have / 4}, {dir / "b.dx", have / 4}}));
  // Each fits alone, together they do not: the message gives the sum, in bytes, and the free space.
  const std::uint64_t each = have / 2 + (std::uint64_t(1) << 30);
  const std::string message =
      error_of([&] { io::require_free_space({{dir / "a.h5", each}, {dir / "b.dx", each}}); });
  EXPECT_NE(message.find(std::to_string(2 * each) + " bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("a.h5"), std::string::npos) << message;
  EXPECT_NE(message.find("b.dx"), std::string::npos) << message;
  EXPECT_NE(message.find(" free"), std::string::npos) << message;
  fs::remove_all(dir);
}

// The least sizes are lower bounds of what the writers write: each format's file on a small grid
// is at least that big, and the binary ones not much bigger than their header.
TEST(OutputChecks, LeastMapBytesBoundTheFilesWritten) {
  const fs::path dir = test::temp_dir("outcheck_size");
  const GridSpec grid = grid_from_origin({0, 0, 0}, {40, 30, 20}, 0.5);
  std::vector<float> data(grid.point_count());
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = float(i % 7) - 3.0f;
  io::MapMetadata meta;
  meta.units = "kT/e";
  for (const io::MapFormatInfo& info : io::map_formats()) {
    const fs::path path = dir / (std::string("m") + std::string(info.extensions).substr(0, std::string(info.extensions).find('/')));
    io::write_map(path, &info, grid, data.data(), meta);
    const std::uint64_t least = io::least_map_bytes(&info, grid, 1, {});
    EXPECT_LE(least, fs::file_size(path)) << path;
    if (path.extension() == ".h5" || path.extension() == ".ccp4")
      EXPECT_EQ(least, grid.point_count() * sizeof(float)) << path;
  }
  io::WriteOptions compressed;
  compressed.compress = true;
  EXPECT_EQ(io::least_map_bytes(io::map_format_from_path("m.h5"), grid, 3, compressed), 0u);
  EXPECT_EQ(io::least_map_bytes(io::map_format_from_path("m.h5"), grid, 3, {}), 3 * grid.point_count() * sizeof(float));
  fs::remove_all(dir);
}

// Issue 35, group 2: `cp in.pqr pot.xmf; dcsgrid pot.xmf --format pqr -o pot.h5` replaced the input
// with the sidecar; -o b.h5 -o b.hdf5 wrote one b.xmf; any X.xmf was replaced when writing X.h5.
TEST(OutputChecks, SidecarsFollowTheOutputsRule) {
  const fs::path dir = test::temp_dir("outcheck_sidecar");
  write_file(dir / "pot.xmf", "ATOM      1  N   ALA A   1       1.000   2.000   3.000 -0.3000 1.8240\n");
  const auto output = [](const fs::path& path) { return io::MapOutputPath{path, io::map_format_from_path(path)}; };
  const auto h5 = [&](const char* name) { return output(dir / name); };
  std::string e = error_of([&] { io::require_outputs_apart({h5("pot.h5")}, {dir / "pot.xmf"}); });
  EXPECT_NE(e.find("pot.xmf (the sidecar of " + (dir / "pot.h5").string() + ") is the input"),
            std::string::npos) << e;
  // Not an input, but not ours either: kept, and the run refused.
  e = error_of([&] { io::require_outputs_apart({h5("pot.h5")}, {}); });
  EXPECT_NE(e.find("is not the XDMF sidecar of"), std::string::npos) << e;
  e = error_of([&] { io::require_outputs_apart({h5("b.h5"), h5("b.hdf5")}, {}); });
  EXPECT_NE(e.find("would also be written by output " + (dir / "b.h5").string()), std::string::npos) << e;
  e = error_of([&] { io::require_outputs_apart({h5("c.h5"), output(dir / "." / "c.h5")}, {}); });
  EXPECT_NE(e.find("would also be written by"), std::string::npos) << e;
  EXPECT_NO_THROW(io::require_outputs_apart({h5("d.h5"), output(dir / "d.dx")}, {}));

  // A sidecar of ours is replaced; one describing another map is not, by the checks or the writer.
  const GridSpec grid = grid_from_origin({0, 0, 0}, {3, 3, 3}, 1.0);
  const std::vector<float> data(grid.point_count(), 1.0f);
  io::MapMetadata meta;
  meta.units = "kT/e";
  io::write_hdf5(dir / "e.h5", grid, data.data(), meta);
  EXPECT_NO_THROW(io::require_outputs_apart({h5("e.h5")}, {}));
  EXPECT_NO_THROW(io::write_hdf5(dir / "e.h5", grid, data.data(), meta));
  e = error_of([&] { io::require_outputs_apart({h5("e.hdf5")}, {}); });
  EXPECT_NE(e.find("e.xmf exists and is not the XDMF sidecar of"), std::string::npos) << e;
  e = error_of([&] { io::write_hdf5(dir / "pot.h5", grid, data.data(), meta); });
  EXPECT_NE(e.find("is not the XDMF sidecar of"), std::string::npos) << e;
  EXPECT_EQ(read_file(dir / "pot.xmf").substr(0, 4), "ATOM");
  EXPECT_FALSE(fs::exists(dir / "pot.h5"));
  fs::remove_all(dir);
}

// Issue 35, group 3: two batches on one path both "succeeded". The lock, held by another process,
// refuses this one with the holder's process id, and is free again once that process has ended.
TEST(OutputChecks, OutputLockRefusesASecondProcess) {
  const fs::path dir = test::temp_dir("outcheck_lock");
  const fs::path output = dir / "b.h5";
  test::LockHolder holder(output, true);  // holds the lock until told to end, then releases it
  const pid_t child = holder.pid();
  ASSERT_GT(child, 0);
  const std::string e = error_of([&] { io::OutputLock second(output); });
  EXPECT_NE(e.find(output.string() + " is being written by another process (process " +
                   std::to_string(child) + ")"),
            std::string::npos) << e;
  EXPECT_TRUE(fs::exists(io::OutputLock::lock_path(output)));
  const int status = holder.end();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(fs::exists(io::OutputLock::lock_path(output)));  // removed on release
  { const io::OutputLock mine(output); }
  EXPECT_TRUE(test::listing(dir).empty());
  fs::remove_all(dir);
}

// Issue 35 group 1: libgomp's "Thread creation failed" ends the process with exit(1), past every
// destructor, and left .o.h5.tmp-*. A program that installed the signal handlers loses its
// temporaries at exit() too.
TEST(AtomicFileDeathTest, ExitRemovesLiveTemporaries) {
  const fs::path dir = test::temp_dir("atomic_exit");
  EXPECT_EXIT(
      {
        io::remove_temporaries_on_signals();
        io::AtomicFile out(dir / "o.h5");
        std::ofstream(out.temp_path()) << "half a map";
        if (!fs::exists(out.temp_path())) std::_Exit(3);
        std::exit(1);  // as libgomp's gomp_fatal does
      },
      ::testing::ExitedWithCode(1), "");
  EXPECT_TRUE(test::listing(dir).empty()) << test::listing(dir).front();
  fs::remove_all(dir);
}

// Maps' space is reserved in their file system before they are written (the file's blocks
// counted by stat), the file's size and content untouched.
TEST(SpaceReservation, BlocksAreAllocatedAndTheFileKeptAsItWas) {
  for (const fs::path dir : {test::temp_dir("reserve"), fs::path("/dev/shm") / ("dcsgrid-reserve-" + std::to_string(::getpid()))}) {
    fs::create_directories(dir);
    const fs::path file = dir / "map.bin";
    write_file(file, "head");
    const std::uint64_t bytes = std::uint64_t(24) << 20;
    {
      // Two maps' ranges, one after the other, as a file of two maps reserves them.
      io::SpaceReservation first(file, 0, bytes), second(file, bytes, bytes);
      first.wait();
      second.wait();
      if (first.reserved() == 0) {
        std::printf("%s: no fallocate there, nothing to check\n", dir.c_str());
        fs::remove_all(dir);
        continue;
      }
      EXPECT_EQ(first.reserved(), bytes);
      EXPECT_EQ(second.reserved(), bytes);
    }
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_GE(std::uint64_t(st.st_blocks) * 512, 2 * bytes) << dir;
    EXPECT_EQ(fs::file_size(file), 4u);
    EXPECT_EQ(read_file(file), "head");
    fs::remove_all(dir);
  }
}
