// Two gemmi structures compared field by field, for the PDB-in-pieces test and fuzz target
// (io/structure/pdb_chunks.hpp): the first field where they differ, with where it is.
#pragma once
#include <gemmi/model.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace dcsgrid::test {

// The first field where two structures differ, "" where none does.
class Differences {
 public:
  std::string first;
  template <class T>
  void check(const std::string& at, const char* field, const T& a, const T& b) {
    if (!first.empty() || a == b) return;
    if constexpr (std::is_floating_point_v<T>)
      if (a != a && b != b) return;  // NaN in both
    std::ostringstream out;
    out << at << " " << field << ": " << a << " vs " << b;
    first = out.str();
  }
};

template <class T>
inline std::string joined(const std::vector<T>& v) {
  std::ostringstream out;
  for (const T& x : v) out << x << "|";
  return out.str();
}

inline std::string cell_text(const gemmi::UnitCell& c) {
  return joined(std::vector<double>{c.a, c.b, c.c, c.alpha, c.beta, c.gamma});
}

inline void compare_atom(Differences& d, const std::string& at, const gemmi::Atom& a,
                  const gemmi::Atom& b) {
  d.check(at, "name", a.name, b.name);
  d.check(at, "altloc", int(a.altloc), int(b.altloc));
  d.check(at, "occ", a.occ, b.occ);
  d.check(at, "b_iso", a.b_iso, b.b_iso);
  d.check(at, "element", std::string(a.element.name()), std::string(b.element.name()));
  d.check(at, "charge", int(a.charge), int(b.charge));
  d.check(at, "serial", a.serial, b.serial);
  d.check(at, "x", a.pos.x, b.pos.x);
  d.check(at, "y", a.pos.y, b.pos.y);
  d.check(at, "z", a.pos.z, b.pos.z);
  const auto ua = a.aniso.elements_pdb(), ub = b.aniso.elements_pdb();
  d.check(at, "aniso", joined(std::vector<float>(ua.begin(), ua.end())),
          joined(std::vector<float>(ub.begin(), ub.end())));
}

inline void compare_residue(Differences& d, const std::string& at, const gemmi::Residue& a,
                     const gemmi::Residue& b) {
  d.check(at, "name", a.name, b.name);
  d.check(at, "seqid", a.seqid.str(), b.seqid.str());
  d.check(at, "segment", a.segment, b.segment);
  d.check(at, "het_flag", int(a.het_flag), int(b.het_flag));
  d.check(at, "entity_type", int(a.entity_type), int(b.entity_type));
  d.check(at, "subchain", a.subchain, b.subchain);
  d.check(at, "is_cis", a.is_cis, b.is_cis);
  d.check(at, "atoms", a.atoms.size(), b.atoms.size());
  for (std::size_t i = 0; i < a.atoms.size() && d.first.empty(); ++i)
    compare_atom(d, at + " atom " + std::to_string(i), a.atoms[i], b.atoms[i]);
}

inline void compare_header(Differences& d, const gemmi::Structure& a, const gemmi::Structure& b) {
  d.check("", "name", a.name, b.name);
  d.check("", "cell", cell_text(a.cell), cell_text(b.cell));
  d.check("", "spacegroup", a.spacegroup_hm, b.spacegroup_hm);
  d.check("", "resolution", a.resolution, b.resolution);
  d.check("", "remarks", joined(a.raw_remarks), joined(b.raw_remarks));
  d.check("", "helices", a.helices.size(), b.helices.size());
  d.check("", "sheets", a.sheets.size(), b.sheets.size());
  d.check("", "assemblies", a.assemblies.size(), b.assemblies.size());
  d.check("", "ncs", a.ncs.size(), b.ncs.size());
  d.check("", "info", a.info.size(), b.info.size());
  for (const auto& [key, value] : a.info) d.check("info", key.c_str(), value, b.get_info(key));
  d.check("", "entities", a.entities.size(), b.entities.size());
  for (std::size_t i = 0; i < a.entities.size() && d.first.empty(); ++i) {
    d.check("", "entity name", a.entities[i].name, b.entities[i].name);
    d.check("", "entity subchains", joined(a.entities[i].subchains),
            joined(b.entities[i].subchains));
    d.check("", "entity sequence", joined(a.entities[i].full_sequence),
            joined(b.entities[i].full_sequence));
  }
  d.check("", "connections", a.connections.size(), b.connections.size());
  for (std::size_t i = 0; i < a.connections.size() && d.first.empty(); ++i) {
    const gemmi::Connection &x = a.connections[i], &y = b.connections[i];
    d.check("", "connection", x.name + x.partner1.str() + x.partner2.str(),
            y.name + y.partner1.str() + y.partner2.str());
  }
}

inline std::string first_difference(const gemmi::Structure& a, const gemmi::Structure& b) {
  Differences d;
  compare_header(d, a, b);
  d.check("", "models", a.models.size(), b.models.size());
  for (std::size_t m = 0; m < a.models.size() && d.first.empty(); ++m) {
    const gemmi::Model &ma = a.models[m], &mb = b.models[m];
    d.check("", "model name", ma.name, mb.name);
    d.check("", "chains", ma.chains.size(), mb.chains.size());
    for (std::size_t c = 0; c < ma.chains.size() && d.first.empty(); ++c) {
      const gemmi::Chain &ca = ma.chains[c], &cb = mb.chains[c];
      const std::string at = "chain " + std::to_string(c);
      d.check(at, "name", ca.name, cb.name);
      d.check(at, "residues", ca.residues.size(), cb.residues.size());
      for (std::size_t r = 0; r < ca.residues.size() && d.first.empty(); ++r)
        compare_residue(d, at + " residue " + std::to_string(r), ca.residues[r], cb.residues[r]);
    }
  }
  return d.first;
}

}  // namespace dcsgrid::test
