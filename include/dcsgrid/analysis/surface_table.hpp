// The potential over each atom's and each residue's patch of a surface mesh (the vertices whose
// nearest atom it is, TriangleMesh::atom): area, and the area-weighted mean, min and max of the
// vertex values.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dcsgrid/core/mesh.hpp"
#include "dcsgrid/io/structure/atom_labels.hpp"

namespace dcsgrid::analysis {

using io::AtomLabel;

struct PatchRow {
  std::size_t atom = 0;  // atom rows: the atom (0-based); residue rows: its first atom
  AtomLabel label;       // residue rows: name empty
  std::size_t vertices = 0;
  double area = 0;       // Å²
  double mean = 0, min = 0, max = 0;  // NaN for a patch without vertices
};

struct SurfaceTable {
  std::vector<PatchRow> atoms;     // every atom, in input order
  std::vector<PatchRow> residues;  // every residue (chain, number, name), in order of first atom
  double area = 0;                 // the whole mesh's, Å² (mesh_area's)
};

// labels: one per atom, or empty (then each atom is its own residue, named by its number); atoms
// with an empty label also stand alone.
// Needs mesh.value and mesh.atom.
SurfaceTable surface_table(const TriangleMesh& mesh, std::size_t atom_count,
                           const std::vector<AtomLabel>& labels);

// CSV with a header: chain,residue_name,residue_number[,atom_name],atom,vertices,area_A2,mean,min,max
// (atom: 1-based; mean is area-weighted; empty fields for a patch without vertices).
std::string table_csv(const std::vector<PatchRow>& rows, bool with_atom_names);
// {"atoms": [...], "residues": [...]}, the same fields (null for a patch without vertices).
nlohmann::json table_json(const SurfaceTable& table);

}  // namespace dcsgrid::analysis
