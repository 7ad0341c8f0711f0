#include "dcsgrid/io/atomic_file.hpp"

#include <random>
#include <system_error>

#include <unistd.h>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::io {

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  std::random_device rd;
  // Same folder, so the final rename stays within one file system; hidden, so no viewer picks it up.
  temp_ = target_.parent_path() /
          ("." + target_.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
           std::to_string(rd() % 1000000));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void AtomicFile::commit() {
  std::error_code ec;
  std::filesystem::rename(temp_, target_, ec);
  if (ec) throw Error("cannot move the finished " + temp_.string() + " to " + target_.string() +
                      ": " + ec.message());
  committed_ = true;
}

}  // namespace dcsgrid::io
