// Batch files (HDF5, analysis::BatchFile and io::MapReader as `info`, `similarity` and
// `batch --resume` open them, io::read_hdf5_frame as `compare FILE#FRAME` does): every complete
// frame is read, and the ensemble count asked for.
#include <vector>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/maps/reader.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dcsgrid;
  const std::filesystem::path path = fuzz::input_file(data, size, "input.h5");
  fuzz::expect_clean(path, [&] {
    const analysis::BatchFile batch(path);
    std::vector<float> map(batch.grid().point_count());
    for (std::size_t i = 0; i < batch.frames().size(); ++i)
      if (batch.frames()[i].status == analysis::FrameStatus::complete) batch.read_frame(i, map.data());
    if (batch.has_ensemble()) (void)batch.ensemble_frames();
  });
  fuzz::expect_clean(path, [&] {
    const io::MapReader reader(path);
    std::vector<float> map(reader.grid().point_count());
    for (std::size_t i = 0; i < reader.size(); ++i) reader.read(i, map.data());
  });
  fuzz::expect_clean(path, [&] { (void)io::read_hdf5_frame(path, 0); });
  return 0;
}
