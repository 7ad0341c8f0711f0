// Parallel parsing of line-oriented text: the text is cut at line boundaries into pieces (a few
// per thread, shared out as threads come free), each piece parsed into its own AtomSet, the
// pieces joined in file order. A piece that fails only says so: the caller then reads the file
// serially, which names the first error in file order with its line, as a one-thread read does.
#pragma once
#include <omp.h>

#include <cstddef>
#include <string_view>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::io::detail {

struct ChunkAtoms {
  AtomSet atoms;
  std::vector<std::size_t> lines;        // of each atom, counted from the piece's first line (1)
  std::size_t line_count = 0;            // lines in the piece
  std::vector<std::size_t> model_marks;  // atoms.size() at each MODEL record, in order
  bool failed = false;
};

// Room for n atoms (and their radii when radii) and their lines, in 2 MiB pages where large.
void reserve_atoms(AtomSet& atoms, std::vector<std::size_t>& lines, std::size_t n, bool radii = false);

// How many pieces to cut `bytes` of text into: threads = 0, a few per OpenMP thread (pieces of at
// least 256 KiB, so small texts stay in one); threads = n, n pieces (of at least 4 KiB).
std::size_t chunk_count(std::size_t bytes, int threads);

// `text` cut into `count` pieces (fewer when it has fewer lines), each beginning at a line start.
std::vector<std::string_view> split_at_lines(std::string_view text, std::size_t count);

// The pieces' atoms joined in order (every piece must have succeeded), copied in parallel, and
// their lines counted from first_line, the first piece's first line.
void join_atoms(std::vector<ChunkAtoms>& pieces, std::size_t first_line, AtomSet& atoms,
                std::vector<std::size_t>& lines);

// scan(piece, result) over the pieces of `text`, in parallel. scan may throw: the piece is then
// marked failed. bytes_per_atom sizes each piece's AtomSet up front.
template <class Scan>
std::vector<ChunkAtoms> scan_chunks(std::string_view text, std::size_t count,
                                    std::size_t bytes_per_atom, Scan scan) {
  const std::vector<std::string_view> pieces = split_at_lines(text, count);
  std::vector<ChunkAtoms> out(pieces.size());
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    try {
      reserve_atoms(out[i].atoms, out[i].lines, pieces[i].size() / bytes_per_atom + 1);
      scan(pieces[i], out[i]);
    } catch (...) {  // exceptions must not leave an OpenMP region; the serial pass reports it
      out[i].failed = true;
    }
  }
  return out;
}

inline bool any_failed(const std::vector<ChunkAtoms>& pieces) {
  for (const ChunkAtoms& p : pieces)
    if (p.failed) return true;
  return false;
}

}  // namespace dcsgrid::io::detail
