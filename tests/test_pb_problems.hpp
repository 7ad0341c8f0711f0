// Problems for the PB multigrid's tests, shared by the CPU's (test_engine_pb.cpp) and the
// device's (test_engine_pb_multigrid_cuda.cu).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <cstdint>
#include <random>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/engine/pb_multigrid.hpp"

namespace dcsgrid::test {

// A sphere of pdie (radius 3 Å, off centre) in sdie and random smooth c ≥ 0: the solver must
// reproduce a random interior u* (and its boundary) from f = A u*.
inline engine::PbOperator jump_operator(const std::array<std::int64_t, 3>& dims, double h) {
  engine::PbOperator op;
  op.dims = dims;
  op.spacing = {h, h, 0.8 * h};
  const std::size_t size = std::size_t(dims[0]) * dims[1] * dims[2];
  op.eps_x.resize(size);
  op.eps_y.resize(size);
  op.eps_z.resize(size);
  op.c.resize(size);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  for (std::int64_t k = 0; k < dims[2]; ++k)
    for (std::int64_t j = 0; j < dims[1]; ++j)
      for (std::int64_t i = 0; i < dims[0]; ++i) {
        const std::size_t p = (std::size_t(k) * dims[1] + j) * dims[0] + i;
        const double x = (i - 0.4 * dims[0]) * h, y = (j - 0.5 * dims[1]) * h, z = (k - 0.5 * dims[2]) * 0.8 * h;
        const bool inside = x * x + y * y + z * z < 9.0;
        op.eps_x[p] = inside ? 2.0 : 78.54;
        op.eps_y[p] = inside ? 2.0 : 78.54 * (0.9 + 0.2 * unit(rng));
        op.eps_z[p] = inside ? 2.0 : 78.54;
        op.c[p] = inside ? 0.0 : 0.1 * unit(rng);
      }
  return op;
}

// x y z charge radius from a PQR's ATOM/HETATM records (the last five fields), read here so that
// the test holds whatever the structure readers do with radii.
inline AtomSet read_pqr_with_radii(const std::filesystem::path& path) {
  std::ifstream in(path);
  AtomSet atoms;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ATOM", 0) != 0 && line.rfind("HETATM", 0) != 0) continue;
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    const std::size_t n = f.size();
    atoms.push_back(std::stod(f[n - 5]), std::stod(f[n - 4]), std::stod(f[n - 3]), std::stod(f[n - 2]),
                    std::stod(f[n - 1]));
  }
  return atoms;
}

// u*'s values on the grid's outer faces, zero inside: the initial guess that holds the boundary.
inline std::vector<double> boundary_of(const std::vector<double>& exact, const std::array<std::int64_t, 3>& n) {
  std::vector<double> u(exact.size(), 0.0);
  for (std::int64_t k = 0; k < n[2]; ++k)
    for (std::int64_t j = 0; j < n[1]; ++j)
      for (std::int64_t i = 0; i < n[0]; ++i)
        if (i == 0 || j == 0 || k == 0 || i == n[0] - 1 || j == n[1] - 1 || k == n[2] - 1) {
          const std::size_t p = (std::size_t(k) * n[1] + j) * n[0] + i;
          u[p] = exact[p];
        }
  return u;
}

// A random u* on jump_operator's grid and f = A u* (the residual of u* against f = 0 is −A u*).
struct LinearProblem {
  engine::PbOperator op;
  std::vector<double> exact, f;
};
inline LinearProblem manufactured_problem(const std::array<std::int64_t, 3>& dims) {
  LinearProblem p;
  p.op = jump_operator(dims, 0.5);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(-1, 1);
  p.exact.resize(p.op.c.size());
  for (double& v : p.exact) v = unit(rng);
  std::vector<double> r;
  p.f.assign(p.exact.size(), 0.0);
  engine::pb_residual(p.op, p.f, p.exact, r);
  for (std::size_t n = 0; n < p.f.size(); ++n) p.f[n] = -r[n];
  return p;
}

// A 2:1 salt's ion term and a random u* of a few kT/e, with f = A_ε u* + c·g(u*) built here in
// float64: Newton's method must return u*.
struct NewtonProblem {
  engine::PbOperator op;
  engine::IonTerm ions;
  std::vector<double> exact, f;
};
inline NewtonProblem newton_problem(const std::array<std::int64_t, 3>& dims) {
  NewtonProblem p;
  p.op = jump_operator(dims, 0.5);
  p.ions.valence = {2, -1};
  const double c2 = 0.1, c1 = 0.2, sum = c2 * 4 + c1 * 1;
  p.ions.weight = {c2 * 2 / sum, c1 * -1 / sum};
  p.ions.to_kt = 0.5;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(-4, 4);
  p.exact.resize(p.op.c.size());
  for (double& v : p.exact) v = unit(rng);
  engine::PbOperator laplacian = p.op;
  std::fill(laplacian.c.begin(), laplacian.c.end(), 0.0);
  std::vector<double> r;
  p.f.assign(p.exact.size(), 0.0);
  engine::pb_residual(laplacian, p.f, p.exact, r);
  for (std::size_t n = 0; n < p.f.size(); ++n) {
    double g = 0;
    for (std::size_t s = 0; s < 2; ++s)
      g -= p.ions.weight[s] * std::exp(-p.ions.valence[s] * p.ions.to_kt * p.exact[n]);
    p.f[n] = -r[n] + p.op.c[n] * g / p.ions.to_kt;
  }
  return p;
}

// ‖a − ref‖₂ / ‖ref‖₂.
template <typename A, typename B>
double relative_l2(const std::vector<A>& a, const std::vector<B>& ref) {
  double err = 0, norm = 0;
  for (std::size_t n = 0; n < a.size(); ++n) {
    err += (double(a[n]) - double(ref[n])) * (double(a[n]) - double(ref[n]));
    norm += double(ref[n]) * double(ref[n]);
  }
  return std::sqrt(err / norm);
}

}  // namespace dcsgrid::test
