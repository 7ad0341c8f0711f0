// A file's space reserved in its file system on a thread of its own while the program does other
// work (reads its input, sets up a method), so that the writes which come later find it allocated:
// on tmpfs they then skip zeroing every page they fill, on a disk the blocks are in one piece.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <thread>

namespace dcsgrid::io {

class SpaceReservation {
 public:
  // Reserves bytes [offset, offset + bytes) of the file at `path` (fallocate, the file's size
  // kept: the caller's writes must reach past them, or the rest stays reserved until the file
  // goes). A hint: a file system that cannot reserve, or a full one, is left for the writes to
  // report.
  SpaceReservation(const std::filesystem::path& path, std::uint64_t offset, std::uint64_t bytes);
  // Stops between pieces and waits for the thread.
  ~SpaceReservation();
  SpaceReservation(const SpaceReservation&) = delete;
  SpaceReservation& operator=(const SpaceReservation&) = delete;

  // Bytes reserved so far from `offset` on (all of them once the thread is done).
  std::uint64_t reserved() const { return reserved_.load(); }
  void wait() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> reserved_{0};
  std::thread thread_;
};

}  // namespace dcsgrid::io
