#include "io/text/chunks.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "dcsgrid/core/threads.hpp"
#include "io/text/text.hpp"

namespace dcsgrid::io::detail {

// A smaller piece costs more to hand to a thread than its parse takes.
constexpr std::size_t kMinChunkBytes = std::size_t(1) << 18;

void reserve_atoms(AtomSet& atoms, std::vector<std::size_t>& lines, std::size_t n, bool radii) {
  for (std::vector<float>* v : atoms.columns(radii)) {
    v->reserve(n);
    advise_huge_pages(v->data(), v->capacity() * sizeof(float));
  }
  lines.reserve(n);
  advise_huge_pages(lines.data(), lines.capacity() * sizeof(std::size_t));
}

namespace {

// Faults in the columns' reserved pages on every core (MADV_POPULATE_WRITE, Linux 5.14; a hint
// elsewhere), before the vectors' resize fills them on one thread: a fresh page's first touch
// costs more than filling it.
void populate_in_parallel(const std::vector<std::pair<void*, std::size_t>>& ranges) {
  constexpr std::uintptr_t kPage = 4096, kPiece = std::uintptr_t(8) << 20;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> pieces;
  for (const auto& [begin, bytes] : ranges) {
    const auto start = (reinterpret_cast<std::uintptr_t>(begin) + kPage - 1) & ~(kPage - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(begin) + bytes) & ~(kPage - 1);
    for (std::uintptr_t at = start; at < end; at += kPiece) pieces.emplace_back(at, std::min(end, at + kPiece));
  }
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1) if (pieces.size() > 1)
  for (std::size_t i = 0; i < pieces.size(); ++i)
    ::madvise(reinterpret_cast<void*>(pieces[i].first), pieces[i].second - pieces[i].first, MADV_POPULATE_WRITE);
}

}  // namespace

std::size_t chunk_count(std::size_t bytes, int threads) {
  // Asked for explicitly: honoured down to pieces of 4 KiB (the tests cut small files finely);
  // the pieces share OpenMP's threads, however many they are.
  if (threads > 0) return std::min(std::size_t(threads), 1 + bytes / 4096);
  // Several pieces per thread, taken as threads come free: a thread that the system deschedules
  // (a busy machine) then delays its own piece only, not a whole share of the file.
  constexpr std::size_t kPiecesPerThread = 4;
  const std::size_t by_size = std::max<std::size_t>(1, bytes / kMinChunkBytes);
  return std::min(kPiecesPerThread * std::size_t(team_size()), by_size);
}

std::vector<std::string_view> split_at_lines(std::string_view text, std::size_t count) {
  std::vector<std::string_view> pieces;
  std::size_t begin = 0;
  for (std::size_t k = 1; k <= count && begin < text.size(); ++k) {
    std::size_t end = text.size();
    if (k < count) {
      const std::size_t target = std::max(begin, text.size() / count * k);
      const std::size_t newline = text.find('\n', target);
      end = newline == std::string_view::npos ? text.size() : newline + 1;
    }
    pieces.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return pieces;
}

void join_atoms(std::vector<ChunkAtoms>& pieces, std::size_t first_line, AtomSet& atoms,
                std::vector<std::size_t>& lines) {
  std::vector<std::size_t> offsets(pieces.size() + 1, 0), line_offsets(pieces.size(), 0);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    offsets[i + 1] = offsets[i] + pieces[i].atoms.size();
    if (i + 1 < pieces.size()) line_offsets[i + 1] = line_offsets[i] + pieces[i].line_count;
  }
  // Radii travel with the atoms when the format gave them (every piece parses the same format).
  const bool radii = std::ranges::any_of(pieces, [](const ChunkAtoms& p) { return p.atoms.has_radii(); });
  reserve_atoms(atoms, lines, offsets.back(), radii);
  std::vector<std::pair<void*, std::size_t>> ranges{{lines.data(), offsets.back() * sizeof(std::size_t)}};
  for (std::vector<float>* v : atoms.columns(radii)) ranges.emplace_back(v->data(), offsets.back() * sizeof(float));
  populate_in_parallel(ranges);
  for (std::vector<float>* v : atoms.columns(radii)) v->resize(offsets.back());
  lines.resize(offsets.back());
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const AtomSet& a = pieces[i].atoms;
    const std::size_t n = a.size() * sizeof(float);
    if (n == 0) continue;
    std::memcpy(atoms.x.data() + offsets[i], a.x.data(), n);
    std::memcpy(atoms.y.data() + offsets[i], a.y.data(), n);
    std::memcpy(atoms.z.data() + offsets[i], a.z.data(), n);
    std::memcpy(atoms.q.data() + offsets[i], a.q.data(), n);
    if (radii) std::memcpy(atoms.r.data() + offsets[i], a.r.data(), n);
    const std::size_t shift = first_line - 1 + line_offsets[i];
    for (std::size_t k = 0; k < a.size(); ++k) lines[offsets[i] + k] = pieces[i].lines[k] + shift;
    pieces[i] = ChunkAtoms{};  // free as we go
  }
}

}  // namespace dcsgrid::io::detail
