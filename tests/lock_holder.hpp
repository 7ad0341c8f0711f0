// A child process that holds io::OutputLock on a path, for the tests of a second writer's refusal.
#pragma once
#include <filesystem>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dcsgrid/io/files/output_lock.hpp"

namespace dcsgrid::test {

class LockHolder {
 public:
  // Forks a child that takes the lock on `output` and returns once it holds it. Told to end, the
  // child releases the lock (release_on_exit) or leaves its lock file, as a killed writer would.
  LockHolder(const std::filesystem::path& output, bool release_on_exit) {
    if (::pipe(ready_) != 0 || ::pipe(release_) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      char byte = 1;
      {
        const io::OutputLock lock(output);
        (void)!::write(ready_[1], &byte, 1);
        (void)!::read(release_[0], &byte, 1);
        if (!release_on_exit) ::_exit(0);
      }
      ::_exit(0);
    }
    char byte = 0;
    if (pid_ > 0 && ::read(ready_[0], &byte, 1) != 1) pid_ = -1;
  }
  LockHolder(const LockHolder&) = delete;
  LockHolder& operator=(const LockHolder&) = delete;
  ~LockHolder() {
    if (pid_ > 0) end();
  }

  pid_t pid() const { return pid_; }  // -1 when the child could not be started
  // Tells the child to end and waits for it; returns its waitpid status.
  int end() {
    char byte = 0;
    (void)!::write(release_[1], &byte, 1);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  int ready_[2] = {-1, -1}, release_[2] = {-1, -1};
  pid_t pid_ = -1;
};

}  // namespace dcsgrid::test
