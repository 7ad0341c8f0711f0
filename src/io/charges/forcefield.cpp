#include "dcsgrid/io/charges/forcefield.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <regex>

#include "dcsgrid/core/error.hpp"
#include "io/charges/forcefield_xml.hpp"
#include "io/text/text.hpp"

namespace dcsgrid::io {
namespace {

namespace fs = std::filesystem;
using detail::XmlNode;

constexpr const char* kPackageHint =
    "pdb2pqr's force-field data (Debian/Ubuntu package python3-pdb2pqr: "
    "apt install python3-pdb2pqr) or point --forcefield-dir / DCSGRID_FORCEFIELD_DIR at a folder "
    "holding it";

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::toupper((unsigned char)c));
  return out;
}

detail::TextFile load_data_file(const fs::path& path) {
  if (!fs::exists(path))
    throw InputError(path.string(), 0, std::string("missing; it is part of ") + kPackageHint);
  return detail::load_text(path);
}

XmlNode load_xml(const fs::path& path) {
  const auto file = load_data_file(path);
  return detail::parse_xml(file.data, file.name);
}

std::regex compile_pattern(const std::string& pattern, const std::string& file, std::size_t line) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError(file, line, "bad residue pattern '" + pattern + "': " + e.what());
  }
}

// Python's re.match: anchored at the start only.
bool matches_start(const std::string& name, const std::regex& re) {
  return std::regex_search(name, re, std::regex_constants::match_continuous);
}

// ---- topology ----

// Atoms named "N+1" or "C-1" stand for the neighbouring residues' atoms; they are not ours.
bool is_neighbour_placeholder(std::string_view name) {
  return name.find('+') != std::string_view::npos || name.ends_with("-1");
}

TopologyAtom read_topology_atom(const XmlNode& node,
                                std::map<std::string, std::string, std::less<>>& altnames) {
  TopologyAtom atom{node.child_text("name"), {}};
  for (std::string& bond : node.children_text("bond"))
    if (!is_neighbour_placeholder(bond)) atom.bonds.push_back(std::move(bond));
  for (std::string& alt : node.children_text("altname")) altnames[alt] = atom.name;
  return atom;
}

struct Patch {
  std::string name, applyto, newname;
  std::vector<TopologyAtom> add;
  std::map<std::string, std::string, std::less<>> altnames;
  std::vector<std::string> remove;
};

void add_bond_once(TopologyAtom& atom, const std::string& other) {
  if (std::find(atom.bonds.begin(), atom.bonds.end(), other) == atom.bonds.end())
    atom.bonds.push_back(other);
}

TopologyAtom* find_atom(TopologyResidue& residue, std::string_view name) {
  for (TopologyAtom& a : residue.atoms)
    if (a.name == name) return &a;
  return nullptr;
}

// pdb2pqr's Definition.add_patch: a copy of `reference` with the patch's atoms added (or replaced),
// its altnames merged and its removals applied, stored under `newname`.
void apply_patch(Topology& topology, const Patch& patch, const std::string& reference,
                 const std::string& newname) {
  const auto it = topology.residues.find(reference);
  if (it == topology.residues.end()) return;
  TopologyResidue patched = it->second;
  patched.name = newname;
  for (const TopologyAtom& atom : patch.add) {
    if (TopologyAtom* existing = find_atom(patched, atom.name))
      *existing = atom;
    else
      patched.atoms.push_back(atom);
    for (const std::string& bond : atom.bonds)
      if (TopologyAtom* other = find_atom(patched, bond)) add_bond_once(*other, atom.name);
  }
  for (const auto& [alt, name] : patch.altnames) patched.altnames[alt] = name;
  for (const std::string& removed : patch.remove) {
    std::erase_if(patched.atoms, [&](const TopologyAtom& a) { return a.name == removed; });
    for (TopologyAtom& a : patched.atoms) std::erase(a.bonds, removed);
  }
  topology.residues[newname] = std::move(patched);
}

void read_residues(const fs::path& path, Topology& topology) {
  const XmlNode root = load_xml(path);
  for (const XmlNode& node : root.children) {
    if (node.tag != "residue") continue;
    TopologyResidue residue;
    residue.name = node.child_text("name");
    if (residue.name.empty()) throw InputError(path.string(), node.line, "residue without a name");
    for (const XmlNode& child : node.children)
      if (child.tag == "atom" && !is_neighbour_placeholder(child.child_text("name")))
        residue.atoms.push_back(read_topology_atom(child, residue.altnames));
    topology.residues[residue.name] = std::move(residue);
  }
}

std::vector<Patch> read_patches(const fs::path& path) {
  const XmlNode root = load_xml(path);
  std::vector<Patch> patches;
  for (const XmlNode& node : root.children) {
    if (node.tag != "patch") continue;
    Patch patch{
        node.child_text("name"),     node.child_text("applyto"), node.child_text("newname"), {}, {},
        node.children_text("remove")};
    for (const XmlNode& add : node.children)
      if (add.tag == "add")
        for (const XmlNode& atom : add.children)
          if (atom.tag == "atom" && !is_neighbour_placeholder(atom.child_text("name")))
            patch.add.push_back(read_topology_atom(atom, patch.altnames));
    patches.push_back(std::move(patch));
  }
  return patches;
}

// ---- force field ----

void read_parameters(const fs::path& path, ForceField& ff) {
  const auto file = load_data_file(path);
  detail::Lines lines(file.data);
  while (lines.next()) {
    const auto line = detail::trim(lines.line());
    if (line.empty() || line.front() == '#') continue;
    std::string_view fields[5];
    const std::size_t n = detail::split_fields(line, fields, 5);
    if (n < 4)
      throw InputError(
          file.name, lines.number(),
          "expected 'residue atom charge radius', found " + std::to_string(n) + " fields");
    ForceField::Parameter p{std::string(fields[0]), std::string(fields[1]), 0, 0};
    const auto charge = detail::parse_number(fields[2], p.charge);
    if (charge != detail::NumberStatus::ok)
      throw InputError(file.name, lines.number(),
                       detail::describe_bad_number("charge", fields[2], charge));
    const auto radius = detail::parse_number(fields[3], p.radius);
    if (radius != detail::NumberStatus::ok)
      throw InputError(file.name, lines.number(),
                       detail::describe_bad_number("radius", fields[3], radius));
    ff.residues[p.residue][p.atom] = ff.parameters.size();
    ff.parameters.push_back(std::move(p));
  }
  if (ff.parameters.empty()) throw InputError(file.name, 0, "no parameters in the table");
}

// pdb2pqr's ForcefieldHandler: each <residue> of the .names file
//   - with <useresname>: every reference residue matching <name> receives the atoms of the
//     force-field residue named there ("$group" filled from the pattern's first group);
//   - with <atom> entries: every residue matching <name> gets <name> as a second name for the
//     atom named <useatomname>.
void apply_names(const fs::path& path, const Topology& reference, ForceField& ff) {
  const XmlNode root = load_xml(path);
  const std::string file = path.string();
  for (const XmlNode& node : root.children) {
    if (node.tag != "residue") continue;
    const std::string pattern = node.child_text("name");
    const std::string source = node.child_text("useresname");
    const std::regex re = compile_pattern(pattern, file, node.line);
    if (!source.empty()) {
      for (const auto& [name, unused] : reference.residues) {
        std::smatch m;
        if (!std::regex_match(name, m, re)) continue;
        std::string from = source;
        if (const auto at = from.find("$group"); at != std::string::npos)
          from.replace(at, 6, m.size() > 1 ? m[1].str() : std::string());
        const auto src = ff.residues.find(from);
        if (src == ff.residues.end()) continue;
        const ForceField::AtomMap copy = src->second;  // the target may be the source itself
        ForceField::AtomMap& target = ff.residues[name];
        for (const auto& [atom, index] : copy) target[atom] = index;
      }
    }
    std::vector<std::pair<std::string, std::string>> aliases;  // new name, table name
    for (const XmlNode& atom : node.children)
      if (atom.tag == "atom")
        aliases.emplace_back(atom.child_text("name"), atom.child_text("useatomname"));
    if (aliases.empty()) continue;
    for (auto& [name, atoms] : ff.residues) {
      if (!std::regex_match(name, re)) continue;
      for (const auto& [alias, table_name] : aliases)
        if (const auto it = atoms.find(table_name); it != atoms.end()) atoms[alias] = it->second;
    }
  }
}

int element_rank(char element) {
  switch (element) {
    case 'N':
      return 0;
    case 'C':
      return 1;
    case 'O':
      return 2;
    case 'S':
      return 3;
    case 'P':
      return 4;
    default:
      return 5;
  }
}

std::string_view skip_digits(std::string_view name) {
  while (!name.empty() && std::isdigit((unsigned char)name.front())) name.remove_prefix(1);
  return name;
}

}  // namespace

fs::path resolve_forcefield_dir(const fs::path& requested) {
  if (!requested.empty()) return requested;
  if (const char* env = std::getenv("DCSGRID_FORCEFIELD_DIR"); env && *env) return env;
  return DCSGRID_DEFAULT_FORCEFIELD_DIR;
}

const TopologyAtom* TopologyResidue::find(std::string_view atom) const {
  for (const TopologyAtom& a : atoms)
    if (a.name == atom) return &a;
  return nullptr;
}

std::string TopologyResidue::canonical(std::string_view file_atom) const {
  if (find(file_atom)) return std::string(file_atom);
  if (const auto it = altnames.find(file_atom); it != altnames.end() && find(it->second))
    return it->second;
  return {};
}

const TopologyResidue* Topology::find(std::string_view residue) const {
  const auto it = residues.find(residue);
  return it == residues.end() ? nullptr : &it->second;
}

Topology load_topology(const fs::path& dir) {
  Topology topology;
  read_residues(dir / "AA.xml", topology);
  read_residues(dir / "NA.xml", topology);
  // pdb2pqr's Definition: a patch with a <newname> ("N*") makes a variant of every residue its
  // <applyto> pattern matches; every patch is also stored under its own name, made from the
  // residue its <applyto> names (HID from HIS, DA5 from DA).
  for (const Patch& patch : read_patches(dir / "PATCHES.xml")) {
    if (!patch.newname.empty()) {
      const std::regex re = compile_pattern(patch.applyto, (dir / "PATCHES.xml").string(), 0);
      std::vector<std::string> names;
      for (const auto& [name, unused] : topology.residues)
        if (matches_start(name, re)) names.push_back(name);
      for (const std::string& name : names) {
        std::string newname = patch.newname;
        if (const auto star = newname.find('*'); star != std::string::npos)
          newname.replace(star, 1, name);
        apply_patch(topology, patch, name, newname);
      }
    }
    apply_patch(topology, patch, patch.applyto, patch.name);
  }
  return topology;
}

const ForceField::AtomMap* ForceField::residue(std::string_view name) const {
  const auto it = residues.find(name);
  return it == residues.end() ? nullptr : &it->second;
}

const ForceField::Parameter* ForceField::find(std::string_view res, std::string_view atom) const {
  const AtomMap* atoms = residue(res);
  if (!atoms) return nullptr;
  const auto it = atoms->find(atom);
  return it == atoms->end() ? nullptr : &parameters[it->second];
}

ForceField load_forcefield(const fs::path& dir, std::string_view name, const Topology& reference) {
  ForceField ff;
  ff.name = std::string(name);
  const std::string stem = upper(name);
  ff.table = dir / (stem + ".DAT");
  if (!fs::exists(ff.table))
    throw InputError(ff.table.string(), 0,
                     "force-field table for '" + ff.name + "' not found; install " + kPackageHint);
  read_parameters(ff.table, ff);
  apply_names(dir / (stem + ".names"), reference, ff);
  return ff;
}

std::shared_ptr<const ChargeTables> charge_tables(const fs::path& dir,
                                                  std::string_view forcefield) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::shared_ptr<const ChargeTables>> cache;
  const std::lock_guard lock(mutex);
  auto& slot = cache[{dir.string(), upper(forcefield)}];
  if (!slot) {
    auto tables = std::make_shared<ChargeTables>();
    tables->dir = dir;
    tables->topology = load_topology(dir);
    tables->forcefield = load_forcefield(dir, forcefield, tables->topology);
    slot = std::move(tables);
  }
  return slot;
}

bool is_hydrogen_name(std::string_view atom) {
  atom = skip_digits(atom);
  return !atom.empty() && atom.front() == 'H';
}

std::string hydrogen_parent(std::string_view hydrogen,
                            const std::vector<std::string>& heavy_atoms) {
  if (hydrogen == "H5T") hydrogen = "HO5'";
  if (hydrogen == "H3T") hydrogen = "HO3'";
  std::string_view rest = skip_digits(hydrogen);
  if (rest.empty() || rest.front() != 'H') return {};
  rest.remove_prefix(1);

  for (const std::string& heavy : heavy_atoms)
    if (heavy == rest) return heavy;

  for (std::size_t length = rest.size() + 1; length-- > 0;) {
    const std::string_view prefix = rest.substr(0, length);
    const std::string* best = nullptr;
    for (const std::string& heavy : heavy_atoms) {
      const std::string_view element_and_locant = skip_digits(heavy);
      if (element_and_locant.empty() || element_and_locant.substr(1) != prefix) continue;
      if (!best ||
          element_rank(element_and_locant.front()) < element_rank(skip_digits(*best).front()))
        best = &heavy;
    }
    if (best) return *best;
  }
  return heavy_atoms.size() == 1 ? heavy_atoms.front() : std::string();
}

}  // namespace dcsgrid::io
