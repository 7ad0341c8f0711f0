#include "dcsgrid/io/files/space_reservation.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace dcsgrid::io {

SpaceReservation::SpaceReservation(const std::filesystem::path& path, std::uint64_t offset, std::uint64_t bytes)
    : thread_([this, path, offset, bytes] {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) return;
        // In pieces, so that a write waiting for the file (the reservation holds it meanwhile)
        // waits for one piece only, and a stop comes soon.
        constexpr std::uint64_t kPiece = std::uint64_t(64) << 20;
        for (std::uint64_t at = 0; at < bytes && !stop_.load(); at += kPiece) {
          const std::uint64_t n = std::min(kPiece, bytes - at);
          if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, off_t(offset + at), off_t(n)) != 0) break;
          reserved_.store(at + n);
        }
        ::close(fd);
      }) {}

SpaceReservation::~SpaceReservation() {
  stop_.store(true);
  wait();
}

}  // namespace dcsgrid::io
