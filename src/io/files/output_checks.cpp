#include "dcsgrid/io/files/output_checks.hpp"

#include <cerrno>
#include <cstring>
#include <map>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"

namespace dcsgrid::io {

namespace fs = std::filesystem;

namespace {

fs::path folder_of(const fs::path& output) {
  return output.parent_path().empty() ? fs::path(".") : output.parent_path();
}

// Whether two paths name one file: the same inode where both exist (hard links, symlinks),
// else the same path once symlinks, "." and ".." are resolved.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  const fs::path ca = fs::weakly_canonical(a, ec), cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

double gib(std::uint64_t bytes) { return double(bytes) / double(1 << 30); }

}  // namespace

void require_writable_output(const fs::path& output) {
  const fs::path dir = folder_of(output);
  if (!fs::is_directory(dir)) throw Error("output folder " + dir.string() + " does not exist");
  if (fs::is_directory(output)) throw Error("output " + output.string() + " is a folder");
  // The probe has the output's temporary name, so a signal meanwhile removes it too.
  const AtomicFile probe(output);
  const int fd = ::open(probe.temp_path().c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    throw Error(fmt::format("cannot write {}: no new file can be made in {} ({})", output.string(),
                            dir.string(), std::strerror(errno)));
  ::close(fd);
}

std::vector<fs::path> files_written(const fs::path& output, MapFormat format) {
  if (format->sidecar) return {output, format->sidecar(output)};
  return {output};
}

void require_outputs_apart(const std::vector<MapOutputPath>& outputs, const std::vector<fs::path>& inputs) {
  struct Written {
    fs::path file, output;  // the file, and the output that writes it
  };
  std::vector<Written> written;
  for (const MapOutputPath& out : outputs)
    for (const fs::path& file : files_written(out.path, out.format)) {
      const std::string what = file == out.path ? "output " + file.string()
                                                : file.string() + " (the sidecar of " + out.path.string() + ")";
      for (const fs::path& input : inputs)
        if (same_file(file, input))
          throw Error(what + " is the input " + input.string() +
                      ": choose another output name (the input would be replaced)");
      for (const Written& w : written)
        if (same_file(file, w.file))
          throw Error(what + " would also be written by output " + w.output.string() +
                      ": give outputs with different names");
      written.push_back({file, out.path});
    }
  for (const MapOutputPath& out : outputs)
    if (out.format->require_replaceable_sidecar) out.format->require_replaceable_sidecar(out.path);
}

std::uint64_t free_bytes(const fs::path& path) {
  struct statvfs fs_info {};
  if (::statvfs(path.c_str(), &fs_info) != 0)
    throw Error(fmt::format("cannot read the free space of the file system of {} ({})",
                            path.string(), std::strerror(errno)));
  return std::uint64_t(fs_info.f_bavail) * std::uint64_t(fs_info.f_frsize);
}

void require_free_space(const std::vector<PlannedOutput>& outputs) {
  struct FileSystem {
    fs::path first_folder;
    std::uint64_t bytes = 0;
    std::string names;
  };
  std::map<dev_t, FileSystem> by_device;  // outputs on one file system share its free space
  for (const PlannedOutput& out : outputs) {
    const fs::path dir = folder_of(out.path);
    struct stat info {};
    if (::stat(dir.c_str(), &info) != 0) continue;  // require_writable_output says what is wrong
    FileSystem& file_system = by_device[info.st_dev];
    if (file_system.names.empty()) file_system.first_folder = dir;
    file_system.bytes += out.bytes;
    file_system.names += (file_system.names.empty() ? "" : ", ") + out.path.string();
  }
  for (const auto& [device, file_system] : by_device) {
    const std::uint64_t have = free_bytes(file_system.first_folder);
    if (file_system.bytes > have)
      throw Error(fmt::format("{} will take at least {} bytes ({:.3g} GiB) but the file system of {} has "
                              "{} bytes ({:.3g} GiB) free: use a coarser --spacing, a smaller box, "
                              "or another folder",
                              file_system.names, file_system.bytes, gib(file_system.bytes),
                              file_system.first_folder.string(), have, gib(have)));
  }
}

std::uint64_t least_map_bytes(MapFormat format, const GridSpec& grid, std::size_t maps,
                              const WriteOptions& options) {
  if (options.compress && format->compression) return 0;
  return grid.point_count() * format->least_value_bytes * (format->several_maps ? maps : 1);
}

}  // namespace dcsgrid::io
