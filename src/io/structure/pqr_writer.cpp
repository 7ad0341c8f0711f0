// PQR output: the atoms as dcsgrid uses them, with their labels.
#include "dcsgrid/io/structure/write_pqr.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "io/maps/output_file.hpp"
#include "io/text/text.hpp"

namespace dcsgrid::io {

void write_pqr(const std::filesystem::path& path, const AtomSet& atoms, const std::vector<AtomLabel>& labels) {
  if (labels.size() != atoms.size())
    throw Error(printable(path.string()) + ": " + std::to_string(labels.size()) + " atom labels for " +
                std::to_string(atoms.size()) + " atoms");
  AtomicFile target(path);
  OutputFile out(target.temp_path(), path);
  std::string text;
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const AtomLabel& l = labels[i];
    const float radius = atoms.has_radii() ? atoms.r[i] : 0.0f;
    // pdb2pqr's columns up to the coordinates (PyMOL reads them as PDB); past them, fields.
    const std::string name = l.name.size() < 4 ? " " + l.name : l.name;
    const std::string number = l.residue_number.size() > 1 && !std::isdigit((unsigned char)l.residue_number.back())
                                   ? l.residue_number : l.residue_number + " ";  // the insertion code, column 27
    text += fmt::format("{:<6}{:>5} {:<4} {:>3} {:1}{:>5}   {:>8.3f}{:>8.3f}{:>8.3f} {:>7} {:>6}\n", l.record,
                        i + 1, name, l.residue, l.chain, number, atoms.x[i], atoms.y[i], atoms.z[i],
                        shortest(atoms.q[i]), shortest(radius));
    if (text.size() > (1 << 20)) out.write(text), text.clear();
  }
  out.write(text + "END\n");
  out.close();
  target.commit();
}

}  // namespace dcsgrid::io
