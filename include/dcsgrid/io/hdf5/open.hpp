// Opening HDF5 files that a writer may have left behind without closing them. In the 1.10 format
// (io::hdf5::create_file) a writable open sets "open for write" flags in the superblock and the
// close clears them; a writer killed in between (kill -9, a node lost) leaves them set, and HDF5
// then refuses every later open until `h5clear -s`. Read-only opens here ignore the flags; the one
// writable path that may meet them, a batch --resume, clears them after checking that no live
// process has the file. Callers of open_file hold library_mutex(); clear_write_mark takes it.
#pragma once
#include <cstddef>
#include <filesystem>

#include "dcsgrid/io/hdf5/util.hpp"

namespace dcsgrid::io::hdf5 {

// Opens an existing HDF5 file (InputError when missing or not HDF5). every_rank: every rank of
// the MPI job opens it at once (a collective call), through MPI-IO; Error in builds without MPI.
// A read-only open reads a file whose writer was killed as it stands (what was flushed); a
// writable open refuses one, saying how to continue.
Handle open_file(const std::filesystem::path& path, bool writable, bool every_rank = false);

// True when the file's superblock (1.10 format) says a writer has it open, or had it open when it
// was killed. False for the 1.8 format, which has no such flags.
bool marked_open_for_write(const std::filesystem::path& path);

// Clears that mark (as `h5clear -s` does) so that the file opens for writing again. First checks
// that no live process has the file open: an Error when one has (a flock(2) on the file: HDF5's
// own, which every serial open holds, or a WritersLock), or when the file system has no file locks
// to tell (the message says how to clear the mark by hand). For `batch --resume` only; takes
// library_mutex().
void clear_write_mark(const std::filesystem::path& path);

// Caps the metadata cache of an open file at kMetadataCacheBytes, its current size included.
// HDF5 grows it (to 32 MiB by default) while a walk over a chunk index misses, and building or
// checking a batch file's /potential walks one chunk a frame. The cache counts a chunk index
// node at its size on disk (3.7 kB for a 4-D dataset) but holds it decoded (17.7 kB: room for
// 32 dimensions a key), so 64 kB hold about 300 kB; at the default sizes the nodes of 20,000
// frames took 4 MB, 200 B a frame.
inline constexpr std::size_t kMetadataCacheBytes = std::size_t(64) << 10;
void bound_metadata_cache(hid_t file, const std::filesystem::path& path);

// A shared flock(2) on a file for as long as this object lives. MPI-IO opens take no file lock,
// so each rank of an MPI job writing a file holds one of these: a resume elsewhere then sees the
// job. Where the file system has no locks it holds nothing (clear_write_mark refuses there).
class WritersLock {
 public:
  explicit WritersLock(const std::filesystem::path& path);
  ~WritersLock();
  WritersLock(const WritersLock&) = delete;
  WritersLock& operator=(const WritersLock&) = delete;

 private:
  int descriptor_ = -1;
};

}  // namespace dcsgrid::io::hdf5
