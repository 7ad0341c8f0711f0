#include "dcsgrid/core/atoms.hpp"

#include <algorithm>
#include <cmath>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid {

std::vector<std::vector<float>*> AtomSet::columns(bool with_radii) {
  std::vector<std::vector<float>*> c{&x, &y, &z, &q};
  if (with_radii) c.push_back(&r);
  return c;
}

std::vector<const std::vector<float>*> AtomSet::columns(bool with_radii) const {
  std::vector<const std::vector<float>*> c{&x, &y, &z, &q};
  if (with_radii) c.push_back(&r);
  return c;
}

void AtomSet::reserve(std::size_t n) {
  for (std::vector<float>* c : columns(!r.empty())) c->reserve(n);
}

void AtomSet::push_back(double px, double py, double pz, double charge) {
  x.push_back(float(px));
  y.push_back(float(py));
  z.push_back(float(pz));
  q.push_back(float(charge));
}

void AtomSet::push_back(double px, double py, double pz, double charge, double radius) {
  push_back(px, py, pz, charge);
  r.push_back(float(radius));
}

double AtomSet::total_charge() const {
  double sum = 0;
  for (float c : q) sum += c;
  return sum;
}

std::array<double, 3> Box::center() const {
  return {(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2};
}

std::array<double, 3> Box::extent() const {
  return {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
}

std::size_t first_atom_out_of_range(const AtomSet& atoms) {
  for (std::size_t i = 0; i < atoms.size(); ++i)
    for (const float c : {atoms.x[i], atoms.y[i], atoms.z[i]})
      if (!(std::abs(double(c)) <= kMaxCoordinate)) return i;
  return atoms.size();
}

Box bounding_box(const AtomSet& atoms) {
  if (atoms.empty()) throw Error("cannot take the bounding box of an empty atom set");
  Box box;
  const std::vector<float>* axes[3] = {&atoms.x, &atoms.y, &atoms.z};
  for (int a = 0; a < 3; ++a) {
    auto [mn, mx] = std::minmax_element(axes[a]->begin(), axes[a]->end());
    box.lo[a] = *mn;
    box.hi[a] = *mx;
  }
  return box;
}

Box union_box(const Box& a, const Box& b) {
  Box u;
  for (int i = 0; i < 3; ++i) {
    u.lo[i] = std::min(a.lo[i], b.lo[i]);
    u.hi[i] = std::max(a.hi[i], b.hi[i]);
  }
  return u;
}

}  // namespace dcsgrid
