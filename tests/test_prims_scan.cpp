// CPU scan against a naive sequential loop: every size class, all types, both kinds, in place.
#include <gtest/gtest.h>

#include "test_prims_scan_cases.hpp"

namespace dcsgrid::test {
namespace {

using prims::ScanKind;

template <typename T>
class CpuScan : public ::testing::Test {};
using ScanTypes = ::testing::Types<std::int32_t, std::uint32_t, float>;
TYPED_TEST_SUITE(CpuScan, ScanTypes);

TYPED_TEST(CpuScan, MatchesNaiveLoopForAllSizes) {
  for (const ScanKind kind : {ScanKind::exclusive, ScanKind::inclusive})
    for (const std::size_t n : scan_test_sizes(22)) {
      const auto in = random_scan_input<TypeParam>(n, n * 31 + 7);
      std::vector<TypeParam> out(n, TypeParam(-1));
      prims::scan_cpu(in.data(), out.data(), n, kind);
      expect_scan_matches(in, out, kind, std::string(kind_name(kind)) + " n=" + std::to_string(n));
    }
}

TYPED_TEST(CpuScan, InPlaceEqualsOutOfPlace) {
  for (const ScanKind kind : {ScanKind::exclusive, ScanKind::inclusive})
    for (const std::size_t n : {std::size_t(1), std::size_t(2047), std::size_t(2049), std::size_t(1) << 20}) {
      const auto in = random_scan_input<TypeParam>(n, n + 3);
      std::vector<TypeParam> data = in;
      prims::scan_cpu(data.data(), data.data(), n, kind);
      expect_scan_matches(in, data, kind, std::string("in place ") + kind_name(kind) + " n=" + std::to_string(n));
    }
}

TEST(CpuScan, IntegerValuedFloatsAreExact) {
  for (const ScanKind kind : {ScanKind::exclusive, ScanKind::inclusive})
    for (const std::size_t n : {std::size_t(1000), std::size_t(1) << 20, std::size_t(5000011)}) {
      const auto in = random_scan_input<float>(n, 99, /*exact_floats=*/true);
      std::vector<float> out(n);
      prims::scan_cpu(in.data(), out.data(), n, kind);
      expect_scan_matches(in, out, kind, std::string("exact ") + kind_name(kind), /*exact=*/true);
    }
}

TEST(CpuScan, UnsignedSumsWrap) {
  const std::vector<std::uint32_t> in(100000, 0x80000001u);
  std::vector<std::uint32_t> out(in.size());
  prims::scan_cpu(in.data(), out.data(), in.size(), ScanKind::inclusive);
  EXPECT_EQ(out[0], 0x80000001u);
  EXPECT_EQ(out[1], 2u);  // 2 · 0x80000001 mod 2^32
  EXPECT_EQ(out[99999], std::uint32_t(100000ull * 0x80000001ull));
}

}  // namespace
}  // namespace dcsgrid::test
