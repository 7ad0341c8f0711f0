#include "dcsgrid/io/hdf5/open.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::io::hdf5 {

namespace fs = std::filesystem;

namespace {

// HDF5's file-access property behind `h5clear -s` (private, but registered by the 1.10 and later
// libraries): the open ignores the superblock's status flags, and a writable open stores them
// cleared.
constexpr const char* kClearStatusFlags = "clear_status_flags";

// File access through the default driver, or through MPI-IO for a file every rank opens. A
// writable serial open has no data sieve buffer: small writes into a table column (a batch's
// rows and statuses) go to the file as they are, where the 64 kB buffer read 64 kB around each
// and wrote them back (six times the bytes of a batch's frame rows).
Handle file_access(const fs::path& path, bool writable, bool every_rank) {
  if (every_rank) return every_rank_access(path);
  Handle access = checked_handle(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, path, "set up file access");
  if (writable) check(H5Pset_sieve_buf_size(access.get(), 0), path, "set up file access");
  return access;
}

// What a non-blocking flock(2) of the file finds, the probe's lock released at once: 0 when no
// other open of the file holds a conflicting lock (exclusive: any lock; shared: a writer's),
// EWOULDBLOCK when one does, another errno when the file system cannot tell.
int probe_lock(const fs::path& path, bool exclusive) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return errno;
  const int error = flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 ? 0 : errno;
  ::close(descriptor);
  return error;
}

// Throws unless no other process holds a lock on the file (the open that follows takes HDF5's).
void require_no_other_process(const fs::path& path) {
  const int error = probe_lock(path, true);
  if (error == 0) return;
  if (error == EWOULDBLOCK)
    throw Error(path.string() + ": another process has the file open (a batch still writing "
                "it?): let it end, or stop it, before resuming");
  throw Error(path.string() + ": cannot check that no other process is writing it (file locks: " +
              std::strerror(error) + "); when none is, clear the mark its writer left with `h5clear -s " +
              path.string() + "` and resume");
}

}  // namespace

Handle open_file(const fs::path& path, bool writable, bool every_rank) {
  if (!fs::exists(path)) throw InputError(path.string(), 0, "no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw InputError(path.string(), 0, "not an HDF5 file");
  Handle access = file_access(path, writable, every_rank);
  hbool_t ignore_mark = true;
  // A library without the property refuses a marked file below, with HDF5's reason.
  if (!writable && H5Pset(access.get(), kClearStatusFlags, &ignore_mark) < 0) H5Eclear2(H5E_DEFAULT);
  const hid_t file = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, access.get());
  // HDF5 says "unable to lock file" (serial opens only: MPI-IO takes no lock).
  if (file < 0 && !every_rank && probe_lock(path, writable) == EWOULDBLOCK) {
    H5Eclear2(H5E_DEFAULT);
    throw InputError(path.string(), 0,
                     writable ? "is open elsewhere (a batch still running, or a reader?)"
                              : "is open for writing elsewhere (a batch still running?)");
  }
  if (file < 0 && writable && marked_open_for_write(path)) {
    H5Eclear2(H5E_DEFAULT);
    throw InputError(path.string(), 0,
                     "is marked open for writing: another process is writing it, or its writer was "
                     "killed before closing it (`dcsgrid batch ... --resume` continues a killed "
                     "batch; `h5clear -s` clears the mark)");
  }
  return checked_handle(file, H5Fclose, path, writable ? "open the file for writing" : "open the file");
}

// Superblock versions 2 and 3 begin with the signature, the version, the sizes of offsets and
// lengths, then the status flags. Our files have no user block, so the superblock is at byte 0.
bool marked_open_for_write(const fs::path& path) {
  static constexpr std::array<unsigned char, 8> kSignature = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  std::array<char, 12> head{};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(head.data(), std::streamsize(head.size()))) return false;
  const bool hdf5 = std::equal(kSignature.begin(), kSignature.end(), head.begin(),
                               [](unsigned char a, char b) { return a == static_cast<unsigned char>(b); });
  return hdf5 && static_cast<unsigned char>(head[8]) >= 2 && head[11] != 0;
}

void clear_write_mark(const fs::path& path) {
  if (!marked_open_for_write(path)) return;
  require_no_other_process(path);
  const std::string what = "clear the mark of a writer that did not close the file";
  std::lock_guard lock(library_mutex());
  Handle access = file_access(path, true, false);
  // HDF5's exclusive lock through the open: a process that opened the file since the probe is
  // still refused (unless HDF5_USE_FILE_LOCKING=FALSE turns HDF5's locks off).
  check(H5Pset_file_locking(access.get(), true, false), path, what);
  hbool_t clear = true;
  check(H5Pset(access.get(), kClearStatusFlags, &clear), path, what);
  Handle file = checked_handle(H5Fopen(path.c_str(), H5F_ACC_RDWR, access.get()), H5Fclose, path, what);
  check(file.close(), path, what);
}

WritersLock::WritersLock(const fs::path& path)
    : descriptor_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
  if (descriptor_ < 0 || flock(descriptor_, LOCK_SH | LOCK_NB) == 0) return;  // the open reports
  const int error = errno;
  ::close(descriptor_);
  descriptor_ = -1;
  if (error == EWOULDBLOCK)
    throw Error(path.string() + ": another process has the file open for writing");
}

WritersLock::~WritersLock() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void bound_metadata_cache(hid_t file, const std::filesystem::path& path) {
  H5AC_cache_config_t config;
  config.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  check(H5Fget_mdc_config(file, &config), path, "read the metadata cache settings");
  config.set_initial_size = true;
  config.initial_size = config.max_size = kMetadataCacheBytes;
  config.min_size = std::min<std::size_t>(config.min_size, kMetadataCacheBytes);
  check(H5Fset_mdc_config(file, &config), path, "set the metadata cache's size");
}

}  // namespace dcsgrid::io::hdf5
