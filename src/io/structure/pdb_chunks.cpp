#include "io/structure/pdb_chunks.hpp"

#include <algorithm>
#include <cstring>
#include <gemmi/pdb.hpp>
#include <gemmi/polyheur.hpp>
#include <iterator>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::io::detail {
namespace {

// The records gemmi's PDB reader tells apart, as far as cutting and merging need them.
enum class Record { atom, anisou, model, endmdl, end, header, connection, other };

// gemmi's record tests (pdb_impl::is_record_type: the first four bytes, any case) on a line as
// gemmi's line buffer holds it, '\0' after a line shorter than four bytes. Header records fill
// the Structure's own data (cell, entities, remarks...): only the first piece may have them.
Record record_of(std::string_view line) {
  using gemmi::pdb_impl::is_record_type;
  using gemmi::pdb_impl::is_record_type3;
  char s[4] = {0, 0, 0, 0};
  std::memcpy(s, line.data(), std::min<std::size_t>(4, line.size()));
  if (is_record_type(s, "ATOM") || is_record_type(s, "HETATM")) return Record::atom;
  if (is_record_type(s, "ANISOU")) return Record::anisou;
  if (is_record_type(s, "MODEL")) return Record::model;
  if (is_record_type(s, "ENDMDL")) return Record::endmdl;
  if (is_record_type(s, "SSBOND") || is_record_type(s, "LINK") || is_record_type(s, "CISPEP"))
    return Record::connection;
  for (const char* header : {"REMARK", "SEQRES", "DBREF", "HEADER", "TITLE", "KEYWDS", "EXPDTA",
                             "AUTHOR", "CRYST1", "MTRIXn", "SCALEn", "ORIGX", "HELIX", "SHEET"})
    if (is_record_type(s, header)) return Record::header;
  // After the 4-letter records: "END" also matches "END." and such, none of which they are.
  if (is_record_type3(s, "END")) return Record::end;
  return Record::other;
}

// gemmi reads a line into a 121-byte buffer (copy_line_from_stream): at most 120 bytes, the rest
// skipped up to the line end or up to a byte >= 0x80, after which the rest reads as a line.
constexpr std::size_t kGemmiLineBytes = 120;

// The lines of a text as gemmi's PDB reader cuts them (a text without NUL bytes).
class GemmiLines {
 public:
  explicit GemmiLines(std::string_view text) : text_(text) {}

  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const std::size_t size = std::min(kGemmiLineBytes, text_.size() - pos_);
    const char* begin = text_.data() + pos_;
    const void* newline = std::memchr(begin, '\n', size);
    line = {begin, newline ? std::size_t(static_cast<const char*>(newline) - begin) + 1 : size};
    pos_ += line.size();
    if (line.back() != '\n')
      while (pos_ < text_.size()) {
        const signed char c = text_[pos_++];
        if (c <= 0 || c == '\n') break;
      }
    return true;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// A piece may begin at line `at`, an ATOM/HETATM line, when the line before it is an ATOM, HETATM
// or ANISOU record: the cut then falls between two atoms of one model, in a chain, so that the
// pieces' chains and residues can be joined. No TER, header or trailer record begins a piece, and
// an ANISOU stays with its atom. (A line longer than 120 bytes that gemmi reads as two stays in
// one piece, where scan_records sees its lines as gemmi does.)
bool can_cut_at(std::string_view text, std::size_t prev, std::size_t at) {
  const Record before = record_of(text.substr(prev, at - prev));
  return (before == Record::atom || before == Record::anisou) &&
         record_of(text.substr(at)) == Record::atom;
}

// The first place at or after `from` where a piece may begin; npos if none.
std::size_t next_cut(std::string_view text, std::size_t from) {
  const std::size_t newline = text.find('\n', from - 1);
  if (newline == std::string_view::npos) return std::string_view::npos;
  std::size_t at = newline + 1;
  std::size_t prev = newline == 0 ? 0 : text.rfind('\n', newline - 1) + 1;  // npos + 1 == 0
  while (at < text.size()) {
    if (can_cut_at(text, prev, at)) return at;
    const std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) break;
    prev = at;
    at = end + 1;
  }
  return std::string_view::npos;
}

// `text` cut into at most `count` pieces of about equal size, at the places can_cut_at allows.
std::vector<std::string_view> cut_pieces(std::string_view text, std::size_t count) {
  std::vector<std::string_view> pieces;
  std::size_t begin = 0;
  for (std::size_t k = 1; k < count; ++k) {
    const std::size_t cut = next_cut(text, std::max(text.size() / count * k, begin + 1));
    if (cut == std::string_view::npos) break;
    pieces.push_back(text.substr(begin, cut - begin));
    begin = cut;
  }
  pieces.push_back(text.substr(begin));
  return pieces;
}

// What a piece holds besides atoms, up to an END record (where gemmi stops reading).
struct PieceRecords {
  std::size_t models = 0, endmdls = 0;
  bool header = false, end = false, nul = false;
  std::vector<std::string> connections;  // SSBOND, LINK and CISPEP lines, as gemmi keeps them
};

PieceRecords scan_records(std::string_view piece) {
  PieceRecords found;
  // A NUL byte shortens gemmi's line (strlen), which then skips the next line too.
  found.nul = piece.find('\0') != std::string_view::npos;
  if (found.nul) return found;
  GemmiLines lines(piece);
  for (std::string_view line; lines.next(line);) switch (record_of(line)) {
      case Record::model: ++found.models; break;
      case Record::endmdl: ++found.endmdls; break;
      case Record::header: found.header = true; break;
      case Record::connection:
        found.header = true;
        found.connections.emplace_back(line);
        break;
      case Record::end: found.end = true; return found;
      default: break;
    }
  return found;
}

struct Piece {
  std::string_view text;
  PieceRecords records;
  gemmi::Structure st;
  std::vector<char> after_ter_at_start;  // of each chain, as gemmi's reader set it in the piece
  std::vector<std::size_t> first_ids, last_ids;  // hashed residue ids of its first, last chain
  bool failed = false;
};

// The hashes of a chain's residue ids, sorted: whether a piece's residues come again in the run
// it continues, told without a hash map on the merge's serial path.
std::vector<std::size_t> sorted_ids(const gemmi::Chain& ch) {
  std::vector<std::size_t> ids;
  ids.reserve(ch.residues.size());
  for (const gemmi::Residue& r : ch.residues) ids.push_back(std::hash<gemmi::ResidueId>()(r));
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::size_t shared_ids(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
  std::size_t shared = 0;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) ++shared, ++i, ++j;
    else a[i] < b[j] ? ++i : ++j;
  }
  return shared;
}

// gemmi's after_ter when it opens a chain: whether the model's first chain of that name was
// closed by a TER record (which made its residues polymer). It skips later TER records of the
// chain and makes its new residues water or non-polymer.
std::vector<char> after_ter_at_chain_starts(const gemmi::Model& model) {
  std::vector<char> out;
  std::unordered_map<std::string_view, const gemmi::Chain*> first;
  for (const gemmi::Chain& ch : model.chains) {
    const auto [it, inserted] = first.try_emplace(ch.name, &ch);
    out.push_back(!inserted && it->second->residues[0].entity_type == gemmi::EntityType::Polymer);
  }
  return out;
}

// Whether piece `index` (of pieces up to `last`) may join the others: the text holds one model
// (a MODEL record only before the first cut, ENDMDL only in the last piece) whose header data is
// all in the first piece.
bool records_allow(const PieceRecords& r, std::size_t index, std::size_t last) {
  if (r.nul || (index > 0 && (r.header || r.models > 0))) return false;
  return r.models <= 1 && (r.endmdls == 0 || index == last);
}

void parse_pieces(std::vector<Piece>& pieces, const std::string& name) {
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    Piece& p = pieces[i];
    try {
      p.records = scan_records(p.text);
      if (!records_allow(p.records, i, i)) {  // not worth parsing
        p.failed = true;
        continue;
      }
      p.st = gemmi::read_pdb_from_memory(p.text.data(), p.text.size(), name);
      if (p.st.models.size() != 1) continue;
      const gemmi::Model& model = p.st.models[0];
      p.after_ter_at_start = after_ter_at_chain_starts(model);
      if (model.chains.empty()) continue;
      p.first_ids = sorted_ids(model.chains.front());
      p.last_ids = model.chains.size() == 1 ? p.first_ids : sorted_ids(model.chains.back());
    } catch (...) {  // exceptions must not leave an OpenMP region; the serial parse reports it
      p.failed = true;
    }
  }
}

void make_water_or_non_polymer(gemmi::Residue& r) {
  r.entity_type = r.is_water() ? gemmi::EntityType::Water : gemmi::EntityType::NonPolymer;
}

// Replays gemmi's reader over the pieces' chains: a piece's first chain continues the run (one
// Chain) of the previous piece's last chain when their names agree; residues of a run are grouped
// by ResidueId (gemmi's resmap); TER records' entity types as the serial reader would set them.
class Merger {
 public:
  explicit Merger(Piece& first) : model_(first.st.models[0]), run_ids_(first.last_ids) {
    for (std::size_t i = 0; i < model_.chains.size(); ++i)
      first_chain_.try_emplace(model_.chains[i].name, i);
    after_ter_ = first.after_ter_at_start.back() || ter_seen(model_.chains.back());
  }

  // Moves the piece's chains in; false where the serial entity types cannot be told. room: how
  // many residues the run that the piece's first chain may continue takes from here on.
  bool add(Piece& p, std::size_t room) {
    const std::vector<char>& local_after_ter = p.after_ter_at_start;
    std::vector<gemmi::Chain>& chains = p.st.models[0].chains;
    for (std::size_t j = 0; j < chains.size(); ++j) {
      gemmi::Chain& chain = chains[j];
      const bool continues = j == 0 && chain.name == model_.chains.back().name;
      const bool serial_after_ter = continues ? after_ter_ : first_chain_closed(chain.name);
      // The piece skipped TER records that the serial reader reads: where they were is lost.
      if (local_after_ter[j] && !serial_after_ter) return false;
      const bool ter = !local_after_ter[j] && ter_seen(chain);
      const bool retype = serial_after_ter && !local_after_ter[j];
      if (continues)
        continue_run(chain, p.first_ids, room, !serial_after_ter && ter, retype);
      else
        open_run(chain, j + 1 == chains.size() ? p.last_ids : std::vector<std::size_t>(), retype);
      after_ter_ = serial_after_ter || ter;
    }
    return true;
  }

  // Moves the atoms of residues that came again to their residues, after those already there and
  // in file order, residue by residue in parallel, each residue's room made once. False when
  // memory runs out.
  bool move_appended_atoms() {
    std::stable_sort(appends_.begin(), appends_.end(), [](const Append& a, const Append& b) {
      return std::tie(a.chain, a.residue) < std::tie(b.chain, b.residue);
    });
    std::vector<std::size_t> starts;  // of each residue's appends
    for (std::size_t i = 0; i < appends_.size(); ++i)
      if (i == 0 || appends_[i].chain != appends_[i - 1].chain ||
          appends_[i].residue != appends_[i - 1].residue)
        starts.push_back(i);
    starts.push_back(appends_.size());
    bool failed = false;
    const std::size_t residues = starts.size() - 1;
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 64)
    for (std::size_t g = 0; g < residues; ++g) {
      const Append& first = appends_[starts[g]];
      std::vector<gemmi::Atom>& atoms = model_.chains[first.chain].residues[first.residue].atoms;
      std::size_t total = atoms.size();
      for (std::size_t i = starts[g]; i < starts[g + 1]; ++i)
        total += appends_[i].from->atoms.size();
      try {
        atoms.reserve(total);
      } catch (...) {  // exceptions must not leave an OpenMP region
#pragma omp atomic write
        failed = true;
        continue;
      }
      for (std::size_t i = starts[g]; i < starts[g + 1]; ++i) {
        std::vector<gemmi::Atom>& from = appends_[i].from->atoms;
        atoms.insert(atoms.end(), std::make_move_iterator(from.begin()),
                     std::make_move_iterator(from.end()));
      }
    }
    return !failed;
  }

 private:
  // Whether a TER record closed a chain that began with after_ter unset.
  static bool ter_seen(const gemmi::Chain& ch) {
    return ch.residues[0].entity_type == gemmi::EntityType::Polymer;
  }

  bool first_chain_closed(const std::string& name) const {
    const auto it = first_chain_.find(name);
    return it != first_chain_.end() && ter_seen(model_.chains[it->second]);
  }

  // ids: of the chain's residues where a later piece may continue it.
  void open_run(gemmi::Chain& chain, const std::vector<std::size_t>& ids, bool retype) {
    if (retype)
      for (gemmi::Residue& r : chain.residues) make_water_or_non_polymer(r);
    first_chain_.try_emplace(chain.name, model_.chains.size());
    model_.chains.push_back(std::move(chain));
    run_ids_ = ids;
    run_index_.clear();
    indexed_ = false;
  }

  // ter: a TER record in the piece makes the whole run polymer, the residues before it included.
  void continue_run(gemmi::Chain& chain, const std::vector<std::size_t>& ids, std::size_t room,
                    bool ter, bool retype) {
    gemmi::Chain& run = model_.chains.back();
    if (run.residues.capacity() < run.residues.size() + room)
      run.residues.reserve(run.residues.size() + room);  // once a run
    if (ter)
      for (gemmi::Residue& r : run.residues) r.entity_type = gemmi::EntityType::Polymer;
    // The common case: no residue comes again, but for the one a cut went through.
    const std::size_t cut_residue = run.residues.back().matches(chain.residues.front()) ? 1 : 0;
    if (!indexed_ && shared_ids(run_ids_, ids) == cut_residue) {
      if (cut_residue) appends_.push_back({model_.chains.size() - 1, run.residues.size() - 1,
                                           &chain.residues.front()});
      const auto rest = chain.residues.begin() + std::ptrdiff_t(cut_residue);
      if (retype) std::for_each(rest, chain.residues.end(), make_water_or_non_polymer);
      run.residues.insert(run.residues.end(), std::make_move_iterator(rest),
                          std::make_move_iterator(chain.residues.end()));
      std::vector<std::size_t> all;
      all.reserve(run_ids_.size() + ids.size());
      std::set_union(run_ids_.begin(), run_ids_.end(), ids.begin(), ids.end(),
                     std::back_inserter(all));
      run_ids_ = std::move(all);
      return;
    }
    if (!indexed_) {
      run_index_.reserve(run.residues.size() + chain.residues.size());
      for (std::size_t i = 0; i < run.residues.size(); ++i)
        run_index_.try_emplace(run.residues[i], i);
      indexed_ = true;
    }
    for (gemmi::Residue& r : chain.residues) {
      const auto [it, inserted] =
          run_index_.try_emplace(static_cast<const gemmi::ResidueId&>(r), run.residues.size());
      if (inserted) {
        if (retype) make_water_or_non_polymer(r);
        run.residues.push_back(std::move(r));
        continue;
      }
      appends_.push_back({model_.chains.size() - 1, it->second, &r});
    }
  }

  // Atoms of a piece's residue that gemmi files under an earlier residue of the run.
  struct Append {
    std::size_t chain, residue;  // in the merged model
    gemmi::Residue* from;        // in its piece
  };

  gemmi::Model& model_;
  std::vector<Append> appends_;  // in file order
  std::unordered_map<std::string, std::size_t> first_chain_;    // index of a name's first chain
  std::vector<std::size_t> run_ids_;  // of the last chain's residues, sorted (sorted_ids)
  std::unordered_map<gemmi::ResidueId, std::size_t> run_index_;  // the last chain's residues,
  bool indexed_ = false;  // kept once one of its residues came again
  bool after_ter_ = false;  // gemmi's after_ter at the end of the merged pieces
};

// For each piece, how many residues the run that its first chain may continue takes from there
// on: that chain's and those of the pieces after that continue it (one-chain pieces between).
std::vector<std::size_t> run_room(const std::vector<Piece>& parts, std::size_t last) {
  std::vector<std::size_t> room(last + 1, 0);
  for (std::size_t i = last; i >= 1; --i) {
    const std::vector<gemmi::Chain>& chains = parts[i].st.models[0].chains;
    room[i] = chains.front().residues.size();
    if (i < last && chains.size() == 1 &&
        parts[i + 1].st.models[0].chains.front().name == chains.front().name)
      room[i] += room[i + 1];
  }
  return room;
}

// What gemmi's reader does once all lines are read, redone over the merged model: subchain names
// (from the entity types), the entities' polymer subchains, the connection records.
void finish_structure(gemmi::Structure& st, const std::vector<std::string>& connections) {
  for (gemmi::Chain& ch : st.models[0].chains)
    if (ch.residues[0].entity_type != gemmi::EntityType::Unknown)
      gemmi::assign_subchain_names(ch);
    else
      for (gemmi::Residue& r : ch.residues) r.subchain.clear();
  for (gemmi::Entity& entity : st.entities) entity.subchains.clear();
  for (gemmi::Chain& ch : st.models[0].chains)
    if (gemmi::Entity* entity = st.get_entity(ch.name))
      if (auto polymer = ch.get_polymer()) entity->subchains.emplace_back(polymer.subchain_id());
  if (!connections.empty()) {
    st.connections.clear();
    gemmi::pdb_impl::process_conn(st, connections);
  }
}

}  // namespace

void pad_short_connection_records(TextBuffer& buffer) {
  const std::string_view text = buffer.view();
  // gemmi reads the distance (columns 74-78) of a record it keeps longer than 73 bytes: shorter
  // than 80 columns, it is padded. gemmi keeps a line up to its first NUL (a C string), and the
  // line's '\r' and '\n' count: "72 characters\r\n" is a record of 74 bytes.
  constexpr std::size_t kShortest = 73, kColumns = 80;
  // gemmi's record test (ialpha4_id): the first four bytes with bit 0x20 cleared.
  const auto is_record = [](std::string_view line, const char (&name)[5]) {
    for (int i = 0; i < 4; ++i)
      if ((line[std::size_t(i)] & ~0x20) != name[i]) return false;
    return true;
  };
  std::string padded;
  std::size_t copied = 0;
  GemmiLines lines(text);  // the lines as gemmi cuts them
  std::string_view line;
  while (lines.next(line)) {
    const std::size_t kept = std::min(line.size(), line.find('\0'));
    if (kept <= kShortest || kept >= kColumns || !(is_record(line, "SSBO") || is_record(line, "LINK")))
      continue;
    // The spaces go before the line's end ('\r', '\n' or NUL).
    std::size_t content = kept;
    if (content > 0 && line[content - 1] == '\n') --content;
    if (content > 0 && line[content - 1] == '\r') --content;
    const std::size_t end = std::size_t(line.data() - text.data()) + content;
    padded.append(text.substr(copied, end - copied));
    padded.append(kColumns - content, ' ');
    copied = end;
  }
  if (copied == 0) return;
  padded.append(text.substr(copied));
  buffer = TextBuffer(padded);
}

std::optional<gemmi::Structure> read_pdb_in_chunks(std::string_view text, const std::string& name,
                                                   std::size_t pieces,
                                                   std::size_t min_piece_bytes) {
  pieces = std::min(pieces, text.size() / std::max<std::size_t>(1, min_piece_bytes));
  if (pieces < 2) return std::nullopt;
  std::vector<Piece> parts;
  for (std::string_view t : cut_pieces(text, pieces)) parts.emplace_back().text = t;
  if (parts.size() < 2) return std::nullopt;
  parse_pieces(parts, name);

  std::size_t last = 0;  // gemmi reads no further than an END record
  while (last + 1 < parts.size() && !parts[last].records.end) ++last;
  for (std::size_t i = 0; i <= last; ++i) {
    const Piece& p = parts[i];
    if (p.failed || p.st.models.size() != 1 || !records_allow(p.records, i, last))
      return std::nullopt;
  }
  gemmi::Structure& st = parts[0].st;
  if (last == 0) return std::move(st);  // as read up to an END record in the first piece
  Merger merger(parts[0]);
  const std::vector<std::size_t> room = run_room(parts, last);
  for (std::size_t i = 1; i <= last; ++i)
    if (!merger.add(parts[i], room[i])) return std::nullopt;
  if (!merger.move_appended_atoms()) return std::nullopt;
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
  for (std::size_t i = 1; i < parts.size(); ++i) parts[i].st = gemmi::Structure();
  finish_structure(st, parts[0].records.connections);
  return std::move(st);
}

}  // namespace dcsgrid::io::detail
