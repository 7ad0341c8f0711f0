// Device binning (binning.hpp) against host bookkeeping: keys and counts, the capacity choice,
// fixed-capacity slots with padding and the overflow list, dynamic bins from the prefix sum.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "dcsgrid/engine/binning.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "helpers.hpp"

namespace dcsgrid::engine {
namespace {

template <typename T>
std::vector<T> download(const cuda::DeviceBuffer<T>& buffer, std::size_t n) {
  std::vector<T> host(n);
  if (n) DCSGRID_CUDA_CHECK(cudaMemcpy(host.data(), buffer.data(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// Atoms with charges 1, 2, 3, ... so that a slot's charge names its atom.
AtomSet numbered(AtomSet atoms) {
  for (std::size_t i = 0; i < atoms.size(); ++i) atoms.q[i] = float(i + 1);
  return atoms;
}

struct Fixture {
  GridSpec grid = grid_from_origin({-10.3, 4.2, 30.1}, {41, 35, 29}, 0.5);
  Slab slab{0, 29};
  BinGeometry g = make_bin_geometry(grid, slab, 12.0);
  cuda::Stream stream;
  DeviceAtomArrays device;
  DeviceBins bins;
  AtomSet atoms;
  std::vector<std::uint32_t> host_keys, host_counts;  // counts: bin_count + 1 (dropped last)

  void load(AtomSet a) {
    atoms = numbered(std::move(a));
    upload_atom_arrays(atoms, device, stream.get());
    const BinLookup lookup = make_bin_lookup(g);
    host_keys.resize(atoms.size());
    host_counts.assign(g.bin_count() + 1, 0);
    for (std::size_t i = 0; i < atoms.size(); ++i) {
      host_keys[i] = bin_key(lookup, atoms.x[i] - g.frame_origin[0], atoms.y[i] - g.frame_origin[1],
                             atoms.z[i] - g.frame_origin[2]);
      ++host_counts[host_keys[i]];
    }
  }
  std::vector<std::uint32_t> bin_counts() const {
    return {host_counts.begin(), host_counts.end() - 1};
  }
  std::size_t kept() const { return atoms.size() - host_counts.back(); }
  // Around the grid, reaching beyond the bins on every side (some atoms are dropped).
  AtomSet scattered(std::size_t n, std::uint64_t seed) const {
    const auto far = grid.far_corner();
    Box box;
    for (int a = 0; a < 3; ++a) {
      box.lo[a] = grid.origin[a] - 20;
      box.hi[a] = far[a] + 20;
    }
    return test::random_atoms(n, box, seed);
  }
  // n atoms inside bin (ix, iy, iz), away from its faces.
  AtomSet in_bin(std::size_t n, int ix, int iy, int iz, std::uint64_t seed) const {
    Box box;
    const int idx[3] = {ix, iy, iz};
    for (int a = 0; a < 3; ++a) {
      const double lo = g.frame_origin[a] + g.axis[a].lower() + idx[a] * g.axis[a].edge;
      box.lo[a] = lo + 0.1 * g.axis[a].edge;
      box.hi[a] = lo + 0.9 * g.axis[a].edge;
    }
    return test::random_atoms(n, box, seed);
  }
};

AtomSet joined(const AtomSet& a, const AtomSet& b) {
  AtomSet out = a;
  for (std::size_t i = 0; i < b.size(); ++i) out.push_back(b.x[i], b.y[i], b.z[i], b.q[i]);
  return out;
}

TEST(CudaBinning, KeysAndCountsMatchTheHost) {
  DCSGRID_REQUIRE_GPU();
  Fixture f;
  f.load(f.scattered(20000, 1));
  ASSERT_GT(f.host_counts.back(), 100u) << "the test wants some dropped atoms";
  count_bins(f.device, f.g, f.bins, f.stream.get());
  f.stream.synchronize();
  EXPECT_EQ(download(f.bins.keys, f.atoms.size()), f.host_keys);
  EXPECT_EQ(download(f.bins.counts, f.g.bin_count() + 1), f.host_counts);
}

TEST(CudaBinning, CapacityChoiceMatchesTheHostRule) {
  DCSGRID_REQUIRE_GPU();
  Fixture f;
  f.load(f.scattered(30000, 2));
  count_bins(f.device, f.g, f.bins, f.stream.get());
  const int capacity = choose_bin_capacity_cuda(f.bins, f.stream.get());
  EXPECT_EQ(capacity, choose_bin_capacity(bin_occupancy(f.bin_counts())));
  EXPECT_EQ(capacity % kCapacityMultiple, 0);
}

TEST(CudaBinning, CapacityChoiceWithCrowdedBinsFallsBackToExactCounts) {
  DCSGRID_REQUIRE_GPU();
  Fixture f;
  // 3000 atoms in one bin, more than the device occupancy histogram holds, and 1000 spread.
  f.load(joined(f.in_bin(3000, 5, 6, 4, 3), f.scattered(1000, 4)));
  count_bins(f.device, f.g, f.bins, f.stream.get());
  const int capacity = choose_bin_capacity_cuda(f.bins, f.stream.get());
  EXPECT_EQ(capacity, choose_bin_capacity(bin_occupancy(f.bin_counts())));
  EXPECT_GT(capacity, 1024);
}

// Slots hold min(count, capacity) atoms of their bin first, then padding; the overflow list holds
// the rest, each kept atom exactly once in all.
void check_fixed(Fixture& f, int capacity) {
  compute_bin_keys(f.device, f.g, f.bins, f.stream.get());
  scatter_fixed(f.device, f.g, capacity, f.bins, f.stream.get());
  f.stream.synchronize();
  const std::size_t nb = f.g.bin_count();
  const auto slots = download(f.bins.slots, nb * capacity);
  const auto overflow_count = download(f.bins.overflow_count, 1)[0];
  const auto overflow = download(f.bins.overflow, overflow_count);

  std::vector<int> seen(f.atoms.size(), 0);
  std::size_t expected_overflow = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    const std::size_t expect_placed = std::min<std::size_t>(f.host_counts[b], capacity);
    expected_overflow += f.host_counts[b] - expect_placed;
    for (std::size_t s = 0; s < std::size_t(capacity); ++s) {
      const float4 v = slots[b * capacity + s];
      if (s >= expect_placed) {
        ASSERT_EQ(v.w, 0.0f) << "bin " << b << " slot " << s << " should be padding";
        ASSERT_EQ(v.x, kFarAway);
        ASSERT_EQ(v.y, kFarAway);
        ASSERT_EQ(v.z, kFarAway);
        continue;
      }
      const std::size_t atom = std::size_t(v.w) - 1;
      ASSERT_LT(atom, f.atoms.size()) << "bin " << b << " slot " << s << " holds no atom";
      EXPECT_EQ(f.host_keys[atom], b) << "atom " << atom << " placed in the wrong bin";
      EXPECT_EQ(v.x, f.atoms.x[atom] - f.g.frame_origin[0]);
      EXPECT_EQ(v.y, f.atoms.y[atom] - f.g.frame_origin[1]);
      EXPECT_EQ(v.z, f.atoms.z[atom] - f.g.frame_origin[2]);
      ++seen[atom];
    }
  }
  ASSERT_EQ(overflow_count, expected_overflow);
  std::map<std::uint32_t, std::size_t> overflow_per_bin;
  for (std::uint32_t atom : overflow) {
    ASSERT_LT(atom, f.atoms.size());
    ++seen[atom];
    ++overflow_per_bin[f.host_keys[atom]];
  }
  for (const auto& [bin, n] : overflow_per_bin)
    EXPECT_EQ(n, f.host_counts[bin] - std::size_t(capacity)) << "bin " << bin;
  for (std::size_t i = 0; i < f.atoms.size(); ++i)
    EXPECT_EQ(seen[i], f.host_keys[i] == nb ? 0 : 1) << "atom " << i;
}

TEST(CudaBinning, FixedCapacityPadsAndOverflows) {
  DCSGRID_REQUIRE_GPU();
  Fixture f;
  // About 3 atoms per bin: capacity 4 leaves empty, full and overflowing bins; one bin holds
  // exactly 4 and one 9.
  f.load(joined(joined(f.scattered(6000, 5), f.in_bin(4, 2, 2, 2, 6)), f.in_bin(9, 7, 3, 5, 7)));
  check_fixed(f, 4);
}

TEST(CudaBinning, AllAtomsInOneBinOverflow) {
  DCSGRID_REQUIRE_GPU();
  Fixture f;
  f.load(f.in_bin(500, 4, 4, 4, 8));
  check_fixed(f, 8);
  EXPECT_EQ(download(f.bins.overflow_count, 1)[0], 492u);
}

TEST(CudaBinning, NoAtomNearTheSlab) {
  DCSGRID_REQUIRE_GPU();
  Fixture f;
  Box far_box{{1000, 1000, 1000}, {1010, 1010, 1010}};
  f.load(test::random_atoms(100, far_box, 9));
  ASSERT_EQ(f.kept(), 0u);
  count_bins(f.device, f.g, f.bins, f.stream.get());
  EXPECT_EQ(choose_bin_capacity_cuda(f.bins, f.stream.get()), kCapacityMultiple);
  check_fixed(f, 8);
}

TEST(CudaBinning, DynamicBinsFollowThePrefixSum) {
  DCSGRID_REQUIRE_GPU();
  Fixture f;
  f.load(joined(f.scattered(20000, 10), f.in_bin(700, 3, 3, 3, 11)));
  count_bins(f.device, f.g, f.bins, f.stream.get());
  scatter_dynamic(f.device, f.g, f.bins, f.stream.get());
  f.stream.synchronize();
  const std::size_t nb = f.g.bin_count();
  const auto start = download(f.bins.start, nb + 1);
  std::vector<std::uint32_t> expected(nb + 1, 0);
  std::partial_sum(f.host_counts.begin(), f.host_counts.end() - 1, expected.begin() + 1);
  ASSERT_EQ(start, expected);
  ASSERT_EQ(start[nb], f.kept());

  const auto slots = download(f.bins.slots, f.kept());
  std::vector<int> seen(f.atoms.size(), 0);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::uint32_t s = start[b]; s < start[b + 1]; ++s) {
      const std::size_t atom = std::size_t(slots[s].w) - 1;
      ASSERT_LT(atom, f.atoms.size());
      EXPECT_EQ(f.host_keys[atom], b) << "atom " << atom;
      EXPECT_EQ(slots[s].x, f.atoms.x[atom] - f.g.frame_origin[0]);
      ++seen[atom];
    }
  for (std::size_t i = 0; i < f.atoms.size(); ++i)
    EXPECT_EQ(seen[i], f.host_keys[i] == nb ? 0 : 1) << "atom " << i;
}

TEST(CudaBinning, BuffersAreReusedAcrossGeometries) {
  DCSGRID_REQUIRE_GPU();
  Fixture f;
  f.load(f.scattered(5000, 12));
  count_bins(f.device, f.g, f.bins, f.stream.get());
  scatter_dynamic(f.device, f.g, f.bins, f.stream.get());
  // A thinner slab: fewer bins, the same buffers.
  f.slab = {10, 20};
  f.g = make_bin_geometry(f.grid, f.slab, 12.0);
  f.load(f.atoms);
  check_fixed(f, 4);
  // Scattering for a geometry the keys were not computed for is refused.
  const BinGeometry other = make_bin_geometry(f.grid, {0, 29}, 12.0);
  EXPECT_THROW(scatter_fixed(f.device, other, 4, f.bins, f.stream.get()), Error);
}

}  // namespace
}  // namespace dcsgrid::engine
