// Checks made on outputs before any compute (issue 21): a folder that takes no new file, and
// sizes beyond the free space of the output's file system, refused with the figures.
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/output_checks.hpp"
#include "helpers.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;

namespace {

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
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
    io::write_map(path, info.format, grid, data.data(), meta);
    const std::uint64_t least = io::least_map_bytes(info.format, grid, 1, {});
    EXPECT_LE(least, fs::file_size(path)) << path;
    if (info.format == io::MapFormat::hdf5 || info.format == io::MapFormat::ccp4)
      EXPECT_EQ(least, grid.point_count() * sizeof(float)) << path;
  }
  io::WriteOptions compressed;
  compressed.compress = true;
  EXPECT_EQ(io::least_map_bytes(io::MapFormat::hdf5, grid, 3, compressed), 0u);
  EXPECT_EQ(io::least_map_bytes(io::MapFormat::hdf5, grid, 3, {}), 3 * grid.point_count() * sizeof(float));
  fs::remove_all(dir);
}
