// One writer a path: an exclusive lock that every batch writer takes on its output before it looks
// at it, so that a second batch, --overwrite or --resume on that path is refused while the first
// runs (the first's frames would otherwise go to a file that was replaced under it).
#pragma once
#include <filesystem>
#include <optional>

#include "dcsgrid/io/files/atomic_file.hpp"

namespace dcsgrid::io {

// The lock is a flock(2), as HDF5's own and hdf5::WritersLock are, on a hidden file beside the
// output, .NAME.lock, which holds the writer's process id for the message. It is taken whether or
// not the output exists yet (the output itself is replaced by rename, so it cannot hold it), and
// the lock file is removed on release and, like a temporary, on SIGINT/SIGTERM/SIGHUP; one that a
// killed writer left is taken over. Throws Error naming the output and the other process when a
// live process holds it. Where the file system has no locks, it holds nothing.
class OutputLock {
 public:
  explicit OutputLock(const std::filesystem::path& output);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  static std::filesystem::path lock_path(const std::filesystem::path& output);

 private:
  int descriptor_ = -1;
  std::optional<AtomicFile> removal_;  // the lock file's removal (on release and on signals)
};

}  // namespace dcsgrid::io
