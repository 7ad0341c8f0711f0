// Van der Waals radii of the elements: the radius of an atom whose input names its element but
// gives no radius of its own (PDBQT, XYZ, MOL2; waters, ions and zero-radius hydrogens of a
// force-field table), for the consumers that need radii (surface, --method pb, convert).
//
// Provenance of the numbers (Å):
//   A. Bondi, "van der Waals Volumes and Radii", J. Phys. Chem. 68, 441-451 (1964), Table I:
//      H 1.20, C 1.70, N 1.55, O 1.52, F 1.47, P 1.80, S 1.80, Cl 1.75, Br 1.85, I 1.98, the
//      noble gases, Si, As, Se, Te, and the metals Li 1.82, Na 2.27, K 2.75, Mg 1.73, Ni 1.63,
//      Cu 1.40, Zn 1.39, Ga 1.87, Pd 1.63, Ag 1.72, Cd 1.58, In 1.93, Sn 2.17, Pt 1.75, Au 1.66,
//      Hg 1.55, Tl 1.96, Pb 2.02, U 1.86;
//   M. Mantina, A. C. Chamberlin, R. Valero, C. J. Cramer, D. G. Truhlar, "Consistent van der
//      Waals Radii for the Whole Main Group", J. Phys. Chem. A 113, 5806-5812 (2009), Table 12,
//      for the main-group elements Bondi gives none: Be 1.53, B 1.92, Al 1.84, Ca 2.31, Ge 2.11,
//      Rb 3.03, Sr 2.49, Sb 2.06, Cs 3.43, Ba 2.68, Bi 2.07, Po 1.97, At 2.02, Rn 2.20, Fr 3.48,
//      Ra 2.83.
// Other elements (Fe, Mn, Co, the lanthanides...) have no radius here: neither source gives one.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::io {

// The radius (Å) of an element symbol in any case ("C", "CL", "zn"; "D" is hydrogen), nullopt
// for a symbol the table lacks.
std::optional<double> element_radius(std::string_view element);

// The element a PDB-style atom name implies when no element column says: leading digits skipped,
// then a name beginning with H is hydrogen ("1HB", "HB2", "HG21"), any other its first letter
// ("CA" is carbon: a two-letter element needs the element column). Empty for a name without a
// letter.
std::string element_from_atom_name(std::string_view name);

// Where radii came from, for the info line of the commands that need them.
inline constexpr const char* kElementRadiiSource =
    "van der Waals radii of the elements (Bondi 1964; Mantina et al. 2009)";

// Gives the atoms radii from their elements where the structure has none: the elements are read
// back from the records the atoms' lines point to in `text`, the input's text (PDBQT: the
// AutoDock type in columns 78-79, else the atom name; XYZ: the element field; MOL2: the SYBYL
// type before its '.'). Sets radius_source; does nothing to a structure that has radii (PQR;
// PDB and mmCIF, whose force field gives them). Throws InputError naming the file and line of the
// first atom without an element (XYZ's plain "x y z charge" lines) or with one the table lacks.
void fill_missing_radii(Structure& structure, Format format, std::string_view text);
// The same, reading the text from `path` (the file the structure was read from; standard input
// cannot be read again and is refused) with the format given, else from its name.
void fill_missing_radii(Structure& structure, const std::filesystem::path& path,
                        std::optional<Format> format = std::nullopt);

}  // namespace dcsgrid::io
