#include "app/atom_checks.hpp"

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::app {

namespace {

// InputError at atom i: by its line where the source has lines, else by frame and atom number.
[[noreturn]] void refuse_atom(const AtomSet& atoms, const AtomsSource& source, std::size_t i,
                              const std::string& problem) {
  const std::size_t line = source.lines && i < source.lines->size() ? (*source.lines)[i] : 0;
  std::string where = source.file;
  if (source.frame >= 0) where += fmt::format(" (frame {})", source.frame);
  const std::string atom =
      line ? "this atom" : fmt::format("atom {} at ({:g}, {:g}, {:g}) Å", i + 1, atoms.x[i], atoms.y[i], atoms.z[i]);
  throw InputError(where, line, atom + " " + problem);
}

}  // namespace

void check_atoms(const AtomSet& atoms, const AtomsSource& source, bool refuse_far) {
  if (const std::size_t i = first_atom_out_of_range(atoms); i < atoms.size())
    refuse_atom(atoms, source, i, "lies beyond ±1e18 Å, where float32 distances overflow");
  if (!refuse_far) return;
  const auto outlier = io::find_outlier(atoms);
  if (!outlier) return;
  refuse_atom(atoms, source, outlier->index,
              fmt::format("lies {:.0f} Å from every other atom ({} such atom{}): a mistyped "
                          "coordinate? A grid around all the atoms would be huge; use "
                          "--allow-far-atoms if it is meant, or give a box",
                          outlier->nearest_distance, outlier->count, outlier->count > 1 ? "s" : ""));
}

}  // namespace dcsgrid::app
