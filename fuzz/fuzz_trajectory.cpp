// Trajectory readers (io::open_trajectory and the frame loop of `batch`): DCD, XTC, TRR, AMBER
// NetCDF, one target each (FUZZ_FILE_NAME gives the extension). Every frame is read; XTC and TRR
// are then indexed and read again from a seek, as a frame selection does. An input read whole
// and clean is then cut at bytes of its last frame (every byte of a frame up to kMaxCuts bytes,
// else kMaxCuts spread over it): a cut never loses a frame in silence nor adds one, and for the
// fixed layouts (DCD, XTC: FUZZ_STRICT_CUTS) gives exactly the frames before it and one
// truncation naming that frame and its start; or the file is refused cleanly.
#include <algorithm>
#include <string>
#include <vector>

#include "dcsgrid/io/trajectory/trajectory.hpp"
#include "fuzz_input.hpp"

namespace {

constexpr std::uint64_t kMaxCuts = 256;

struct Reading {
  bool read = false;  // false: refused (cleanly) or a header claiming more atoms than bytes
  std::size_t frames = 0;
  std::vector<dcsgrid::io::Truncation> cuts;
};

std::size_t read_frames(dcsgrid::io::TrajectoryReader& reader, std::vector<float>& xyz) {
  dcsgrid::io::FrameInfo info;
  std::size_t frames = 0;
  while (reader.next(xyz.data(), info)) ++frames;
  for (const dcsgrid::io::Truncation& t : reader.truncations()) (void)t.message();
  return frames;
}

Reading read_file(const std::filesystem::path& path, std::size_t size, bool seek_again) {
  Reading r;
  dcsgrid::fuzz::expect_clean(path, [&] {
    auto reader = dcsgrid::io::open_trajectory(path);
    // The program sizes the frame buffer from the topology, after io::check_atom_count has
    // matched the header's count with it; play a topology of that count only where the file
    // could hold a frame of it (a header alone may claim any count, and is refused there).
    if (reader->atom_count() > 16 * size) return;
    std::vector<float> xyz(3 * reader->atom_count());
    r.frames = read_frames(*reader, xyz);
    r.cuts = reader->truncations();
    r.read = true;
    (void)reader->frame_count();
    if (!seek_again) return;
    if (dcsgrid::io::IndexedTrajectory* indexed = dcsgrid::io::as_indexed(*reader)) {
      const std::size_t frames = indexed->frame_offsets().size();
      reader->seek(std::int64_t(frames / 2));
      read_frames(*reader, xyz);
    }
  });
  return r;
}

// The input cut to its first `keep` bytes.
Reading read_cut(const std::uint8_t* data, std::uint64_t keep) {
  const std::string name = std::string("cut-") + FUZZ_FILE_NAME;
  return read_file(dcsgrid::fuzz::input_file(data, keep, name.c_str()), keep, false);
}

void check_cut(const Reading& r, std::size_t frames, std::uint64_t start, std::uint64_t keep) {
  if (!r.read) return;
  const std::string where = "cut at byte " + std::to_string(keep) + " of a last frame starting at " +
                            std::to_string(start) + ": " + std::to_string(r.frames) + " frames of " +
                            std::to_string(frames) + ", ";
  const std::string cut = r.cuts.empty() ? "no truncation" : r.cuts[0].message();
  if (r.frames > frames) dcsgrid::fuzz::finding("a cut file gave more frames than the whole", (where + cut).c_str());
#ifdef FUZZ_RECORDS_WITHOUT_FRAMES
  // TRR: a frame's reading starts at the records without coordinates before it; a cut at one of
  // their boundaries leaves a whole, shorter file (fuzz/regressions/cuts/trr_cut_at_a_record_boundary.trr).
  if (r.frames == frames - 1 && r.cuts.empty()) return;
#endif
  if (r.frames < frames && r.cuts.empty())
    dcsgrid::fuzz::finding("a cut lost a frame without reporting a truncation", (where + cut).c_str());
#ifdef FUZZ_STRICT_CUTS
  // Fixed frame layouts (DCD, XTC): exactly the frames before the cut, and the cut frame named
  // at its start. (A TRR record without coordinates may be the one cut; a NetCDF file's record
  // layout is libnetcdf's to read, and a damaged header may make it keep fewer records whole.)
  if (r.frames != frames - 1 || r.cuts.size() != 1 || r.cuts[0].offset != start ||
      r.cuts[0].frame != std::int64_t(frames - 1))
    dcsgrid::fuzz::finding("a cut in the last frame was not that frame's truncation", (where + cut).c_str());
#endif
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path path = dcsgrid::fuzz::input_file(data, size, FUZZ_FILE_NAME);
  const Reading whole = read_file(path, size, true);
  if (!whole.read || whole.frames == 0 || !whole.cuts.empty()) return 0;
  // The last frame's start, from the cut one byte short of the end.
  const Reading shortest = read_cut(data, size - 1);
  if (!shortest.read) return 0;
  // The last byte held no frame's data (NetCDF's padding, bytes after the records): nothing cut.
  if (shortest.frames == whole.frames && shortest.cuts.empty()) return 0;
  if (shortest.cuts.empty()) {
    check_cut(shortest, whole.frames, 0, size - 1);  // a frame lost in silence: reported there
    return 0;
  }
  const std::uint64_t start = shortest.cuts[0].offset;
  check_cut(shortest, whole.frames, start, size - 1);
  if (start + 2 >= size) return 0;  // no byte between the frame's start and the shortest cut
  const std::uint64_t span = size - 1 - start, stride = std::max<std::uint64_t>(1, span / kMaxCuts);
  for (std::uint64_t keep = start + 1; keep < size - 1; keep += stride)
    check_cut(read_cut(data, keep), whole.frames, start, keep);
  return 0;
}
