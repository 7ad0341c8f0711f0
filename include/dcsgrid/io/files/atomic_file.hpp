// Output that appears only when complete: written under a temporary name in the target folder
// and renamed over the target by commit(). Destroyed without commit(), the temporary is removed;
// killed by SIGINT/SIGTERM/SIGHUP (with remove_temporaries_on_signals() installed), too.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace dcsgrid::io {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  // With the temporary named elsewhere: every MPI rank writing one file holds rank 0's name, so
  // that whichever rank a signal reaches removes it.
  AtomicFile(std::filesystem::path target, std::filesystem::path temp);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  const std::filesystem::path& temp_path() const { return temp_; }
  const std::filesystem::path& target() const { return target_; }
  // Renames the temporary over the target. Throws Error when that fails.
  void commit();

 private:
  std::filesystem::path target_, temp_;
  int slot_;  // in the registry of live temporaries, or -1
  bool committed_ = false;
};

// Writes bytes as the whole of path through an AtomicFile. Throws Error naming path.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

// The output a live temporary stands for (following temporaries staged inside temporaries), or
// `path` itself: messages about writing a temporary name the file the user asked for.
std::filesystem::path output_name(const std::filesystem::path& path);

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove every live temporary and exit with
// status 128 + the signal (130, 143, 129), and removes them at exit() too (a library that ends the
// process). For programs, not libraries (Python keeps its own).
void remove_temporaries_on_signals();

// Throws Error when `output` is the same file (device and inode, whatever the path's spelling)
// as one of `inputs`: a command must not replace what it reads.
void require_not_an_input(const std::filesystem::path& output,
                          const std::vector<std::filesystem::path>& inputs);

}  // namespace dcsgrid::io
