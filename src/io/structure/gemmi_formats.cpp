// PDB and mmCIF through gemmi; charges from the force-field tables (charges.hpp).
#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <future>
#include <optional>
#include <gemmi/cif.hpp>
#include <gemmi/mmcif.hpp>
#include <gemmi/pdb.hpp>
#include <set>

#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/charges/charges.hpp"
#include "dcsgrid/io/structure/element_radii.hpp"
#include "dcsgrid/io/charges/forcefield.hpp"
#include "io/text/chunks.hpp"
#include "io/structure/pdb_chunks.hpp"
#include "io/structure/formats.hpp"

namespace dcsgrid::io::detail {
namespace {

// gemmi parses numbers leniently; check the coordinate and occupancy columns of every atom
// record first so that a bad one is reported with its line. Columns 79-80 (formal charge, unused
// here) are blanked: old files keep a line serial there ("1HPV1704") that gemmi rejects. Adds the
// record's position to positions.
void check_pdb_atom_record(TextFile& file, std::string_view line, std::size_t number,
                           AtomSet& positions) {
  struct Column {
    const char* what;
    std::size_t begin, end;
  };
  static constexpr Column kCoordinates[3] = {{"x coordinate (columns 31-38)", 30, 38},
                                             {"y coordinate (columns 39-46)", 38, 46},
                                             {"z coordinate (columns 47-54)", 46, 54}};
  static constexpr Column kOccupancy = {"occupancy (columns 55-60)", 54, 60};
  for (std::size_t c = 78; c < std::min<std::size_t>(line.size(), 80); ++c)
    file.data[std::size_t(line.data() - file.data.data()) + c] = ' ';
  if (line.size() < 54)
    throw InputError(file.name, number,
                     "truncated atom record: " + std::to_string(line.size()) +
                         " characters, the coordinates need columns 31-54");
  double xyz[3], value;
  for (int a = 0; a < 3; ++a) {
    const Column& c = kCoordinates[a];
    const auto field = line.substr(c.begin, c.end - c.begin);
    if (const auto status = parse_number(field, xyz[a]); status != NumberStatus::ok)
      throw InputError(file.name, number, describe_bad_number(c.what, field, status));
  }
  positions.push_back(float(xyz[0]), float(xyz[1]), float(xyz[2]), 0.0f);
  if (line.size() > kOccupancy.begin) {
    const auto field = line.substr(kOccupancy.begin, kOccupancy.end - kOccupancy.begin);
    if (!trim(field).empty())
      if (const auto status = parse_number(field, value); status != NumberStatus::ok)
        throw InputError(file.name, number, describe_bad_number(kOccupancy.what, field, status));
  }
}

// check_pdb_atom_record over the text's pieces in parallel (threads as ReadOptions::threads); an
// error sends the text through one serial pass, which reports the first bad record in file
// order. Returns every atom record's position.
std::vector<RecordPosition> check_pdb_atom_records(TextFile& file, int threads) {
  constexpr std::size_t kBytesPerAtom = 81;
  AtomSet positions;
  std::vector<std::size_t> lines;
  auto pieces = scan_chunks(file.data, chunk_count(file.data.size(), threads), kBytesPerAtom,
                            [&](std::string_view piece, ChunkAtoms& out) {
                              Lines in(piece);
                              while (in.next())
                                if (is_atom_record(in.line())) {
                                  check_pdb_atom_record(file, in.line(), in.number(), out.atoms);
                                  out.lines.push_back(in.number());
                                }
                              out.line_count = in.number();
                            });
  if (any_failed(pieces)) {
    Lines in(file.data);
    while (in.next())
      if (is_atom_record(in.line())) check_pdb_atom_record(file, in.line(), in.number(), positions);
    throw Error(file.name + ": the parallel record check failed where the serial one did not");
  }
  join_atoms(pieces, 1, positions, lines);
  std::vector<RecordPosition> records(lines.size());
  for (std::size_t i = 0; i < records.size(); ++i)
    records[i] = {positions.x[i], positions.y[i], positions.z[i], lines[i]};
  return records;
}

bool same_position(const RecordPosition& r, const AtomSet& atoms, std::size_t i) {
  return r.x == atoms.x[i] && r.y == atoms.y[i] && r.z == atoms.z[i];
}

// The records by position: an open-addressing hash table of record indices (a linear-time build;
// sorting the records took 0.2 s of a 743k-atom box). A position that two records share is
// marked so: its atoms get no line.
class PositionIndex {
 public:
  explicit PositionIndex(const std::vector<RecordPosition>& records) : records_(records) {
    std::size_t size = 16;
    while (size < 2 * records.size()) size *= 2;
    entries_.assign(size, kEmpty);
    shared_.assign(size, false);
    for (std::size_t r = 0; r < records.size(); ++r) {
      const std::size_t i = probe(records[r].x, records[r].y, records[r].z);
      if (entries_[i] == kEmpty)
        entries_[i] = std::uint32_t(r);
      else
        shared_[i] = true;
    }
  }
  // The record at this position, or nullptr when none or several are.
  const RecordPosition* find(float x, float y, float z) const {
    const std::size_t i = probe(x, y, z);
    return entries_[i] == kEmpty || shared_[i] ? nullptr : &records_[entries_[i]];
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xffffffffu;
  // The slot of this position's entry, or the empty slot where it would go.
  std::size_t probe(float x, float y, float z) const {
    const auto bits = [](float v) { return std::uint64_t(std::bit_cast<std::uint32_t>(v + 0.0f)); };
    const std::uint64_t h = (bits(x) << 32 | bits(y)) * 0x9e3779b97f4a7c15ull ^
                            bits(z) * 0xc2b2ae3d27d4eb4full;  // v + 0: -0 hashes as 0
    const std::size_t mask = entries_.size() - 1;
    for (std::size_t i = (h ^ h >> 31) & mask;; i = (i + 1) & mask) {
      if (entries_[i] == kEmpty) return i;
      const RecordPosition& r = records_[entries_[i]];
      if (r.x == x && r.y == y && r.z == z) return i;
    }
  }

  const std::vector<RecordPosition>& records_;
  std::vector<std::uint32_t> entries_;  // the first record at each slot's position
  std::vector<bool> shared_;            // whether another record has that position too
};

// The line of each atom: its record, found by position. gemmi keeps the file's order except
// where it regroups a residue (and we drop alternative locations), so the next record in file
// order is tried first and a lookup by position (0 where two records share it) resumes the walk.
std::vector<std::size_t> lines_by_position(const std::vector<RecordPosition>& records,
                                           const AtomSet& atoms) {
  std::vector<std::size_t> lines(atoms.size(), 0);
  std::optional<PositionIndex> index;  // built at the first atom out of file order
  std::size_t next = 0;
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    if (next < records.size() && same_position(records[next], atoms, i)) {
      lines[i] = records[next++].line;
      continue;
    }
    if (!index) index.emplace(records);
    const RecordPosition* r = index->find(atoms.x[i], atoms.y[i], atoms.z[i]);
    if (!r) continue;
    lines[i] = r->line;
    next = std::size_t(r - records.data()) + 1;
  }
  return lines;
}

// gemmi's messages carry the line as "Problem in line 12: ..." (PDB) or "name:12:3: ..." (CIF);
// split that off so that InputError says it once.
std::pair<std::size_t, std::string> split_gemmi_message(const std::string& message,
                                                        const std::string& file) {
  std::string_view rest = message;
  if (rest.starts_with("Problem in line "))
    rest.remove_prefix(16);
  else if (rest.starts_with(file + ":"))
    rest.remove_prefix(file.size() + 1);
  else
    return {0, message};
  std::size_t line = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), line);
  if (ec != std::errc()) return {0, message};
  rest.remove_prefix(std::size_t(end - rest.data()));
  while (!rest.empty() &&
         (rest.front() == ':' || std::isdigit((unsigned char)rest.front()) || rest.front() == ' '))
    rest.remove_prefix(1);
  return {line, std::string(rest)};
}

gemmi::Structure parse(const TextFile& file, Format format) {
  try {
    if (format == Format::pdb)
      return gemmi::read_pdb_from_memory(file.data.data(), file.data.size(), file.name);
    return gemmi::make_structure(
        gemmi::cif::read_memory(file.data.data(), file.data.size(), file.name.c_str()));
  } catch (const std::exception& e) {
    auto [line, problem] = split_gemmi_message(e.what(), file.name);
    throw InputError(file.name, line, problem);
  }
}

// Our record check (whose error, naming the line, wins over gemmi's), then gemmi's parse: the
// check refuses what gemmi cannot read safely (integers beyond int, which gemmi's parser overflows
// on), so gemmi never sees it. A PDB file's check also blanks its charge columns in place, and
// gemmi then parses large files in pieces on several threads (read_pdb_chunks.hpp; the serial
// parse where that does not apply or a piece fails).
std::pair<std::vector<RecordPosition>, gemmi::Structure> checked_parse(TextFile& file,
                                                                       Format format, int threads) {
  if (format == Format::pdb) {
    pad_short_connection_records(file.data);  // before the record check: offsets move
    std::vector<RecordPosition> positions = check_pdb_atom_records(file, threads);
    std::optional<gemmi::Structure> pieces =
        read_pdb_in_chunks(file.data, file.name, chunk_count(file.data.size(), threads));
    return {std::move(positions), pieces ? std::move(*pieces) : parse(file, format)};
  }
  std::vector<RecordPosition> positions = check_mmcif_atom_site(file);
  return {std::move(positions), parse(file, format)};
}

// One atom per name: of alternative locations the highest occupancy, the first on ties.
std::vector<const gemmi::Atom*> resolve_altlocs(const std::vector<const gemmi::Atom*>& atoms) {
  std::vector<const gemmi::Atom*> kept;
  kept.reserve(atoms.size());
  for (const gemmi::Atom* a : atoms) {
    if (a->altloc == '\0') {
      kept.push_back(a);
      continue;
    }
    const auto same = std::find_if(kept.begin(), kept.end(), [&](const gemmi::Atom* k) {
      return k->altloc != '\0' && k->name == a->name;
    });
    if (same == kept.end())
      kept.push_back(a);
    else if (a->occ > (*same)->occ)
      *same = a;
  }
  return kept;
}

// gemmi's residues, split where an atom name comes again without an altloc: large MD files
// repeat residue numbers and gemmi then files two residues under one.
std::vector<ResidueRecord> residue_records(const gemmi::Residue& res) {
  std::vector<ResidueRecord> out;
  std::vector<const gemmi::Atom*> run;
  std::set<std::string_view> names;
  auto flush = [&] {
    ResidueRecord r{res.name, res.seqid.str(), {}};
    for (const gemmi::Atom* a : resolve_altlocs(run))
      r.atoms.push_back({a->name, a->element == gemmi::El::X ? std::string() : a->element.name(),
                         a->pos.x, a->pos.y, a->pos.z});
    out.push_back(std::move(r));
    run.clear();
    names.clear();
  };
  for (const gemmi::Atom& a : res.atoms) {
    if (a.altloc == '\0' && !names.insert(a.name).second) flush(), names.insert(a.name);
    run.push_back(&a);
  }
  if (!run.empty()) flush();
  return out;
}

// threads: as ReadOptions::threads.
std::vector<ChainRecord> chain_records(const gemmi::Model& model, int threads) {
  std::vector<ChainRecord> chains;
  for (const gemmi::Chain& ch : model.chains) {
    std::vector<std::vector<ResidueRecord>> split(ch.residues.size());
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 256) \
    if (threads != 1 && split.size() > 256)
    for (std::size_t r = 0; r < split.size(); ++r) split[r] = residue_records(ch.residues[r]);
    ChainRecord c{ch.name, {}};
    for (std::vector<ResidueRecord>& records : split)
      for (ResidueRecord& r : records)
        if (!r.atoms.empty()) c.residues.push_back(std::move(r));
    chains.push_back(std::move(c));
  }
  return chains;
}

Structure charged_structure(const TextFile& file, const std::vector<ChainRecord>& chains,
                            const ChargeTables& tables, const ReadOptions& options) {
  ChargeResult charges =
      assign_charges(chains, tables, options.unknown_zero, file.name, options.threads);
  Structure s;
  s.atoms.reserve(charges.charges.size());
  std::size_t i = 0;
  for (const ChainRecord& c : chains)
    for (const ResidueRecord& r : c.residues)
      for (const AtomRecord& a : r.atoms) {
        if (!std::isfinite(a.x) || !std::isfinite(a.y) || !std::isfinite(a.z))
          throw InputError(file.name, 0,
                           "atom " + a.name + " of " + r.name + " " + r.number + " chain " +
                               c.name + ": coordinates are not finite numbers");
        s.atoms.push_back(a.x, a.y, a.z, charges.charges[i], charges.radii[i]);
        ++i;
      }
  s.warnings = std::move(charges.warnings);
  s.charge_source = tables.forcefield.name;
  s.radius_source = tables.forcefield.table.filename().string();
  if (charges.element_radii > 0)
    s.radius_source += "; " + std::string(kElementRadiiSource) + " for " +
                       std::to_string(charges.element_radii) + " atoms it gives no radius";
  return s;
}

// gemmi reads CRYST1 and _cell; 1 × 1 × 1 Å is the placeholder of files without a crystal. An
// impossible cell is left out with a warning: only periodic methods use it, and they then say
// that the input has no cell.
std::optional<UnitCell> recorded_cell(const TextFile& file, const gemmi::Structure& st,
                                      std::vector<std::string>& warnings) {
  if (!st.cell.is_crystal()) return std::nullopt;
  try {
    return make_cell({st.cell.a, st.cell.b, st.cell.c}, {st.cell.alpha, st.cell.beta, st.cell.gamma});
  } catch (const Error& e) {
    warnings.push_back(file.name + ": the recorded unit cell is ignored: " + e.what());
    return std::nullopt;
  }
}

}  // namespace

std::vector<Structure> read_macromolecule(TextFile& file, Format format, int model,
                                          const ReadOptions& options) {
  // The force-field tables load beside our record check and gemmi's parse.
  auto loading = std::async(options.threads == 1 ? std::launch::deferred : std::launch::async,
                            [&options] {
                              return charge_tables(resolve_forcefield_dir(options.forcefield_dir),
                                                   options.forcefield);
                            });
  auto [positions, st] = checked_parse(file, format, options.threads);
  std::erase_if(st.models, [](const gemmi::Model& m) {
    return std::all_of(m.chains.begin(), m.chains.end(), [](const gemmi::Chain& c) {
      return std::all_of(c.residues.begin(), c.residues.end(),
                         [](const gemmi::Residue& r) { return r.atoms.empty(); });
    });
  });
  const int count = int(st.models.size());
  if (count == 0 && format == Format::mmcif && file.data.find("_atom_site.") != std::string::npos)
    throw InputError(file.name, 0,
                     "no atoms read from _atom_site: gemmi needs its columns id, type_symbol, "
                     "label_alt_id, label_asym_id, Cartn_x, Cartn_y, Cartn_z, occupancy, "
                     "B_iso_or_equiv and auth_seq_id");
  std::vector<Structure> models;
  if (count > 0 && model <= count) {
    const auto tables = loading.get();
    for (int m = model == 0 ? 1 : model; m <= (model == 0 ? count : model); ++m)
      models.push_back(charged_structure(file, chain_records(st.models[m - 1], options.threads),
                                         *tables, options));
  }
  std::vector<std::string> cell_warnings;
  const std::optional<UnitCell> cell = recorded_cell(file, st, cell_warnings);
  for (Structure& s : models) {
    s.lines = lines_by_position(positions, s.atoms);
    s.cell = cell;
    s.warnings.insert(s.warnings.end(), cell_warnings.begin(), cell_warnings.end());
  }
  finish_models(file, model, count, models);
  return models;
}

}  // namespace dcsgrid::io::detail
