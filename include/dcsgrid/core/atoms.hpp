// AtomSet: atoms as a structure of arrays, the form every engine reads.
#pragma once
#include <array>
#include <cstddef>
#include <vector>

namespace dcsgrid {

// Positions in Å and charges in e, float32 as the kernels use them; sums over them are
// taken in double (total_charge). Radii (Å) are optional: r is empty where the input gave none
// (a method that needs them refuses such a set), else it has one per atom.
struct AtomSet {
  std::vector<float> x, y, z, q;
  std::vector<float> r;

  std::size_t size() const { return q.size(); }
  bool empty() const { return q.empty(); }
  bool has_radii() const { return !r.empty() && r.size() == q.size(); }
  // The per-atom arrays, r included when with_radii: for code that moves whole atoms.
  std::vector<std::vector<float>*> columns(bool with_radii);
  std::vector<const std::vector<float>*> columns(bool with_radii) const;
  void reserve(std::size_t n);
  void push_back(double px, double py, double pz, double charge);
  void push_back(double px, double py, double pz, double charge, double radius);
  double total_charge() const;
};

// Axis-aligned box, Å.
struct Box {
  std::array<double, 3> lo{}, hi{};
  std::array<double, 3> center() const;
  std::array<double, 3> extent() const;
};

// The smallest box holding every atom. Throws Error on an empty set.
Box bounding_box(const AtomSet& atoms);
// The smallest box holding both.
Box union_box(const Box& a, const Box& b);

// Atoms and grid points lie within ±kMaxCoordinate Å: beyond it the float32 squared distance
// between two of them could overflow (FLT_MAX = (1.8e19)²) and the kernels return NaN.
inline constexpr double kMaxCoordinate = 1e18;
// The index of the first atom with a coordinate beyond ±kMaxCoordinate, or size() when none.
std::size_t first_atom_out_of_range(const AtomSet& atoms);

}  // namespace dcsgrid
