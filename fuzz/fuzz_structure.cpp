// Structure readers (io::read_all_models, as `dcsgrid` and `batch` read inputs): PQR, PDB, mmCIF,
// PDBQT, XYZ, MOL2, one target each (FUZZ_FILE_NAME gives the extension). The text formats read
// in parallel pieces (PQR, PDBQT, XYZ, and PDB's checks, residues and charges: FUZZ_PARALLEL) are
// read twice, serially and in two pieces, and must give the same atoms or the same error
// (read.hpp promises it).
#include <cstring>
#include <optional>
#include <string>

#include "dcsgrid/io/structure/read.hpp"
#include "fuzz_input.hpp"

namespace {

using dcsgrid::io::Structure;

// The models, or the error message.
struct Outcome {
  std::vector<Structure> models;
  std::optional<std::string> error;
};

Outcome read(const std::filesystem::path& path, int threads) {
  dcsgrid::io::ReadOptions options;
  options.unknown_zero = true;  // reach past the charge lookup with residues the table lacks
  options.threads = threads;
  Outcome outcome;
  dcsgrid::fuzz::expect_clean(path, [&] {
    try {
      outcome.models = dcsgrid::io::read_all_models(path, options);
    } catch (const dcsgrid::Error& e) {
      outcome.error = e.what();
      throw;
    }
  });
  return outcome;
}

bool same_atoms(const Structure& a, const Structure& b) {
  auto same = [](const std::vector<float>& u, const std::vector<float>& v) {
    return u.size() == v.size() && (u.empty() || std::memcmp(u.data(), v.data(), u.size() * 4) == 0);
  };
  return same(a.atoms.x, b.atoms.x) && same(a.atoms.y, b.atoms.y) && same(a.atoms.z, b.atoms.z) &&
         same(a.atoms.q, b.atoms.q) && a.lines == b.lines && a.models_in_file == b.models_in_file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path path = dcsgrid::fuzz::input_file(data, size, FUZZ_FILE_NAME);
  const Outcome serial = read(path, 1);
#ifdef FUZZ_PARALLEL
  const Outcome pieces = read(path, 2);
  if (serial.error != pieces.error)
    dcsgrid::fuzz::finding("serial and parallel reads disagree on the error",
                           (serial.error.value_or("(none)") + " | " +
                            pieces.error.value_or("(none)")).c_str());
  bool same = serial.models.size() == pieces.models.size();
  for (std::size_t i = 0; same && i < serial.models.size(); ++i)
    same = same_atoms(serial.models[i], pieces.models[i]);
  if (!same) dcsgrid::fuzz::finding("serial and parallel reads give different atoms", FUZZ_FILE_NAME);
#endif
  return 0;
}
