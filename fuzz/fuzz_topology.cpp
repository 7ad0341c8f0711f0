// Topology readers (io::read_topology, as `batch` reads a trajectory's topology): PSF and PRMTOP,
// one target each (FUZZ_FILE_NAME gives the extension).
#include "dcsgrid/io/topology/topology.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path path = dcsgrid::fuzz::input_file(data, size, FUZZ_FILE_NAME);
  dcsgrid::fuzz::expect_clean(path, [&] {
    const dcsgrid::io::Topology topology = dcsgrid::io::read_topology(path);
    const std::size_t n = topology.atoms.size();
    if (topology.atom_names.size() != n || topology.residue_names.size() != n ||
        topology.residue_numbers.size() != n)
      dcsgrid::fuzz::finding("per-atom columns of different lengths", FUZZ_FILE_NAME);
  });
  return 0;
}
