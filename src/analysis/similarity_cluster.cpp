// Similarity indices from a Gram matrix, and average-linkage clustering for the map order.
#include <cmath>
#include <limits>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/analysis/similarity.hpp"
#include "dcsgrid/core/error.hpp"

namespace dcsgrid::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void require_square(const std::vector<double>& m, std::size_t n, const char* what) {
  if (m.size() != n * n)
    throw Error(std::string(what) + ": matrix has " + std::to_string(m.size()) +
                " entries, expected " + std::to_string(n) + "x" + std::to_string(n));
}

// Applies index(<a,b>, <a,a>, <b,b>) to every pair; NaN where the denominator vanishes.
template <typename Index>
std::vector<double> index_from_gram(const std::vector<double>& gram, std::size_t n, Index index) {
  require_square(gram, n, "similarity");
  std::vector<double> out(n * n);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      out[a * n + b] = index(gram[a * n + b], gram[a * n + a], gram[b * n + b]);
  return out;
}

}  // namespace

std::vector<double> hodgkin_from_gram(const std::vector<double>& gram, std::size_t n) {
  return index_from_gram(gram, n, [](double ab, double aa, double bb) {
    const double den = aa + bb;
    return den > 0 ? 2 * ab / den : kNaN;
  });
}

std::vector<double> carbo_from_gram(const std::vector<double>& gram, std::size_t n) {
  return index_from_gram(gram, n, [](double ab, double aa, double bb) {
    const double den = std::sqrt(aa) * std::sqrt(bb);
    return den > 0 ? ab / den : kNaN;
  });
}

void require_nonzero_maps(const std::vector<double>& gram, const std::vector<std::string>& labels) {
  const std::size_t n = labels.size();
  require_square(gram, n, "similarity");
  std::vector<std::string> zero;
  for (std::size_t a = 0; a < n; ++a)
    if (gram[a * n + a] == 0) zero.push_back(labels[a]);
  if (!zero.empty())
    throw Error(fmt::format("similarity: {} {} {} zero at every point compared: any similarity "
                            "index with a zero map is 0/0",
                            zero.size() == 1 ? "map" : "maps", fmt::join(zero, ", "),
                            zero.size() == 1 ? "is" : "are"));
}

// Agglomerative clustering with Lance–Williams updates for average linkage and a cached nearest
// neighbour per cluster (average O(n²)). A cluster lives in the slot of its smallest member;
// ties in distance go to the pair of smallest slots.
std::vector<std::size_t> average_linkage_order(const std::vector<double>& distance, std::size_t n) {
  require_square(distance, n, "clustering");
  if (n == 0) return {};
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> d(distance);
  for (double& v : d)
    if (std::isnan(v)) v = inf;
  std::vector<std::vector<std::size_t>> leaves(n);
  std::vector<std::size_t> size(n, 1);
  std::vector<bool> active(n, true);
  for (std::size_t i = 0; i < n; ++i) leaves[i] = {i};

  std::vector<std::size_t> nn(n, n);
  std::vector<double> nnd(n, inf);
  auto find_nearest = [&](std::size_t i) {
    nn[i] = n;
    nnd[i] = inf;
    for (std::size_t j = 0; j < n; ++j)
      if (j != i && active[j] && (nn[i] == n || d[i * n + j] < nnd[i])) {
        nn[i] = j;
        nnd[i] = d[i * n + j];
      }
  };
  for (std::size_t i = 0; i < n; ++i) find_nearest(i);

  for (std::size_t step = 1; step < n; ++step) {
    // The closest pair; the first slot in order wins ties, and nn[] holds the smallest partner.
    std::size_t a = n;
    for (std::size_t i = 0; i < n; ++i)
      if (active[i] && (a == n || nnd[i] < nnd[a])) a = i;
    std::size_t b = nn[a];
    if (b < a) std::swap(a, b);
    // Merge b into a (a < b: a holds the smaller original index).
    for (std::size_t k = 0; k < n; ++k) {
      if (!active[k] || k == a || k == b) continue;
      const double merged =
          (double(size[a]) * d[k * n + a] + double(size[b]) * d[k * n + b]) / double(size[a] + size[b]);
      d[k * n + a] = d[a * n + k] = merged;
    }
    leaves[a].insert(leaves[a].end(), leaves[b].begin(), leaves[b].end());
    leaves[b].clear();
    size[a] += size[b];
    active[b] = false;
    for (std::size_t k = 0; k < n; ++k) {
      if (!active[k]) continue;
      if (k == a || nn[k] == a || nn[k] == b) {
        find_nearest(k);
      } else if (d[k * n + a] < nnd[k] || (d[k * n + a] == nnd[k] && a < nn[k])) {
        nn[k] = a;
        nnd[k] = d[k * n + a];
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    if (active[i]) return leaves[i];
  return {};
}

}  // namespace dcsgrid::analysis
