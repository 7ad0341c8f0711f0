// AtomSet: atoms as a structure of arrays, the form every engine reads.
#pragma once
#include <array>
#include <cstddef>
#include <vector>

namespace dcsgrid {

// Positions in Å and charges in e, float32 as the kernels use them; sums over them are
// taken in double (total_charge).
struct AtomSet {
  std::vector<float> x, y, z, q;

  std::size_t size() const { return q.size(); }
  bool empty() const { return q.empty(); }
  void reserve(std::size_t n);
  void push_back(double px, double py, double pz, double charge);
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

}  // namespace dcsgrid
