#include "dcsgrid/io/files/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::io {

namespace fs = std::filesystem;

namespace {

// The holder's process id as its lock file says, or "" when unreadable.
std::string holder_of(int descriptor) {
  char text[32] = {};
  const ssize_t n = ::pread(descriptor, text, sizeof(text) - 1, 0);
  if (n <= 0) return {};
  std::string pid(text, std::size_t(n));
  return pid.find_first_not_of("0123456789") == std::string::npos ? pid : std::string();
}

// Whether the open file is still the one the path names: a holder removes the lock file on
// release, so a lock taken on the removed file locks nothing.
bool still_named(int descriptor, const fs::path& path) {
  struct stat open_file {}, named {};
  return ::fstat(descriptor, &open_file) == 0 && ::stat(path.c_str(), &named) == 0 &&
         open_file.st_dev == named.st_dev && open_file.st_ino == named.st_ino;
}

}  // namespace

fs::path OutputLock::lock_path(const fs::path& output) {
  return output.parent_path() / ("." + output.filename().string() + ".lock");
}

OutputLock::OutputLock(const fs::path& output) {
  const fs::path path = lock_path(output);
  // A few tries: each failure means another writer released the lock between our open and flock.
  for (int attempt = 0; attempt < 16; ++attempt) {
    const int descriptor = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (descriptor < 0)
      throw Error("cannot lock " + output.string() + " for writing: cannot create " + path.string() +
                  " (" + std::strerror(errno) + ")");
    if (::flock(descriptor, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const std::string pid = holder_of(descriptor);
      ::close(descriptor);
      if (error != EWOULDBLOCK) return;  // no locks on this file system: nothing to hold
      throw Error(output.string() + " is being written by another process" +
                  (pid.empty() ? std::string() : " (process " + pid + ")") +
                  ", a batch still running: let it end, or stop it, before writing it again");
    }
    if (!still_named(descriptor, path)) {
      ::close(descriptor);
      continue;
    }
    const std::string pid = std::to_string(::getpid());
    // The process id only improves the other writer's message: a failed write is no error.
    if (::ftruncate(descriptor, 0) == 0) (void)!::pwrite(descriptor, pid.data(), pid.size(), 0);
    descriptor_ = descriptor;
    removal_.emplace(output, path);
    return;
  }
  throw Error("cannot lock " + output.string() + " for writing: " + path.string() +
              " keeps being replaced");
}

OutputLock::~OutputLock() {
  removal_.reset();  // removed while still locked, so that no one locks the removed file
  if (descriptor_ >= 0) ::close(descriptor_);
}

}  // namespace dcsgrid::io
