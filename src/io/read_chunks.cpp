#include "read_chunks.hpp"

#include <algorithm>
#include <cstring>

namespace dcsgrid::io::detail {

// A smaller piece costs more to hand to a thread than its parse takes.
constexpr std::size_t kMinChunkBytes = std::size_t(1) << 18;

std::size_t chunk_count(std::size_t bytes, int threads) {
  if (threads > 0) return std::size_t(threads);  // asked for explicitly: honoured (tests use it)
  const std::size_t by_size = std::max<std::size_t>(1, bytes / kMinChunkBytes);
  return std::min(std::size_t(omp_get_max_threads()), by_size);
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

AtomSet join_atoms(std::vector<ChunkAtoms>& pieces) {
  if (pieces.size() == 1) return std::move(pieces.front().atoms);
  std::vector<std::size_t> offsets(pieces.size() + 1, 0);
  for (std::size_t i = 0; i < pieces.size(); ++i)
    offsets[i + 1] = offsets[i] + pieces[i].atoms.size();
  AtomSet all;
  for (std::vector<float>* v : {&all.x, &all.y, &all.z, &all.q}) v->resize(offsets.back());
#pragma omp parallel for schedule(static, 1) num_threads(int(pieces.size()))
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const AtomSet& a = pieces[i].atoms;
    const std::size_t n = a.size() * sizeof(float);
    if (n == 0) continue;
    std::memcpy(all.x.data() + offsets[i], a.x.data(), n);
    std::memcpy(all.y.data() + offsets[i], a.y.data(), n);
    std::memcpy(all.z.data() + offsets[i], a.z.data(), n);
    std::memcpy(all.q.data() + offsets[i], a.q.data(), n);
    pieces[i].atoms = AtomSet{};  // free as we go
  }
  return all;
}

}  // namespace dcsgrid::io::detail
