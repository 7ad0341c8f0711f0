// Multilevel summation's long-range part on the CPU: float64 level grids, OpenMP threads over
// planes (or rows), so no two threads write one grid point.
#include "dcsgrid/engine/msm.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>

#include <spdlog/spdlog.h>

#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/prims/fft.hpp"

namespace dcsgrid::engine {
namespace {

using Dims = std::array<std::int64_t, 3>;

// out = the 1-D operator applied along axis of in (dims), the other axes kept.
std::vector<double> apply_along_axis(const std::vector<double>& in, Dims& dims, int axis,
                                     const MsmTransfer1D& op) {
  const std::int64_t inner = axis == 0 ? 1 : (axis == 1 ? dims[0] : dims[0] * dims[1]);
  const std::int64_t outer = axis == 2 ? 1 : (axis == 1 ? dims[2] : dims[1] * dims[2]);
  const std::int64_t n_in = dims[axis], n_out = std::int64_t(op.first.size());
  std::vector<double> out(std::size_t(outer * n_out * inner), 0.0);
#pragma omp parallel for num_threads(team_size()) collapse(2) schedule(static)
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t r = 0; r < n_out; ++r) {
      double* dst = &out[(o * n_out + r) * inner];
      for (int c = 0; c < op.count[r]; ++c) {
        const double w = op.weight[r * op.width + c];
        const double* src = &in[(o * n_in + op.first[r] + c) * inner];
        for (std::int64_t t = 0; t < inner; ++t) dst[t] += w * src[t];
      }
    }
  dims[axis] = n_out;
  return out;
}

// Output points summed together in registers: four vectors of four doubles, so four independent
// chains of adds hide the FMA latency.
using v4d = double __attribute__((vector_size(32)));
constexpr int kVectors = 4, kBlock = 4 * kVectors;

v4d load4(const double* p) {
  v4d v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

// Level l < top: e = (g_0 · 2^−l) ∗ q. The rows of q are copied with R zeros before and R + kBlock
// after them, so no x range needs clipping; each output row is summed kBlock points at a time,
// the block's sums held in registers over the whole stencil (one load of q per FMA, no stores):
// 0.41 s of CPU time against 0.62 s for adding each stencil row into the output row (one
// thread, level 0 of a 10^5-atom water box, h 1.5 Å).
std::vector<double> stencil_potential(const MsmPlan& plan, int level, const std::vector<double>& q) {
  const Dims n = plan.levels[level].n;
  const std::int64_t r = plan.stencil_radius, padded = n[0] + 2 * r + kBlock;
  std::vector<double> q_padded(std::size_t(padded * n[1] * n[2]), 0.0);
  for (std::int64_t row = 0; row < n[1] * n[2]; ++row)
    std::copy_n(&q[row * n[0]], n[0], &q_padded[row * padded + r]);
  const double level_scale = 1.0 / double(std::int64_t(1) << level);
  const std::vector<MsmStencilRow> rows = msm_stencil_rows(plan);
  std::vector<double> e(q.size());
#pragma omp parallel for num_threads(team_size()) collapse(2) schedule(dynamic, 4)
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y)
      for (std::int64_t x0 = 0; x0 < n[0]; x0 += kBlock) {
        v4d acc[kVectors] = {};
        for (const MsmStencilRow& row : rows) {
          const std::int64_t sz = z + row.dz, sy = y + row.dy;
          if (sz < 0 || sz >= n[2] || sy < 0 || sy >= n[1]) continue;
          const double* src = &q_padded[(sz * n[1] + sy) * padded + r + x0];
          const double* w = &plan.stencil[row.centre];
          for (int dx = row.x_lo; dx <= row.x_hi; ++dx) {
            const v4d wv = v4d{} + w[dx];
            for (int v = 0; v < kVectors; ++v) acc[v] += wv * load4(src + dx + 4 * v);
          }
        }
        for (std::int64_t l = 0; l < kBlock && x0 + l < n[0]; ++l)
          e[(z * n[1] + y) * n[0] + x0 + l] = acc[l / 4][l % 4] * level_scale;
      }
  return e;
}

// The top level: every pair of points (the charged ones as sources).
std::vector<double> top_potential(const MsmPlan& plan, const std::vector<double>& q) {
  const Dims n = plan.levels.back().n;
  struct Source {
    std::int64_t x, y, z;
    double q;
  };
  std::vector<Source> sources;
  for (std::int64_t z = 0, j = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y)
      for (std::int64_t x = 0; x < n[0]; ++x, ++j)
        if (q[j] != 0.0) sources.push_back({x, y, z, q[j]});
  std::vector<double> e(q.size(), 0.0);
#pragma omp parallel for num_threads(team_size()) collapse(2) schedule(static)
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y)
      for (std::int64_t x = 0; x < n[0]; ++x) {
        double sum = 0;
        for (const Source& s : sources)
          sum += s.q * plan.top_kernel[(std::abs(z - s.z) * n[1] + std::abs(y - s.y)) * n[0] + std::abs(x - s.x)];
        e[(z * n[1] + y) * n[0] + x] = sum;
      }
  return e;
}

// e = K ∗ q on a level of n points, not periodic: K(d) = kernel(|dx|, |dy|, |dz|) for |d_a| ≤ reach_a
// and zero beyond. The level is padded along each axis to an FFT size of at least n + reach, so
// the circular convolution of the real FFTs wraps no sum onto a point of the level; the same sums
// as the dense loops, in another order (rounding differs at about 10^-16 of the largest terms).
template <typename Kernel>
std::vector<double> fft_convolve(const std::vector<double>& q, const Dims& n, const Dims& reach, Kernel kernel) {
  std::array<std::size_t, 3> size{};
  for (int a = 0; a < 3; ++a) size[a] = prims::fft_good_size(std::size_t(n[a] + reach[a]));
  const prims::FftPlan3d fft(size);
  const std::int64_t sx = std::int64_t(size[0]), sy = std::int64_t(size[1]), sz = std::int64_t(size[2]);
  std::vector<double> padded(fft.points(), 0.0);
  std::vector<std::complex<double>> kernel_spectrum(fft.half_spectrum_size()), spectrum(fft.half_spectrum_size());
  // The kernel at offset d sits at d mod size.
#pragma omp parallel for num_threads(team_size()) collapse(2) schedule(static)
  for (std::int64_t dz = -reach[2]; dz <= reach[2]; ++dz)
    for (std::int64_t dy = -reach[1]; dy <= reach[1]; ++dy) {
      double* row = &padded[(((dz + sz) % sz) * sy + (dy + sy) % sy) * sx];
      for (std::int64_t dx = -reach[0]; dx <= reach[0]; ++dx)
        row[(dx + sx) % sx] = kernel(std::abs(dx), std::abs(dy), std::abs(dz));
    }
  fft.forward_real(padded.data(), kernel_spectrum.data());
  std::fill(padded.begin(), padded.end(), 0.0);
#pragma omp parallel for num_threads(team_size()) collapse(2) schedule(static)
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y) std::copy_n(&q[(z * n[1] + y) * n[0]], n[0], &padded[(z * sy + y) * sx]);
  fft.forward_real(padded.data(), spectrum.data());
  const double norm = 1.0 / double(fft.points());  // the inverse is not normalised
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::size_t i = 0; i < spectrum.size(); ++i) spectrum[i] *= kernel_spectrum[i] * norm;
  fft.inverse_real(spectrum.data(), padded.data());
  std::vector<double> e(q.size());
#pragma omp parallel for num_threads(team_size()) collapse(2) schedule(static)
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y) std::copy_n(&padded[(z * sy + y) * sx], n[0], &e[(z * n[1] + y) * n[0]]);
  return e;
}

// Work estimates, in units of one multiply-add of the dense stencil loop, for choosing the dense
// sums or the FFTs: three real transforms of the padded level at about kFftWork·log2(size) a
// point (one thread, achbp's level 0 at h 1.5 Å: 0.25 ns a dense multiply-add, 1.1 ns a point and
// log2 of the FFTs).
constexpr double kFftWork = 5;

// Each point sums the stencil's points, or at the top every charged point.
double dense_work(const MsmPlan& plan, int level, const std::vector<double>& charge) {
  const double sources = level == plan.top()
                             ? double(std::count_if(charge.begin(), charge.end(), [](double v) { return v != 0.0; }))
                             : double(msm_stencil_points(plan));
  return double(plan.levels[level].points()) * sources;
}

double fft_work(const Dims& n, const Dims& reach) {
  double points = 1;
  for (int a = 0; a < 3; ++a) points *= double(prims::fft_good_size(std::size_t(n[a] + reach[a])));
  return 3 * kFftWork * points * std::log2(points);
}

// Level-0 nodes of an atom along axis: the first one (relative to lo) and the weights.
std::int64_t atom_nodes(const MsmPlan& plan, int axis, double x, double* w) {
  double s = 0;
  const std::int64_t first = msm_first_node(plan, axis, x, s);
  plan.basis.weights(s, w);
  return first;
}

}  // namespace

// Atoms are bucketed by chunks of p node planes along z (the first plane they reach); an atom of
// chunk c writes planes [c·p, c·p + 2p − 1), so chunks of one parity never share a plane and run
// side by side, each atom visited once.
std::vector<double> msm_anterpolate(const MsmPlan& plan, const AtomSet& atoms) {
  const int p = plan.options.order;
  const MsmLevelShape& shape = plan.levels[0];
  std::vector<double> q(shape.points(), 0.0);
  const std::int64_t chunks = shape.n[2] / p + 1;
  std::vector<std::size_t> start(chunks + 1, 0), order(atoms.size());
  std::vector<std::int64_t> chunk_of(atoms.size());
  for (std::size_t a = 0; a < atoms.size(); ++a) {
    double w[kMsmMaxOrder];
    chunk_of[a] = atom_nodes(plan, 2, atoms.z[a], w) / p;
    ++start[chunk_of[a] + 1];
  }
  for (std::int64_t c = 0; c < chunks; ++c) start[c + 1] += start[c];
  std::vector<std::size_t> fill(start.begin(), start.end() - 1);
  for (std::size_t a = 0; a < atoms.size(); ++a) order[fill[chunk_of[a]]++] = a;

  for (int parity = 0; parity < 2; ++parity) {
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
    for (std::int64_t c = parity; c < chunks; c += 2)
      for (std::size_t k = start[c]; k < start[c + 1]; ++k) {
        const std::size_t a = order[k];
        double wx[kMsmMaxOrder], wy[kMsmMaxOrder], wz[kMsmMaxOrder];
        const std::int64_t fx = atom_nodes(plan, 0, atoms.x[a], wx);
        const std::int64_t fy = atom_nodes(plan, 1, atoms.y[a], wy);
        const std::int64_t fz = atom_nodes(plan, 2, atoms.z[a], wz);
        for (int cz = 0; cz < p; ++cz)
          for (int cy = 0; cy < p; ++cy) {
            const double qzy = atoms.q[a] * wz[cz] * wy[cy];
            double* row = &q[((fz + cz) * shape.n[1] + fy + cy) * shape.n[0] + fx];
            for (int cx = 0; cx < p; ++cx) row[cx] += qzy * wx[cx];
          }
      }
  }
  return q;
}

std::vector<double> msm_restrict(const MsmPlan& plan, int level, const std::vector<double>& fine) {
  Dims dims = plan.levels[level].n;
  std::vector<double> v = apply_along_axis(fine, dims, 0, msm_restriction_1d(plan, level, 0));
  v = apply_along_axis(v, dims, 1, msm_restriction_1d(plan, level, 1));
  return apply_along_axis(v, dims, 2, msm_restriction_1d(plan, level, 2));
}

void msm_prolongate_add(const MsmPlan& plan, int level, const std::vector<double>& coarse,
                        std::vector<double>& fine) {
  Dims dims = plan.levels[level + 1].n;
  std::vector<double> v = apply_along_axis(coarse, dims, 0, msm_prolongation_1d(plan, level, 0));
  v = apply_along_axis(v, dims, 1, msm_prolongation_1d(plan, level, 1));
  v = apply_along_axis(v, dims, 2, msm_prolongation_1d(plan, level, 2));
  for (std::size_t i = 0; i < fine.size(); ++i) fine[i] += v[i];
}

std::vector<double> msm_level_potential(const MsmPlan& plan, int level, const std::vector<double>& charge,
                                        MsmConvolution how) {
  const Dims n = plan.levels[level].n;
  const bool top = level == plan.top();
  // The top level reaches across itself; a lower level as far as its stencil (no farther than itself).
  Dims reach{};
  for (int a = 0; a < 3; ++a) reach[a] = top ? n[a] - 1 : std::min<std::int64_t>(plan.stencil_radius, n[a] - 1);
  if (how == MsmConvolution::automatic)
    how = dense_work(plan, level, charge) > fft_work(n, reach) ? MsmConvolution::fft : MsmConvolution::dense;
  if (how == MsmConvolution::dense) return top ? top_potential(plan, charge) : stencil_potential(plan, level, charge);
  if (top)
    return fft_convolve(charge, n, reach, [&](std::int64_t dx, std::int64_t dy, std::int64_t dz) {
      return plan.top_kernel[(dz * n[1] + dy) * n[0] + dx];
    });
  const std::int64_t r = plan.stencil_radius, w = 2 * r + 1;
  const double level_scale = 1.0 / double(std::int64_t(1) << level);
  return fft_convolve(charge, n, reach, [&](std::int64_t dx, std::int64_t dy, std::int64_t dz) {
    return plan.stencil[((dz + r) * w + dy + r) * w + dx + r] * level_scale;
  });
}

bool has_multilevel_form(const Physics& physics) {
  return !physics.distance_dependent && !(physics.ionic_strength > 0);
}

MsmLongRange::MsmLongRange(const AtomSet& atoms, const GridSpec& output, float scale,
                           const MsmOptions& options, MsmConvolution how)
    : output_(output), scale_(scale) {
  // Each stage's seconds, added to times_ as it ends.
  auto t = clock_type::now();
  const auto lap = [&t](double& seconds) {
    seconds += seconds_since(t);
    t = clock_type::now();
  };
  plan_ = make_msm_plan(atoms, output, options);
  // Beyond the plan's four doubles a level-0 point: the FFT convolution's padded level and two
  // half spectra, about four more.
  require_host_memory(grid_from_origin(plan_.origin, plan_.levels[0].n, options.spacing), 16);
  lap(times_.plan);
  std::vector<std::vector<double>> charge{msm_anterpolate(plan_, atoms)};
  lap(times_.anterpolation);
  for (int l = 0; l < plan_.top(); ++l) charge.push_back(msm_restrict(plan_, l, charge[l]));
  lap(times_.restriction);
  std::vector<double> e = msm_level_potential(plan_, plan_.top(), charge.back(), how);
  lap(times_.top);
  for (int l = plan_.top() - 1; l >= 0; --l) {
    std::vector<double> finer = msm_level_potential(plan_, l, charge[l], how);
    lap(times_.stencils);
    msm_prolongate_add(plan_, l, e, finer);
    lap(times_.prolongation);
    e = std::move(finer);
    charge.pop_back();
  }
  potential_ = std::move(e);
  for (int axis = 0; axis < 3; ++axis) weights_[axis] = msm_output_weights(plan_, output_, axis);
  lap(times_.weights);
  spdlog::debug("msm set-up {:.3f} s: plan {:.3f}, anterpolation {:.3f}, restriction {:.3f}, stencils {:.3f}, "
                "top level {:.3f}, prolongation {:.3f}, output weights {:.3f} ({} levels, level 0 {}x{}x{})",
                times_.total(), times_.plan, times_.anterpolation, times_.restriction, times_.stencils, times_.top,
                times_.prolongation, times_.weights, plan_.levels.size(), plan_.levels[0].n[0],
                plan_.levels[0].n[1], plan_.levels[0].n[2]);
}

// Factored interpolation, per output plane: the p level-0 planes folded with the z weights into
// one plane (only the footprint of the output grid), then its rows with the y weights, then the
// points with the x weights.
void MsmLongRange::add_to(Slab slab, float* out) const {
  if (slab.z_begin < 0 || slab.z_end > output_.nz() || slab.z_begin > slab.z_end)
    throw Error("msm: slab [" + std::to_string(slab.z_begin) + ", " + std::to_string(slab.z_end) +
                ") outside the grid of " + std::to_string(output_.nz()) + " planes");
  const int p = plan_.options.order;
  const Dims n = plan_.levels[0].n, out_n = output_.dims;
  const MsmAxisWeights &wx = weights_[0], &wy = weights_[1], &wz = weights_[2];
  const std::int64_t x0 = wx.first.front(), nx = wx.first.back() + p - x0;
  const std::int64_t y0 = wy.first.front(), ny = wy.first.back() + p - y0;
#pragma omp parallel num_threads(team_size())
  {
    std::vector<double> plane(std::size_t(nx * ny)), row(static_cast<std::size_t>(nx));
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t k = slab.z_begin; k < slab.z_end; ++k) {
      std::fill(plane.begin(), plane.end(), 0.0);
      for (int c = 0; c < p; ++c) {
        const double w = wz.weight[k * p + c];
        for (std::int64_t y = 0; y < ny; ++y) {
          const double* src = &potential_[((wz.first[k] + c) * n[1] + y0 + y) * n[0] + x0];
          double* dst = &plane[y * nx];
          for (std::int64_t x = 0; x < nx; ++x) dst[x] += w * src[x];
        }
      }
      for (std::int64_t j = 0; j < out_n[1]; ++j) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int c = 0; c < p; ++c) {
          const double w = wy.weight[j * p + c];
          const double* src = &plane[(wy.first[j] + c - y0) * nx];
          for (std::int64_t x = 0; x < nx; ++x) row[x] += w * src[x];
        }
        float* dst = out + ((k - slab.z_begin) * out_n[1] + j) * out_n[0];
        for (std::int64_t i = 0; i < out_n[0]; ++i) {
          double v = 0;
          for (int c = 0; c < p; ++c) v += wx.weight[i * p + c] * row[wx.first[i] + c - x0];
          dst[i] += float(scale_ * v);
        }
      }
    }
  }
}

}  // namespace dcsgrid::engine
