// The checks on a map's atoms that every front end makes before laying a grid around them (private
// to src/app): the main command on its input, batch on each structure, model and trajectory frame.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"

namespace dcsgrid::app {

// Where the atoms come from, for the messages: the file, and the trajectory frame (-1: none) or
// the atoms' lines in the file (empty: unknown).
struct AtomsSource {
  std::string file;
  std::int64_t frame = -1;
  const std::vector<std::size_t>* lines = nullptr;
};

// Throws InputError naming the file, the frame or line, and the atom: a coordinate beyond ±1e18 Å
// (or not finite), where float32 distances overflow; and, with refuse_far, an atom far from all the
// others (io::find_outlier: a mistyped coordinate would stretch the grid a thousandfold), which
// the main command's --allow-far-atoms or a given box lets through.
void check_atoms(const AtomSet& atoms, const AtomsSource& source, bool refuse_far);

}  // namespace dcsgrid::app
