// A PDB text parsed by gemmi in pieces on several threads, the pieces' structures merged into the
// one gemmi::read_pdb_from_memory gives for the whole text (gemmi 0.5.7's reading replayed: chain
// runs, residues regrouped by id within a run, TER's entity types, subchains, connections).
//
// Guaranteed equal to the serial parse: everything gemmi reads from the text. Models (one: the
// pieces only apply to a one-model text), chains (names, order, one Chain per run of a name),
// residues (name, seqid, segment, het_flag, entity_type, subchain, is_cis, order, atoms regrouped
// as gemmi does), atoms (name, altloc, occ, b_iso, element, charge, serial, pos, aniso, order), and
// the structure's header data (cell, spacegroup, info, remarks, entities and their subchains,
// helices, sheets, assemblies, ncs, origx, connections), which all come from the first piece.
#pragma once
#include "dcsgrid/io/text/text_buffer.hpp"
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <gemmi/model.hpp>

namespace dcsgrid::io::detail {

// A smaller piece is not worth a thread: gemmi parses about 230 MB/s, so a MiB is some 4 ms of
// work, well above the cost of a piece (a thread's hand-off, its Structure, its part of the merge).
inline constexpr std::size_t kMinPdbPieceBytes = std::size_t(1) << 20;

// gemmi::read_pdb_from_memory(text, name) in up to `pieces` pieces (fewer where the text has less
// than min_piece_bytes a piece), parsed in parallel on OpenMP's threads. std::nullopt, for the
// caller to parse serially, where this does not apply: fewer than 2 pieces; no place to cut
// (pieces begin at an ATOM/HETATM line whose previous line is an ATOM, HETATM or ANISOU record);
// more than one model (a MODEL record other than one before the first cut, an ENDMDL record other
// than in the last piece); header records (REMARK, CRYST1, SEQRES, HELIX, LINK...) after the first
// cut; NUL bytes; or any piece's parse fails (the serial parse then names the line and problem).
// Pieces after an END record are ignored, as gemmi stops there. `pieces` as chunk_count
// (read_chunks.hpp) gives it: a few per thread.
std::optional<gemmi::Structure> read_pdb_in_chunks(std::string_view text, const std::string& name,
                                                   std::size_t pieces,
                                                   std::size_t min_piece_bytes = kMinPdbPieceBytes);

// gemmi 0.5 reads an SSBOND's or LINK's distance (columns 74-78) from a record longer than 73
// characters whatever its length, past the end of a shorter one
// (fuzz/regressions/pdb_chunks). Such records, as gemmi names and cuts them (any case of their
// first four letters), are padded with blanks to 80 columns (a copy of the text, only when one
// exists; lines keep their numbers). Every PDB text goes through this before gemmi reads it.
void pad_short_connection_records(TextBuffer& text);

}  // namespace dcsgrid::io::detail
