// The method descriptions (engine/method.hpp) and the engine rules every front end relies on: names,
// what a method needs before it runs, which backends implement it, and which atoms a part of the
// grid needs (atoms_for_slabs, what MPI ranks ask).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/engine/method_cache.hpp"
#include "dcsgrid/engine/slab_atoms.hpp"
#include "helpers.hpp"

namespace dcsgrid::engine {
namespace {

using test::error_message;

TEST(EngineMethods, EveryDescriptionIsFoundByItsIdAndName) {
  ASSERT_FALSE(methods().empty());
  for (const MethodDescription& d : methods()) {
    EXPECT_EQ(&describe(d.id), &d);
    EXPECT_EQ(parse_method(std::string(d.name)), d.id);
    EXPECT_FALSE(d.summary.empty()) << d.name;
    // An exact method is the reference of its kind; a periodic one needs a cell and never is local.
    if (d.periodic) EXPECT_FALSE(d.local) << d.name;
  }
  const std::string message = error_message([] { parse_method("pmee"); });
  for (const MethodDescription& d : methods()) EXPECT_NE(message.find(d.name), std::string::npos) << message;
}

// Random atoms with radii of 1.5 Å (a method that needs radii has them).
AtomSet atoms_with_radii(std::size_t n, const Box& box, std::uint64_t seed) {
  AtomSet atoms = test::random_atoms(n, box, seed);
  atoms.r.assign(atoms.size(), 1.5f);
  return atoms;
}

TEST(EngineMethods, MethodsThatNeedRadiiRefuseAtomsWithout) {
  const AtomSet bare = test::random_atoms(10, Box{{0, 0, 0}, {10, 10, 10}}, 3);
  for (const MethodDescription& d : methods()) {
    if (!d.needs_radii) continue;
    PotentialRequest r;
    r.atoms = &bare;
    r.grid = grid_from_origin({-2, -2, -2}, {8, 8, 8}, 2.0);
    r.method = d.id;
    EXPECT_NE(error_message([&] { validate(r); }).find("needs atomic radii"), std::string::npos) << d.name;
  }
}

TEST(EngineMethods, PeriodicMethodsWithoutACellAreRefusedSayingWhereACellComesFrom) {
  const AtomSet atoms = atoms_with_radii(10, Box{{0, 0, 0}, {10, 10, 10}}, 3);
  for (const MethodDescription& d : methods()) {
    PotentialRequest r;
    r.atoms = &atoms;
    r.grid = grid_from_origin({0, 0, 0}, {4, 4, 4}, 1.0);
    r.method = d.id;
    if (!d.periodic) {
      EXPECT_NO_THROW(validate(r)) << d.name;
      continue;
    }
    const std::string message = error_message([&] { validate(r); });
    EXPECT_NE(message.find("--cell"), std::string::npos) << message;
    EXPECT_NE(message.find("CRYST1"), std::string::npos) << message;
    r.cell = make_cell({10, 10, 10});
    EXPECT_NO_THROW(validate(r)) << d.name;
    // The splitting of 1/r holds for a constant dielectric only.
    r.physics.distance_dependent = true;
    EXPECT_THROW(validate(r), Error) << d.name;
  }
}

TEST(EngineMethods, TheCpuBackendComputesWhatItSaysItSupports) {
  const auto cpu = make_backend("cpu");
  const AtomSet atoms = atoms_with_radii(20, Box{{0, 0, 0}, {8, 8, 8}}, 5);
  int supported = 0;
  for (const MethodDescription& d : methods()) {
    PotentialRequest r;
    r.atoms = &atoms;
    r.grid = grid_from_origin({-4, -4, -4}, {9, 9, 9}, 2.0);
    r.method = d.id;
    if (d.periodic) r.cell = make_cell({20, 20, 20});
    if (cpu->supports(d.id)) {
      ++supported;
      EXPECT_EQ(compute_grid(*cpu, r).size(), r.grid.point_count()) << d.name;
    } else {
      EXPECT_NE(error_message([&] { compute_grid(*cpu, r); }).find(std::string(d.name)), std::string::npos) << d.name;
    }
  }
  EXPECT_GE(supported, 3);  // direct, cutoff and msm at least
}

// A local method's slabs computed from atoms_for_slabs' subset equal, bit for bit, the same slabs
// computed from every atom (the CPU engine's column layout kept by the anchor atoms); other methods
// get every atom.
TEST(EngineMethods, AtomsForSlabsGiveTheSlabsOfEveryAtomBitForBit) {
  const AtomSet atoms = test::random_atoms(3000, Box{{0, 0, 0}, {40, 40, 60}}, 11);
  PotentialRequest r;
  r.atoms = &atoms;
  r.grid = grid_from_origin({-2, -2, -2}, {23, 23, 33}, 2.0);
  r.method = Method::cutoff;
  r.cutoff.radius = 8;
  const auto cpu = make_backend("cpu");
  const std::vector<float> whole = compute_grid(*cpu, r);
  const std::vector<Slab> slabs{{20, 26}, {26, 33}};
  const AtomSet subset = atoms_for_slabs(r, slabs, /*gpu_bins=*/false);
  EXPECT_LT(subset.size(), atoms.size() / 2);
  PotentialRequest part = r;
  part.atoms = &subset;
  const std::size_t plane = r.grid.plane_size();
  for (const Slab s : slabs) {
    std::vector<float> out(plane * s.planes());
    cpu->compute(part, s, out.data());
    EXPECT_TRUE(std::equal(out.begin(), out.end(), whole.begin() + plane * s.z_begin))
        << "slab " << s.z_begin << ".." << s.z_end;
  }
  r.method = Method::direct;
  EXPECT_EQ(atoms_for_slabs(r, slabs, false).size(), atoms.size());
}

// The cache hands back what was kept only for the same key and type, once (a run takes it out, so
// two runs at once never share it); asking for another key frees what was kept, and keeping a new
// one frees the old.
TEST(EngineMethods, MethodCacheGivesBackWhatWasKeptForTheSameKeyOnce) {
  MethodCache cache;
  int freed = 0;
  struct Counted {
    int* freed;
    int value;
    Counted(int* f, int v) : freed(f), value(v) {}
    ~Counted() { ++*freed; }
  };
  EXPECT_EQ(cache.take<Counted>("a"), nullptr);
  cache.keep("a", std::make_unique<Counted>(&freed, 1));
  EXPECT_EQ(cache.take<int>("a"), nullptr);  // another type: the Counted stays
  std::unique_ptr<Counted> a = cache.take<Counted>("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->value, 1);
  EXPECT_EQ(cache.take<Counted>("a"), nullptr);  // taken out
  cache.keep("a", std::move(a));
  cache.keep("c", std::make_unique<Counted>(&freed, 3));
  EXPECT_EQ(freed, 1);  // "a" freed when "c" was kept
  EXPECT_EQ(cache.take<Counted>("a"), nullptr);  // not "c": "c" freed now, not held beside a new "a"
  EXPECT_EQ(freed, 2);
  cache.keep("c", std::make_unique<Counted>(&freed, 3));
  {
    const Cached<Counted> c(&cache, "c", [&] { return std::make_unique<Counted>(&freed, 9); });
    EXPECT_EQ(c->value, 3);  // the kept one, not made anew
  }
  EXPECT_EQ(freed, 2);
  EXPECT_EQ(cache.take<Counted>("c")->value, 3);  // given back when the user ended
}

}  // namespace
}  // namespace dcsgrid::engine
