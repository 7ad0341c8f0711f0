// Trajectory readers (io::open_trajectory and the frame loop of `batch`): DCD, XTC, TRR, AMBER
// NetCDF, one target each (FUZZ_FILE_NAME gives the extension). Every frame is read; XTC and TRR
// are then indexed and read again from a seek, as a frame selection does.
#include <vector>

#include "dcsgrid/io/trajectory.hpp"
#include "fuzz_input.hpp"

namespace {

void read_frames(dcsgrid::io::TrajectoryReader& reader, std::vector<float>& xyz) {
  dcsgrid::io::FrameInfo info;
  while (reader.next(xyz.data(), info)) {
  }
  for (const dcsgrid::io::Truncation& t : reader.truncations()) (void)t.message();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path path = dcsgrid::fuzz::input_file(data, size, FUZZ_FILE_NAME);
  dcsgrid::fuzz::expect_clean(path, [&] {
    auto reader = dcsgrid::io::open_trajectory(path);
    // The program sizes the frame buffer from the topology, after io::check_atom_count has
    // matched the header's count with it; play a topology of that count only where the file
    // could hold a frame of it (a header alone may claim any count, and is refused there).
    if (reader->atom_count() > 16 * size) return;
    std::vector<float> xyz(3 * reader->atom_count());
    read_frames(*reader, xyz);
    (void)reader->frame_count();
    if (dcsgrid::io::IndexedTrajectory* indexed = dcsgrid::io::as_indexed(*reader)) {
      const std::size_t frames = indexed->frame_offsets().size();
      reader->seek(std::int64_t(frames / 2));
      read_frames(*reader, xyz);
    }
  });
  return 0;
}
