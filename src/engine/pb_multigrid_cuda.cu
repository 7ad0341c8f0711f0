#include "dcsgrid/engine/pb_multigrid_cuda.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "pb_stencil.hpp"

namespace dcsgrid::engine {
namespace {

using cuda::DeviceBuffer;
using pb_stencil::Coefficients;
using pb_stencil::Dims;
using pb_stencil::point_count;

constexpr int kMaxIonSpecies = 16;
// A coarsest level of at most this many points is solved by one block (its sweeps separated by
// barriers, not launches); larger ones (grids that do not coarsen) sweep by launches.
constexpr std::size_t kSingleBlockPoints = std::size_t(1) << 15;
constexpr int kDotBlocks = 512, kDotThreads = 256;
const dim3 kBlock3(32, 8, 1);

dim3 launch_grid(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  return dim3(unsigned((nx + kBlock3.x - 1) / kBlock3.x), unsigned((ny + kBlock3.y - 1) / kBlock3.y), unsigned(nz));
}
dim3 points_grid(const Dims& n) { return launch_grid(n[0], n[1], n[2]); }
unsigned linear_blocks(std::size_t count) { return unsigned(std::min<std::size_t>((count + 255) / 256, 65535)); }

__device__ bool thread_point(const Dims& n, std::int64_t& i, std::int64_t& j, std::int64_t& k) {
  i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  j = std::int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  k = blockIdx.z;
  return i < n[0] && j < n[1] && k < n[2];
}

__global__ void scale_faces_kernel(double* cx, double* cy, double* cz, std::size_t count, double wx, double wy,
                                   double wz) {
  for (std::size_t p = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; p < count; p += std::size_t(gridDim.x) * blockDim.x) {
    cx[p] *= wx;
    cy[p] *= wy;
    cz[p] *= wz;
  }
}

__global__ void inverse_diagonal_kernel(Coefficients L, double* inv_diag) {
  std::int64_t i, j, k;
  if (!thread_point(L.n, i, j, k)) return;
  const std::size_t p = pb_stencil::at(L.n, i, j, k);
  inv_diag[p] = pb_stencil::interior(L.n, i, j, k) ? 1.0 / pb_stencil::diagonal(L, p) : 0.0;
}

// out = f − A u (f given) or A u on the interior, 0 on the faces.
__global__ void operator_kernel(Coefficients L, const double* f, const double* u, double* out) {
  std::int64_t i, j, k;
  if (!thread_point(L.n, i, j, k)) return;
  const std::size_t p = pb_stencil::at(L.n, i, j, k);
  if (!pb_stencil::interior(L.n, i, j, k)) {
    out[p] = 0.0;
    return;
  }
  const double au = pb_stencil::apply(L, u, p);
  out[p] = f ? f[p] - au : au;
}

// One Gauss–Seidel sweep over the interior points of one colour: thread t takes the t-th point of
// that colour along its row.
__global__ void smooth_kernel(Coefficients L, const double* f, double* u, int colour) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t j = 1 + std::int64_t(blockIdx.y) * blockDim.y + threadIdx.y, k = 1 + blockIdx.z;
  const std::int64_t i = 1 + ((1 + j + k + colour) & 1) + 2 * t;
  if (i >= L.n[0] - 1 || j >= L.n[1] - 1) return;
  const std::size_t p = pb_stencil::at(L.n, i, j, k);
  u[p] = pb_stencil::relaxed(L, f, u, p);
}

// The coarsest level's solve in one block: `pairs` symmetric red–black sweep pairs (0, 1, 1, 0).
__global__ void coarsest_kernel(Coefficients L, const double* f, double* u, std::int64_t pairs) {
  const std::int64_t mx = L.n[0] - 2, my = L.n[1] - 2, count = mx * my * (L.n[2] - 2);
  for (std::int64_t s = 0; s < 4 * pairs; ++s) {
    const int colour = (s % 4 == 0 || s % 4 == 3) ? 0 : 1;
    for (std::int64_t m = threadIdx.x; m < count; m += blockDim.x) {
      const std::int64_t i = 1 + m % mx, j = 1 + (m / mx) % my, k = 1 + m / (mx * my);
      if (pb_stencil::colour_of(i, j, k) == colour) {
        const std::size_t p = pb_stencil::at(L.n, i, j, k);
        u[p] = pb_stencil::relaxed(L, f, u, p);
      }
    }
    __syncthreads();
  }
}

__global__ void coarsen_kernel(Coefficients fine, Dims n, double* cx, double* cy, double* cz, double* c0) {
  std::int64_t I, J, K;
  if (!thread_point(n, I, J, K)) return;
  const std::size_t p = pb_stencil::at(n, I, J, K);
  cx[p] = I < n[0] - 1 ? pb_stencil::coarse_face(fine.cx, fine.n, 0, I, J, K) : 0.0;
  cy[p] = J < n[1] - 1 ? pb_stencil::coarse_face(fine.cy, fine.n, 1, I, J, K) : 0.0;
  cz[p] = K < n[2] - 1 ? pb_stencil::coarse_face(fine.cz, fine.n, 2, I, J, K) : 0.0;
  c0[p] = pb_stencil::full_weighting(fine.c0, fine.n, I, J, K);
}

// The coarse right-hand side on the coarse interior (its faces stay 0).
__global__ void restrict_kernel(const double* r, Dims nf, double* fc, Dims nc) {
  std::int64_t I, J, K;
  if (!thread_point(nc, I, J, K) || !pb_stencil::interior(nc, I, J, K)) return;
  fc[pb_stencil::at(nc, I, J, K)] = pb_stencil::full_weighting(r, nf, I, J, K);
}

__global__ void prolong_add_kernel(const double* e, Dims nc, double* u, Dims nf) {
  std::int64_t i, j, k;
  if (!thread_point(nf, i, j, k) || !pb_stencil::interior(nf, i, j, k)) return;
  u[pb_stencil::at(nf, i, j, k)] += pb_stencil::prolonged(e, nc, i, j, k);
}

__global__ void zero_interior_kernel(double* u, Dims n) {
  std::int64_t i, j, k;
  if (thread_point(n, i, j, k) && pb_stencil::interior(n, i, j, k)) u[pb_stencil::at(n, i, j, k)] = 0.0;
}

// u += α p, r −= α q.
__global__ void cg_step_kernel(double* u, double* r, const double* p, const double* q, double alpha, std::size_t count) {
  for (std::size_t n = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; n < count; n += std::size_t(gridDim.x) * blockDim.x) {
    u[n] += alpha * p[n];
    r[n] -= alpha * q[n];
  }
}

// y = x + β y.
__global__ void xpay_kernel(const double* x, double beta, double* y, std::size_t count) {
  for (std::size_t n = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; n < count; n += std::size_t(gridDim.x) * blockDim.x)
    y[n] = x[n] + beta * y[n];
}

// out = x + λ y.
__global__ void axpy_into_kernel(const double* x, double lambda, const double* y, double* out, std::size_t count) {
  for (std::size_t n = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; n < count; n += std::size_t(gridDim.x) * blockDim.x)
    out[n] = x[n] + lambda * y[n];
}

// Each block's partial sum of a·b in a fixed order, then one block sums the partials: the dot
// product is the same from run to run.
__global__ void dot_partials_kernel(const double* a, const double* b, std::size_t count, double* partials) {
  __shared__ double sums[kDotThreads];
  double sum = 0;
  for (std::size_t n = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; n < count; n += std::size_t(gridDim.x) * blockDim.x)
    sum += a[n] * b[n];
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kDotThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = sums[0];
}

__global__ void dot_total_kernel(double* partials) {
  __shared__ double sums[kDotBlocks];
  sums[threadIdx.x] = partials[threadIdx.x];
  __syncthreads();
  for (int half = kDotBlocks / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[0] = sums[0];
}

struct IonArgs {
  double valence[kMaxIonSpecies]{}, weight[kMaxIonSpecies]{};
  int species = 0;
  double to_kt = 1;
};

// F = f − A_ε u − c·g(u) on the interior (L's diagonal term 0), 0 on the faces.
__global__ void newton_residual_kernel(Coefficients L, const double* c, IonArgs ions, const double* f,
                                       const double* u, double* F) {
  std::int64_t i, j, k;
  if (!thread_point(L.n, i, j, k)) return;
  const std::size_t p = pb_stencil::at(L.n, i, j, k);
  if (!pb_stencil::interior(L.n, i, j, k)) {
    F[p] = 0.0;
    return;
  }
  double value = f[p] - pb_stencil::apply(L, u, p);
  if (c[p] != 0)
    value -= c[p] * pb_stencil::ion_g(ions.valence, ions.weight, ions.species, ions.to_kt, u[p]) / ions.to_kt;
  F[p] = value;
}

// The Jacobian's diagonal term c·g'(u).
__global__ void jacobian_kernel(const double* c, IonArgs ions, const double* u, double* c0, std::size_t count) {
  for (std::size_t p = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; p < count; p += std::size_t(gridDim.x) * blockDim.x)
    c0[p] = c[p] != 0 ? c[p] * pb_stencil::ion_dg(ions.valence, ions.weight, ions.species, ions.to_kt, u[p]) : 0.0;
}

// One level's coefficients (the finest level's are the operator's arrays) and work vectors.
struct DeviceLevel {
  Dims n{};
  double *cx = nullptr, *cy = nullptr, *cz = nullptr, *c0 = nullptr;
  DeviceBuffer<double> own_cx, own_cy, own_cz, own_c0, inv_diag, u, f, r;
  Coefficients view() const { return {n, cx, cy, cz, c0, inv_diag.data()}; }
  std::size_t size() const { return point_count(n); }
};

class CudaGraph {
 public:
  CudaGraph() = default;
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  ~CudaGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  // Records what enqueue puts on stream, once.
  template <typename F>
  void capture(cudaStream_t stream, F&& enqueue) {
    DCSGRID_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaGraph_t discarded = nullptr;
      cudaStreamEndCapture(stream, &discarded);
      if (discarded) cudaGraphDestroy(discarded);
      throw;
    }
    DCSGRID_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
    DCSGRID_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  void launch(cudaStream_t stream) const { DCSGRID_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// The hierarchy, the CG's vectors, and the kernels' launches on one stream.
class DeviceSolver {
 public:
  DeviceSolver(const DevicePbOperator& op, int sweeps, cudaStream_t stream)
      : sweeps_(sweeps), stream_(stream), size_(point_count(op.dims)), z_(size_), q_(size_), p_(size_),
        partials_(kDotBlocks), dot_host_(1) {
    DeviceLevel finest;
    finest.n = op.dims;
    finest.cx = op.eps_x;
    finest.cy = op.eps_y;
    finest.cz = op.eps_z;
    finest.c0 = op.c;
    finest.inv_diag.resize(size_);
    finest.r.resize(size_);
    levels_.push_back(std::move(finest));
    const double wx = 1 / (op.spacing[0] * op.spacing[0]), wy = 1 / (op.spacing[1] * op.spacing[1]),
                 wz = 1 / (op.spacing[2] * op.spacing[2]);
    scale_faces_kernel<<<linear_blocks(size_), 256, 0, stream_>>>(op.eps_x, op.eps_y, op.eps_z, size_, wx, wy, wz);
    DCSGRID_CHECK_LAUNCH();
    while (pb_stencil::can_coarsen(levels_.back().n)) levels_.push_back(coarse_level(pb_stencil::coarse_dims(levels_.back().n)));
    rebuild();
    v_cycle_graph_.capture(stream_, [&] {
      DCSGRID_CUDA_CHECK(cudaMemsetAsync(z_.data(), 0, size_ * sizeof(double), stream_));
      v_cycle(0, levels_[0].r.data(), z_.data(), q_.data());
    });
  }

  int level_count() const { return int(levels_.size()); }
  std::size_t size() const { return size_; }
  DeviceLevel& finest() { return levels_[0]; }

  // The inverse diagonals and every coarse level from the finest level's coefficients.
  void rebuild() {
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      DeviceLevel& L = levels_[l];
      if (l > 0) {
        coarsen_kernel<<<points_grid(L.n), kBlock3, 0, stream_>>>(levels_[l - 1].view(), L.n, L.cx, L.cy, L.cz, L.c0);
        DCSGRID_CHECK_LAUNCH();
      }
      inverse_diagonal_kernel<<<points_grid(L.n), kBlock3, 0, stream_>>>(L.view(), L.inv_diag.data());
      DCSGRID_CHECK_LAUNCH();
    }
  }

  // out = f − A u (f given) or A u, on the finest level.
  void apply(const double* f, const double* u, double* out) {
    operator_kernel<<<points_grid(levels_[0].n), kBlock3, 0, stream_>>>(levels_[0].view(), f, u, out);
    DCSGRID_CHECK_LAUNCH();
  }

  double dot(const double* a, const double* b) {
    dot_partials_kernel<<<kDotBlocks, kDotThreads, 0, stream_>>>(a, b, size_, partials_.data());
    DCSGRID_CHECK_LAUNCH();
    dot_total_kernel<<<1, kDotBlocks, 0, stream_>>>(partials_.data());
    DCSGRID_CHECK_LAUNCH();
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(dot_host_.data(), partials_.data(), sizeof(double), cudaMemcpyDeviceToHost, stream_));
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return dot_host_.data()[0];
  }

  // ‖f − A u_b‖, u_b u's boundary with a zero interior: the scale of every relative residual.
  double rhs_norm(const double* f, const double* u) {
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(q_.data(), u, size_ * sizeof(double), cudaMemcpyDeviceToDevice, stream_));
    zero_interior_kernel<<<points_grid(levels_[0].n), kBlock3, 0, stream_>>>(q_.data(), levels_[0].n);
    DCSGRID_CHECK_LAUNCH();
    apply(f, q_.data(), levels_[0].r.data());
    return std::sqrt(dot(levels_[0].r.data(), levels_[0].r.data()));
  }

  // CG preconditioned by one V-cycle a step on u and its residual r (the finest level's r), as
  // pb_multigrid.cpp's preconditioned_cg.
  int preconditioned_cg(double* u, double stop, int max_steps, double norm_f, std::vector<double>* history) {
    double* r = levels_[0].r.data();
    v_cycle_graph_.launch(stream_);
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(p_.data(), z_.data(), size_ * sizeof(double), cudaMemcpyDeviceToDevice, stream_));
    double rz = dot(r, z_.data());
    for (int it = 1; it <= max_steps; ++it) {
      apply(nullptr, p_.data(), q_.data());
      const double alpha = rz / dot(p_.data(), q_.data());
      cg_step_kernel<<<linear_blocks(size_), 256, 0, stream_>>>(u, r, p_.data(), q_.data(), alpha, size_);
      DCSGRID_CHECK_LAUNCH();
      const double norm_r = std::sqrt(dot(r, r));
      if (history) history->push_back(norm_r / norm_f);
      if (norm_r <= stop || it == max_steps) return it;
      v_cycle_graph_.launch(stream_);
      const double rz_next = dot(r, z_.data());
      const double beta = rz_next / rz;
      rz = rz_next;
      xpay_kernel<<<linear_blocks(size_), 256, 0, stream_>>>(z_.data(), beta, p_.data(), size_);
      DCSGRID_CHECK_LAUNCH();
    }
    return max_steps;
  }

 private:
  DeviceLevel coarse_level(const Dims& n) {
    DeviceLevel L;
    L.n = n;
    const std::size_t size = point_count(n);
    for (DeviceBuffer<double>* b : {&L.own_cx, &L.own_cy, &L.own_cz, &L.own_c0, &L.inv_diag, &L.u, &L.f, &L.r}) {
      b->resize(size);
      DCSGRID_CUDA_CHECK(cudaMemsetAsync(b->data(), 0, size * sizeof(double), stream_));
    }
    L.cx = L.own_cx.data();
    L.cy = L.own_cy.data();
    L.cz = L.own_cz.data();
    L.c0 = L.own_c0.data();
    return L;
  }

  void smooth(const DeviceLevel& L, const double* f, double* u, int colour) {
    const dim3 grid = launch_grid((L.n[0] - 1) / 2, L.n[1] - 2, L.n[2] - 2);
    smooth_kernel<<<grid, kBlock3, 0, stream_>>>(L.view(), f, u, colour);
    DCSGRID_CHECK_LAUNCH();
  }

  void solve_coarsest(const DeviceLevel& L, const double* f, double* u) {
    const std::int64_t pairs = pb_stencil::coarsest_sweep_pairs(L.n);
    if (L.size() <= kSingleBlockPoints) {
      coarsest_kernel<<<1, 512, 0, stream_>>>(L.view(), f, u, pairs);
      DCSGRID_CHECK_LAUNCH();
      return;
    }
    for (std::int64_t s = 0; s < pairs; ++s)
      for (int colour : {0, 1, 1, 0}) smooth(L, f, u, colour);
  }

  // One symmetric V-cycle from level l: u (zero on entry) approximates A⁻¹ f; r is work space.
  void v_cycle(std::size_t l, const double* f, double* u, double* r) {
    const DeviceLevel& L = levels_[l];
    if (l + 1 == levels_.size()) return solve_coarsest(L, f, u);
    for (int s = 0; s < sweeps_; ++s) {
      smooth(L, f, u, 0);
      smooth(L, f, u, 1);
    }
    operator_kernel<<<points_grid(L.n), kBlock3, 0, stream_>>>(L.view(), f, u, r);
    DCSGRID_CHECK_LAUNCH();
    DeviceLevel& C = levels_[l + 1];
    restrict_kernel<<<points_grid(C.n), kBlock3, 0, stream_>>>(r, L.n, C.f.data(), C.n);
    DCSGRID_CHECK_LAUNCH();
    DCSGRID_CUDA_CHECK(cudaMemsetAsync(C.u.data(), 0, C.size() * sizeof(double), stream_));
    v_cycle(l + 1, C.f.data(), C.u.data(), C.r.data());
    prolong_add_kernel<<<points_grid(L.n), kBlock3, 0, stream_>>>(C.u.data(), C.n, u, L.n);
    DCSGRID_CHECK_LAUNCH();
    for (int s = 0; s < sweeps_; ++s) {
      smooth(L, f, u, 1);
      smooth(L, f, u, 0);
    }
  }

  int sweeps_;
  cudaStream_t stream_;
  std::size_t size_;
  std::vector<DeviceLevel> levels_;
  DeviceBuffer<double> z_, q_, p_, partials_;
  cuda::PinnedBuffer<double> dot_host_;
  CudaGraph v_cycle_graph_;
};

IonArgs ion_args(const IonTerm& ions) {
  if (ions.valence.size() > std::size_t(kMaxIonSpecies) || ions.valence.size() != ions.weight.size())
    throw Error("pb (cuda): at most " + std::to_string(kMaxIonSpecies) + " ion species");
  IonArgs a;
  a.species = int(ions.valence.size());
  a.to_kt = ions.to_kt;
  std::copy(ions.valence.begin(), ions.valence.end(), a.valence);
  std::copy(ions.weight.begin(), ions.weight.end(), a.weight);
  return a;
}

MultigridReport solve_linear(DeviceSolver& s, const double* f, double* u, const MultigridOptions& options) {
  MultigridReport report;
  report.levels = s.level_count();
  const double norm_f = s.rhs_norm(f, u);
  double* r = s.finest().r.data();
  s.apply(f, u, r);
  const double norm_r = std::sqrt(s.dot(r, r));
  report.residual_history.push_back(norm_f > 0 ? norm_r / norm_f : 0.0);
  if (norm_f == 0 || norm_r <= options.tolerance * norm_f) {
    report.converged = true;
    return report;
  }
  report.iterations = s.preconditioned_cg(u, options.tolerance * norm_f, options.max_iterations, norm_f,
                                          &report.residual_history);
  report.converged = report.residual_history.back() <= options.tolerance;
  return report;
}

// Newton's method as pb_multigrid.cpp's solve_newton; c is the ions' coefficient (the operator's
// diagonal term before the solve), the finest level's diagonal term is 0 outside the inner solves.
class NewtonSolve {
 public:
  NewtonSolve(DeviceSolver& s, const DevicePbOperator& op, const IonTerm& ions, cudaStream_t stream)
      : s_(s), ions_(ion_args(ions)), stream_(stream), n_(op.dims), size_(s.size()), c_(size_), F_(size_),
        delta_(size_), trial_(size_), F_trial_(size_) {
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(c_.data(), op.c, bytes(), cudaMemcpyDeviceToDevice, stream_));
    zero_diagonal_term();
  }

  MultigridReport run(const double* f, double* u, const MultigridOptions& options) {
    MultigridReport report;
    report.levels = s_.level_count();
    const double norm_f = s_.rhs_norm(f, u);
    double* current = u;
    double norm_F = residual(f, current, F_.data());
    report.residual_history.push_back(norm_f > 0 ? norm_F / norm_f : 0.0);
    for (int step = 1; norm_f > 0 && norm_F > options.tolerance * norm_f && step <= options.max_iterations; ++step) {
      set_jacobian(current);
      DCSGRID_CUDA_CHECK(cudaMemsetAsync(delta_.data(), 0, bytes(), stream_));
      DCSGRID_CUDA_CHECK(cudaMemcpyAsync(s_.finest().r.data(), F_.data(), bytes(), cudaMemcpyDeviceToDevice, stream_));
      const double stop = std::max(0.1 * norm_F, 0.5 * options.tolerance * norm_f);
      s_.preconditioned_cg(delta_.data(), stop, options.max_iterations, norm_f, nullptr);
      zero_diagonal_term();
      double lambda = 1.0, norm_trial = 0;
      for (int halving = 0; halving < 20; ++halving, lambda *= 0.5) {
        axpy_into_kernel<<<linear_blocks(size_), 256, 0, stream_>>>(current, lambda, delta_.data(), trial_.data(), size_);
        DCSGRID_CHECK_LAUNCH();
        norm_trial = residual(f, trial_.data(), F_trial_.data());
        if (norm_trial < norm_F) break;
      }
      if (!(norm_trial < norm_F)) break;  // no descent: reported as not converged
      DCSGRID_CUDA_CHECK(cudaMemcpyAsync(current, trial_.data(), bytes(), cudaMemcpyDeviceToDevice, stream_));
      std::swap(F_, F_trial_);
      norm_F = norm_trial;
      report.iterations = step;
      report.residual_history.push_back(norm_F / norm_f);
    }
    report.converged = norm_f == 0 || norm_F <= options.tolerance * norm_f;
    return report;
  }

 private:
  std::size_t bytes() const { return size_ * sizeof(double); }
  void zero_diagonal_term() {
    DCSGRID_CUDA_CHECK(cudaMemsetAsync(s_.finest().c0, 0, bytes(), stream_));
  }
  double residual(const double* f, const double* u, double* F) {
    newton_residual_kernel<<<points_grid(n_), kBlock3, 0, stream_>>>(s_.finest().view(), c_.data(), ions_, f, u, F);
    DCSGRID_CHECK_LAUNCH();
    return std::sqrt(s_.dot(F, F));
  }
  void set_jacobian(const double* u) {
    jacobian_kernel<<<linear_blocks(size_), 256, 0, stream_>>>(c_.data(), ions_, u, s_.finest().c0, size_);
    DCSGRID_CHECK_LAUNCH();
    s_.rebuild();
  }

  DeviceSolver& s_;
  IonArgs ions_;
  cudaStream_t stream_;
  Dims n_;
  std::size_t size_;
  DeviceBuffer<double> c_, F_, delta_, trial_, F_trial_;
};

}  // namespace

std::size_t multigrid_cuda_bytes(const std::array<std::int64_t, 3>& dims, bool newton) {
  std::size_t coarse = 0;
  for (Dims n = dims; pb_stencil::can_coarsen(n);) {
    n = pb_stencil::coarse_dims(n);
    coarse += point_count(n);
  }
  const std::size_t fine = point_count(dims);
  return sizeof(double) * ((5 + (newton ? 5 : 0)) * fine + 8 * coarse) + sizeof(double) * kDotBlocks;
}

MultigridReport solve_multigrid_cuda(const DevicePbOperator& op, const double* f, double* u, const IonTerm* ions,
                                     const MultigridOptions& options, cudaStream_t stream) {
  if (op.dims[0] < 3 || op.dims[1] < 3 || op.dims[2] < 3)
    throw Error("multigrid: the grid needs at least 3 points along each axis");
  DeviceSolver solver(op, options.smoothing_sweeps, stream);
  if (!ions) return solve_linear(solver, f, u, options);
  NewtonSolve newton(solver, op, *ions, stream);
  return newton.run(f, u, options);
}

}  // namespace dcsgrid::engine
