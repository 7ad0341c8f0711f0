// Output that appears only when complete: written under a temporary name in the target folder
// and renamed over the target by commit(). Destroyed without commit(), the temporary is removed.
#pragma once
#include <filesystem>

namespace dcsgrid::io {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  const std::filesystem::path& temp_path() const { return temp_; }
  const std::filesystem::path& target() const { return target_; }
  // Renames the temporary over the target. Throws Error when that fails.
  void commit();

 private:
  std::filesystem::path target_, temp_;
  bool committed_ = false;
};

}  // namespace dcsgrid::io
