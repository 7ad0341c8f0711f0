#include "dcsgrid/io/charges/charges.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/structure/element_radii.hpp"

namespace dcsgrid::io {
namespace {

// ---- what a residue should hold ----

// The atoms of one residue variant with their charges: from a topology variant and the force
// field, from the force-field table alone, or TIP3P water.
struct Template {
  std::string label;                           // for messages: "NALA (AMBER)"
  std::vector<std::string> names;              // canonical atom names
  std::vector<std::optional<double>> charges;  // empty: the table lacks the atom
  std::vector<double> radii;                   // the table's; 0: none (the element's is taken)
  std::vector<bool> hydrogen;
  std::vector<std::vector<int>> bonds;          // may be empty when the source knows no bonds
  std::vector<int> fold_to;                     // hydrogens: parent; OXT: O; else -1
  std::unordered_map<std::string, int> lookup;  // file atom name -> index

  // The charges add up to an integer (not so for a nucleic acid's 5'/3' ends alone).
  bool integral() const {
    double total = 0;
    for (const auto& q : charges) total += q.value_or(0.0);
    return std::abs(total - std::round(total)) < 1e-3;
  }

  int add(std::string name, std::optional<double> charge, double radius = 0) {
    hydrogen.push_back(is_hydrogen_name(name));
    lookup.emplace(name, int(names.size()));
    names.push_back(std::move(name));
    charges.push_back(charge);
    radii.push_back(radius);
    return int(names.size()) - 1;
  }
  int index(const std::string& name) const {
    const auto it = lookup.find(name);
    return it == lookup.end() ? -1 : it->second;
  }
  // Absent hydrogens go to the heavy atom they bond to: the topology's bond where there is one,
  // else the one their name points to (hydrogen_parent); an absent OXT goes to its twin O.
  void set_fold_targets() {
    std::vector<std::string> heavy;
    for (std::size_t k = 0; k < names.size(); ++k)
      if (!hydrogen[k]) heavy.push_back(names[k]);
    fold_to.assign(names.size(), -1);
    for (std::size_t k = 0; k < names.size(); ++k) {
      if (names[k] == "OXT") fold_to[k] = index("O");
      if (!hydrogen[k]) continue;
      if (k < bonds.size())
        for (int b : bonds[k])
          if (!hydrogen[b]) fold_to[k] = b;
      if (fold_to[k] < 0) fold_to[k] = index(hydrogen_parent(names[k], heavy));
    }
  }
};

constexpr double kTip3pOxygen = -0.834, kTip3pHydrogen = 0.417;

const std::set<std::string, std::less<>> kWaterNames = {"HOH", "WAT", "TIP3", "TIP", "SOL",
                                                        "H2O", "DOD", "TP3",  "T3P", "SPC"};
const std::map<std::string, int, std::less<>> kIonCharges = {
    {"NA", 1},  {"K", 1},    {"CL", -1}, {"MG", 2},  {"CA", 2},  {"ZN", 2}, {"SOD", 1},
    {"POT", 1}, {"CLA", -1}, {"CAL", 2}, {"ZN2", 2}, {"NA+", 1}, {"K+", 1}, {"CL-", -1}};
const std::set<std::string, std::less<>> kCarboxyCaps = {"NME", "NHE", "NH2"};

enum class Kind { amino, nucleic, water, ion, other };

struct Classified {
  Kind kind = Kind::other;
  std::string base;  // amino/nucleic: the topology name before termini ("HIE", "DA")
};

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::toupper((unsigned char)c));
  return out;
}

bool has_atom(const ResidueRecord& r, const TopologyResidue* topo, std::string_view name) {
  for (const AtomRecord& a : r.atoms)
    if (a.name == name || (topo && topo->canonical(a.name) == name)) return true;
  return false;
}

double distance2(const AtomRecord& a, const AtomRecord& b) {
  const double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return dx * dx + dy * dy + dz * dz;
}

// Cysteines whose SG lies within 2.5 Å of another SG: disulfide-bonded (CYX).
std::set<const ResidueRecord*> disulfide_cysteines(const std::vector<ChainRecord>& chains) {
  std::vector<std::pair<const ResidueRecord*, const AtomRecord*>> sulfurs;
  for (const ChainRecord& chain : chains)
    for (const ResidueRecord& r : chain.residues)
      if (const std::string name = upper(r.name); name == "CYS" || name == "CYX")
        for (const AtomRecord& a : r.atoms)
          if (a.name == "SG") sulfurs.emplace_back(&r, &a);
  std::sort(sulfurs.begin(), sulfurs.end(),
            [](const auto& a, const auto& b) { return a.second->x < b.second->x; });
  constexpr double kBond = 2.5;
  std::set<const ResidueRecord*> bonded;
  for (std::size_t i = 0; i < sulfurs.size(); ++i)
    for (std::size_t j = i + 1;
         j < sulfurs.size() && sulfurs[j].second->x - sulfurs[i].second->x < kBond; ++j)
      if (sulfurs[i].first != sulfurs[j].first &&
          distance2(*sulfurs[i].second, *sulfurs[j].second) < kBond * kBond) {
        bonded.insert(sulfurs[i].first);
        bonded.insert(sulfurs[j].first);
      }
  return bonded;
}

// What one residue's charges leave to report (empty: nothing), gathered per residue so that the
// residues can be charged in parallel and reported in file order.
struct ResidueNotes {
  std::string unknown, relocated, non_integral;
  std::size_t folded_hydrogens = 0;
};

std::string residue_label(const ResidueRecord& r, const std::string& chain) {
  return r.name + " " + r.number + (chain.empty() ? "" : " " + chain);
}

// Charges and radii for the atoms of one residue from its template.
ResidueNotes apply(const ResidueRecord& r, const std::string& chain, const Template& t,
                   double* charges, double* radii);

// How a residue gets its charges: an ion's, a template's, or none (its notes say why).
struct ResiduePlan {
  const ResidueRecord* residue;
  const std::string* chain;
  const Template* t = nullptr;
  std::optional<double> ion_charge;
  std::size_t first_atom = 0;  // in the structure's atom order
  double ion_radius = 0;       // the table's, where it has the ion
};

// The atoms of the residues planned so far.
std::size_t planned_atoms(const std::vector<ResiduePlan>& plans) {
  return plans.empty() ? 0 : plans.back().first_atom + plans.back().residue->atoms.size();
}

class Assigner {
 public:
  Assigner(const ChargeTables& tables, bool unknown_zero)
      : tables_(tables),
        ff_(tables.forcefield),
        unknown_zero_(unknown_zero),
        ff_label_(upper(ff_.name)) {}

  ChargeResult run(const std::vector<ChainRecord>& chains, const std::string& file, int threads);

 private:
  Classified classify(const ResidueRecord& r) const;
  std::string amino_base(const ResidueRecord& r, const std::string& name) const;
  const Template* topology_template(const std::string& ffname, const std::string& topo_name);
  const Template* table_template(const std::string& name);
  const Template* water_template();
  const Template* template_for(const ResidueRecord& r, const Classified& c, char terminus);
  // The templates (nullptr: an ion, or none found) and notes of every residue, in chain order.
  void resolve(const ChainRecord& chain, std::vector<ResiduePlan>& plans,
               std::vector<ResidueNotes>& notes);

  const ChargeTables& tables_;
  const ForceField& ff_;
  bool unknown_zero_;
  std::string ff_label_;
  std::set<const ResidueRecord*> disulfides_;
  std::unordered_map<std::string, std::optional<Template>> cache_;
};

bool is_amino_topology(const TopologyResidue& t) {
  return t.find("N") && t.find("CA") && t.find("C");
}
bool is_nucleic_topology(const TopologyResidue& t) { return t.find("C1'") != nullptr; }

std::string Assigner::amino_base(const ResidueRecord& r, const std::string& name) const {
  const Topology& topo = tables_.topology;
  static const std::map<std::string, std::string, std::less<>> kCharmmHistidine = {
      {"HSD", "HID"}, {"HSE", "HIE"}, {"HSP", "HIP"}};
  if (const auto it = kCharmmHistidine.find(name); it != kCharmmHistidine.end()) return it->second;
  if (name == "HIS") {
    const TopologyResidue* his = topo.find("HIS");
    const bool hd1 = has_atom(r, his, "HD1"), he2 = has_atom(r, his, "HE2");
    return hd1 && he2 ? "HIP" : hd1 ? "HID" : "HIE";
  }
  if (name == "CYS" && disulfides_.count(&r) && !has_atom(r, topo.find("CYS"), "HG")) return "CYX";
  if (name == "ASP" && has_atom(r, topo.find("ASH"), "HD2")) return "ASH";
  if (name == "GLU" && has_atom(r, topo.find("GLH"), "HE2")) return "GLH";
  return name;
}

Classified Assigner::classify(const ResidueRecord& r) const {
  const std::string name = upper(r.name);
  if (kWaterNames.count(name)) return {Kind::water, "WAT"};
  if (r.atoms.size() == 1 && kIonCharges.count(name)) return {Kind::ion, name};
  const Topology& topo = tables_.topology;
  const std::string amino = amino_base(r, name);
  if (const TopologyResidue* t = topo.find(amino); t && is_amino_topology(*t))
    return {Kind::amino, amino};
  // Nucleotides: "DA", "A", "RA" -> RA or DA by the presence of O2'.
  std::string letter = name;
  if (letter.size() == 2 && (letter[0] == 'D' || letter[0] == 'R')) letter.erase(0, 1);
  if (letter.size() == 1) {
    const TopologyResidue* ribo = topo.find("R" + letter);
    const bool has_o2 = has_atom(r, ribo, "O2'");
    const std::string base = (has_o2 ? "R" : "D") + letter;
    if (const TopologyResidue* t = topo.find(base); t && is_nucleic_topology(*t))
      return {Kind::nucleic, base};
  }
  return {Kind::other, name};
}

const Template* Assigner::topology_template(const std::string& ffname,
                                            const std::string& topo_name) {
  const std::string key = "topology:" + ffname + ":" + topo_name;
  if (const auto it = cache_.find(key); it != cache_.end())
    return it->second ? &*it->second : nullptr;
  auto& slot = cache_[key];
  const TopologyResidue* topo = tables_.topology.find(topo_name);
  if (!topo || !ff_.residue(ffname)) return nullptr;
  Template t;
  t.label = ffname + " (" + ff_label_ + ")";
  const ForceField::AtomMap& table = *ff_.residue(ffname);
  std::map<std::size_t, int> by_parameter;
  for (const TopologyAtom& a : topo->atoms) {
    const auto it = table.find(a.name);
    const ForceField::Parameter* p = it == table.end() ? nullptr : &ff_.parameters[it->second];
    const int k = t.add(a.name, p ? std::optional<double>(p->charge) : std::nullopt, p ? p->radius : 0.0);
    if (it != table.end()) by_parameter.emplace(it->second, k);
  }
  for (const auto& [alt, name] : topo->altnames)
    if (const int k = t.index(name); k >= 0) t.lookup.emplace(alt, k);
  // The table's own names for the same atoms are accepted too (OP1 for the topology's O1P).
  for (const auto& [key, parameter] : table)
    if (const auto it = by_parameter.find(parameter); it != by_parameter.end())
      t.lookup.emplace(key, it->second);
  t.bonds.resize(t.names.size());
  for (std::size_t k = 0; k < topo->atoms.size(); ++k)
    for (const std::string& b : topo->atoms[k].bonds)
      if (const int j = t.index(b); j >= 0) t.bonds[k].push_back(j);
  t.set_fold_targets();
  slot = std::move(t);
  return &*slot;
}

// A residue the table has under its own name (ACE, NME, a user's ligand): its entries are the
// atoms.
const Template* Assigner::table_template(const std::string& name) {
  const std::string key = "table:" + name;
  if (const auto it = cache_.find(key); it != cache_.end())
    return it->second ? &*it->second : nullptr;
  auto& slot = cache_[key];
  const ForceField::AtomMap* atoms = ff_.residue(name);
  if (!atoms) return nullptr;
  Template t;
  t.label = name + " (" + ff_label_ + ")";
  std::map<std::size_t, int> by_parameter;
  for (const auto& [atom, p] : *atoms)
    if (!by_parameter.count(p))
      by_parameter[p] = t.add(ff_.parameters[p].atom, ff_.parameters[p].charge, ff_.parameters[p].radius);
  for (const auto& [atom, p] : *atoms) t.lookup.emplace(atom, by_parameter[p]);
  t.set_fold_targets();
  slot = std::move(t);
  return &*slot;
}

// The table's water when it has one (O, H1, H2 with charges), else TIP3P; also under GROMACS's
// names (OW, HW1, HW2).
const Template* Assigner::water_template() {
  if (const auto it = cache_.find("water"); it != cache_.end()) return &*it->second;
  const Template* table = topology_template("WAT", "WAT");
  Template t;
  if (table && table->names.size() == 3 &&
      std::all_of(table->charges.begin(), table->charges.end(),
                  [](const auto& q) { return q.has_value(); })) {
    t = *table;
    t.label = "water (" + ff_label_ + ")";
  } else {
    t.label = "TIP3P water";
    t.add("O", kTip3pOxygen);
    t.add("H1", kTip3pHydrogen);
    t.add("H2", kTip3pHydrogen);
    t.set_fold_targets();
  }
  for (const auto& [alt, name] : {std::pair{"OW", "O"}, {"OH2", "O"}, {"HW1", "H1"}, {"HW2", "H2"}})
    if (const int k = t.index(name); k >= 0) t.lookup.emplace(alt, k);
  return &*(cache_["water"] = std::move(t));
}

// terminus: 'N', 'C', '5', '3' or 0.
const Template* Assigner::template_for(const ResidueRecord& r, const Classified& c, char terminus) {
  switch (c.kind) {
    case Kind::water:
      return water_template();
    case Kind::amino: {
      if (terminus != 'N' && terminus != 'C') return topology_template(c.base, c.base);
      const std::string ffname = terminus + c.base;
      // pdb2pqr gives an N-terminal proline two hydrogens (its NEUTRAL-NTERM patch).
      const std::string topo_name = terminus == 'N' && c.base == "PRO" ? "NEUTRAL-NPRO" : ffname;
      return topology_template(ffname, topo_name);
    }
    case Kind::nucleic: {
      if (terminus == '5' || terminus == '3') {
        const std::string end = c.base + terminus;
        if (const Template* t = topology_template(end, end)) return t;
      }
      return topology_template(c.base, c.base);
    }
    case Kind::ion:
    case Kind::other:
      return table_template(upper(r.name));
  }
  return nullptr;
}

ResidueNotes apply(const ResidueRecord& r, const std::string& chain, const Template& t,
                   double* charges, double* radii) {
  ResidueNotes notes;
  std::vector<int> present(t.names.size(), -1);
  std::vector<std::string> unknown_atoms;
  for (std::size_t i = 0; i < r.atoms.size(); ++i) {
    int k = t.index(r.atoms[i].name);
    if (k >= 0 && (present[k] >= 0 || !t.charges[k])) k = -1;  // a duplicate, or not in the table
    if (k < 0)
      unknown_atoms.push_back(r.atoms[i].name);
    else
      present[k] = int(i);
  }
  if (!unknown_atoms.empty()) {
    std::string list;
    for (const std::string& a : unknown_atoms) list += (list.empty() ? "" : " ") + a;
    notes.unknown = residue_label(r, chain) + ": atom" +
                    std::string(unknown_atoms.size() > 1 ? "s " : " ") + list + " not in " + t.label;
  }

  // Where an absent atom's charge goes: along its fold targets (hydrogen -> parent, OXT -> O)
  // to the first present one, else from the last absent one along the bonds to the nearest
  // present heavy atom.
  auto destination = [&](int k) {
    while (t.fold_to[k] >= 0) {
      k = t.fold_to[k];
      if (present[k] >= 0) return present[k];
    }
    if (t.bonds.empty()) return -1;
    std::vector<bool> seen(t.names.size(), false);
    std::deque<int> queue{k};
    seen[k] = true;
    while (!queue.empty()) {
      const int at = queue.front();
      queue.pop_front();
      if (present[at] >= 0 && !t.hydrogen[at]) return present[at];
      for (int next : t.bonds[at])
        if (!seen[next]) seen[next] = true, queue.push_back(next);
    }
    return -1;
  };

  std::string relocated;
  for (std::size_t k = 0; k < t.names.size(); ++k) {
    if (!t.charges[k]) continue;
    const double q = *t.charges[k];
    if (present[k] >= 0) {
      charges[present[k]] += q;
      radii[present[k]] = t.radii[k];
      continue;
    }
    const int to = destination(int(k));
    if (t.hydrogen[k] && to >= 0) ++notes.folded_hydrogens;
    if (!t.hydrogen[k] && t.names[k] != "OXT")
      relocated += " " + t.names[k] + "->" + (to >= 0 ? r.atoms[to].name : std::string("lost"));
    if (to >= 0) charges[to] += q;
  }
  if (!relocated.empty()) notes.relocated = residue_label(r, chain) + ":" + relocated;
  double total = 0;
  for (std::size_t i = 0; i < r.atoms.size(); ++i) total += charges[i];
  if (unknown_atoms.empty() && t.integral() && std::abs(total - std::round(total)) > 1e-3)
    notes.non_integral = residue_label(r, chain) + " (" + t.label + ": " + std::to_string(total) + ")";
  return notes;
}

// "first 20 items; ... and N more"
std::string summarize(const std::vector<std::string>& items, std::size_t shown = 20) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < shown; ++i) out += (i ? "; " : "") + items[i];
  if (items.size() > shown) out += "; ... and " + std::to_string(items.size() - shown) + " more";
  return out;
}

void Assigner::resolve(const ChainRecord& chain, std::vector<ResiduePlan>& plans,
                       std::vector<ResidueNotes>& notes) {
  std::vector<Classified> kinds;
  kinds.reserve(chain.residues.size());
  for (const ResidueRecord& r : chain.residues) kinds.push_back(classify(r));

  // Termini: the chain's first residue that is not water or an ion, and scanning back from
  // its end past waters, ions and ligands, the last amino acid or nucleotide (not past a
  // C-terminal cap).
  std::vector<char> terminus(chain.residues.size(), 0);
  const auto solvent = [&](std::size_t i) {
    return kinds[i].kind == Kind::water || kinds[i].kind == Kind::ion;
  };
  for (std::size_t i = chain.residues.size(); i-- > 0;) {
    const Kind k = kinds[i].kind;
    if (k == Kind::amino) terminus[i] = 'C';
    if (k == Kind::nucleic) terminus[i] = '3';
    if (k == Kind::amino || k == Kind::nucleic ||
        kCarboxyCaps.count(upper(chain.residues[i].name)))
      break;
  }
  for (std::size_t i = 0; i < chain.residues.size(); ++i)  // OXT, or its altnames (OT2)
    if (kinds[i].kind == Kind::amino &&
        has_atom(chain.residues[i], tables_.topology.find("C" + kinds[i].base), "OXT"))
      terminus[i] = 'C';
  for (std::size_t i = 0; i < chain.residues.size(); ++i) {
    if (solvent(i)) continue;
    if (kinds[i].kind == Kind::amino) terminus[i] = 'N';
    // A 5' end that keeps its phosphate stays the inner variant.
    if (kinds[i].kind == Kind::nucleic && !has_atom(chain.residues[i], nullptr, "P"))
      terminus[i] = '5';
    break;
  }

  std::size_t first_atom = planned_atoms(plans);
  for (std::size_t i = 0; i < chain.residues.size(); ++i) {
    const ResidueRecord& r = chain.residues[i];
    ResiduePlan& plan = plans.emplace_back(ResiduePlan{&r, &chain.name, nullptr, {}, first_atom});
    ResidueNotes& note = notes.emplace_back();
    first_atom += r.atoms.size();
    if (kinds[i].kind == Kind::ion) {
      plan.ion_charge = kIonCharges.find(upper(r.name))->second;
      if (const ForceField::Parameter* p = ff_.find(upper(r.name), r.atoms[0].name)) plan.ion_radius = p->radius;
    } else if (!(plan.t = template_for(r, kinds[i], terminus[i])))
      note.unknown = residue_label(r, chain.name) + ": residue not in the " + ff_label_ +
                     " table (" + std::to_string(r.atoms.size()) + " atoms)";
  }
}

// Atoms without a table radius take their element's; those whose element has none keep 0, with
// a warning.
void take_element_radii(const std::vector<ChainRecord>& chains, ChargeResult& result) {
  std::map<std::string, std::optional<double>, std::less<>> by_element;
  std::vector<std::string> without;
  std::size_t i = 0;
  for (const ChainRecord& c : chains)
    for (const ResidueRecord& r : c.residues)
      for (const AtomRecord& a : r.atoms) {
        double& radius = result.radii[i++];
        if (radius > 0) continue;
        const std::string element = a.element.empty() ? element_from_atom_name(a.name) : a.element;
        auto it = by_element.find(element);
        if (it == by_element.end()) it = by_element.emplace(element, element_radius(element)).first;
        if (it->second) {
          radius = *it->second;
          ++result.element_radii;
        } else {
          without.push_back(residue_label(r, c.name) + " " + a.name + " (" +
                            (element.empty() ? std::string("no element") : element) + ")");
        }
      }
  if (!without.empty())
    result.warnings.push_back("radius 0 for atoms with neither a table radius nor an element radius "
                              "(Bondi 1964; Mantina et al. 2009): " + summarize(without));
}

ChargeResult Assigner::run(const std::vector<ChainRecord>& chains, const std::string& file,
                           int threads) {
  disulfides_ = disulfide_cysteines(chains);
  // Templates, chain by chain (the template cache is not shared); then the residues' charges
  // in parallel; then the notes in file order.
  std::vector<ResiduePlan> plans;
  std::vector<ResidueNotes> notes;
  for (const ChainRecord& chain : chains) resolve(chain, plans, notes);
  ChargeResult result;
  result.charges.assign(planned_atoms(plans), 0.0);
  result.radii.assign(result.charges.size(), 0.0);
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 256) \
    if (threads != 1 && plans.size() > 256)
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const ResiduePlan& p = plans[i];
    double* out = result.charges.data() + p.first_atom;
    double* radii = result.radii.data() + p.first_atom;
    if (p.ion_charge)
      out[0] = *p.ion_charge, radii[0] = p.ion_radius;
    else if (p.t)
      notes[i] = apply(*p.residue, *p.chain, *p.t, out, radii);
  }
  std::vector<std::string> unknown, relocated, non_integral;
  std::size_t folded_hydrogens = 0;
  for (ResidueNotes& n : notes) {
    if (!n.unknown.empty()) unknown.push_back(std::move(n.unknown));
    if (!n.relocated.empty()) relocated.push_back(std::move(n.relocated));
    if (!n.non_integral.empty()) non_integral.push_back(std::move(n.non_integral));
    folded_hydrogens += n.folded_hydrogens;
  }

  if (!unknown.empty()) {
    const std::string list = summarize(unknown);
    if (!unknown_zero_)
      throw InputError(file, 0,
                       "cannot assign " + ff_label_ + " charges: " + list +
                           " (--unknown zero gives them charge 0)");
    result.warnings.push_back("charge 0 for atoms not in the " + ff_label_ + " table: " + list);
  }
  if (folded_hydrogens)
    result.warnings.push_back("folded the charges of " + std::to_string(folded_hydrogens) +
                              " absent hydrogens onto their heavy atoms");
  if (!relocated.empty())
    result.warnings.push_back("absent heavy atoms, charge moved to a bonded atom: " +
                              summarize(relocated));
  if (!non_integral.empty())
    result.warnings.push_back("residues with a non-integer net charge: " +
                              summarize(non_integral));
  take_element_radii(chains, result);
  return result;
}

}  // namespace

ChargeResult assign_charges(const std::vector<ChainRecord>& chains, const ChargeTables& tables,
                            bool unknown_zero, const std::string& file, int threads) {
  return Assigner(tables, unknown_zero).run(chains, file, threads);
}

}  // namespace dcsgrid::io
