#include "dcsgrid/core/atoms.hpp"

#include <algorithm>
#include <cmath>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid {
namespace {

// Below this many atoms a pass over them is shorter than waking a team of threads.
constexpr std::ptrdiff_t kParallelAtoms = std::ptrdiff_t(1) << 16;

}  // namespace

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
  const auto outside = [](float c) { return !(std::abs(double(c)) <= kMaxCoordinate); };
  // One branch-free pass on every core (millions of atoms), and the search only when it finds one.
  const std::ptrdiff_t n = std::ptrdiff_t(atoms.size());
  const float *x = atoms.x.data(), *y = atoms.y.data(), *z = atoms.z.data();
  unsigned char any = 0;
#pragma omp parallel for simd num_threads(team_size()) reduction(| : any) if (n > kParallelAtoms)
  for (std::ptrdiff_t i = 0; i < n; ++i) any |= outside(x[i]) | outside(y[i]) | outside(z[i]);
  if (!any) return atoms.size();
  for (std::size_t i = 0; i < atoms.size(); ++i)
    if (outside(atoms.x[i]) || outside(atoms.y[i]) || outside(atoms.z[i])) return i;
  return atoms.size();
}

Box bounding_box(const AtomSet& atoms) {
  if (atoms.empty()) throw Error("cannot take the bounding box of an empty atom set");
  Box box;
  const std::vector<float>* axes[3] = {&atoms.x, &atoms.y, &atoms.z};
  const std::ptrdiff_t n = std::ptrdiff_t(atoms.size());
  for (int a = 0; a < 3; ++a) {
    const float* c = axes[a]->data();
    float lo = c[0], hi = c[0];
#pragma omp parallel for simd num_threads(team_size()) reduction(min : lo) reduction(max : hi) if (n > kParallelAtoms)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      lo = std::min(lo, c[i]);
      hi = std::max(hi, c[i]);
    }
    box.lo[a] = lo;
    box.hi[a] = hi;
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
