// gemmi's PDB parse in pieces (io/structure/pdb_chunks.hpp, forced to apply to small texts) against
// gemmi's serial parse of the same text: where the pieces apply they must give the serial
// structure field by field, and they must not apply where the serial parse fails.
#include <gemmi/pdb.hpp>
#include <optional>
#include <string>

#include "fuzz_input.hpp"
#include "gemmi_structure_diff.hpp"
#include "io/structure/pdb_chunks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcsgrid::io::TextBuffer padded(std::string_view(reinterpret_cast<const char*>(data), size));
  dcsgrid::io::detail::pad_short_connection_records(padded);  // as the program does before gemmi
  const std::string text(padded.view());
  std::optional<gemmi::Structure> serial;
  try {
    serial = gemmi::read_pdb_from_memory(text.data(), text.size(), "input.pdb");
  } catch (const std::exception&) {  // gemmi's own rejection: the pieces must not apply
  }
  for (const std::size_t pieces : {2, 3, 5}) {
    std::optional<gemmi::Structure> merged;
    try {
      merged = dcsgrid::io::detail::read_pdb_in_chunks(text, "input.pdb", pieces, 1);
    } catch (const std::exception& e) {
      dcsgrid::fuzz::finding("read_pdb_in_chunks threw", e.what());
    }
    if (!merged) continue;
    if (!serial) dcsgrid::fuzz::finding("the pieces applied where gemmi's serial parse fails", "");
    const std::string difference = dcsgrid::test::first_difference(*serial, *merged);
    if (!difference.empty())
      dcsgrid::fuzz::finding("the pieces differ from gemmi's serial parse", difference.c_str());
  }
  return 0;
}
