// The CPU backend: one implementation class per method (CpuMethod), prepared once a run and then
// asked for slabs, in the manner of OpenMM's kernel factory; kCpuMethods is the factory.
#include "dcsgrid/engine/cpu_backend.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <type_traits>

#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/method_cache.hpp"
#include "dcsgrid/engine/msm.hpp"
#include "dcsgrid/engine/periodic.hpp"

namespace dcsgrid::engine {
namespace {

// One method prepared for one request: the constructor does the run's set-up (msm's long-range
// grids, a whole-grid method's solve), compute() one slab.
class CpuMethod {
 public:
  virtual ~CpuMethod() = default;
  virtual void compute(Slab slab, float* out) = 0;
  // What an iterative method tells about its solve, for RunStats.
  virtual std::optional<SolverReport> solver_report() const { return {}; }
};

class DirectCpu final : public CpuMethod {
 public:
  explicit DirectCpu(const PotentialRequest& r) : request_(r), kernel_(make_pair_kernel(r.physics)) {}
  void compute(Slab slab, float* out) override {
    direct_sum_cpu(*request_.atoms, request_.grid, kernel_, slab, out);
  }

 private:
  const PotentialRequest& request_;
  PairKernel kernel_;
};

class CutoffCpu final : public CpuMethod {
 public:
  explicit CutoffCpu(const PotentialRequest& r) : request_(r), kernel_(make_pair_kernel(r.physics)) {}
  void compute(Slab slab, float* out) override {
    cutoff_sum_cpu(*request_.atoms, request_.grid, kernel_, request_.cutoff, slab, out);
  }

 private:
  const PotentialRequest& request_;
  PairKernel kernel_;
};

// The short-range part through the cutoff engine plus the long-range grids, built once a run.
class MsmCpu final : public CpuMethod {
 public:
  explicit MsmCpu(const PotentialRequest& r)
      : short_range_(msm_short_range(r)), kernel_(make_pair_kernel(r.physics)),
        long_range_(*r.atoms, r.grid, kernel_.scale, r.msm) {}
  void compute(Slab slab, float* out) override {
    cutoff_sum_cpu(*short_range_.atoms, short_range_.grid, kernel_, short_range_.cutoff, slab, out);
    long_range_.add_to(slab, out);
  }

 private:
  PotentialRequest short_range_;
  PairKernel kernel_;
  MsmLongRange long_range_;
};

// The periodic methods: the real-space part through the cutoff engine over the atoms' images near
// the grid (the ewald_real form), plus the reciprocal part R (EwaldReciprocal or PmeReciprocal),
// both prepared once a run; R's plan is taken from the backend's cache (when it keeps set-up) if
// the last run had the same cell and parameters. The smooth map (--smooth) is the reciprocal part alone.
template <typename R>
class PeriodicCpu final : public CpuMethod {
 public:
  PeriodicCpu(const PotentialRequest& r, MethodCache* cache)
      : grid_(r.grid), kernel_(make_pair_kernel(r.physics)), split_(periodic_split<R>(*r.cell, r.periodic)),
        reciprocal_(cache, reciprocal_key(*r.cell, split_, kernel_.scale_d), [&] {
          return std::make_unique<R>(*r.cell, split_.parameters, kernel_.scale_d, split_.background);
        }) {
    reciprocal_->set_atoms(*r.atoms);
    if (split_.real_cutoff > 0)
      images_ = periodic_images(*r.atoms, *r.cell, grid_box(grid_), split_.real_cutoff);
  }
  void compute(Slab slab, float* out) override {
    if (split_.real_cutoff > 0)
      cutoff_sum_cpu(images_, grid_, kernel_, ewald_real_space(split_.beta, split_.real_cutoff), slab, out);
    else
      std::fill(out, out + grid_.plane_size() * slab.planes(), 0.0f);
    reciprocal_->add_to(grid_, slab, out);
  }

 private:
  GridSpec grid_;
  PairKernel kernel_;
  PeriodicSplit<R> split_;
  Cached<R> reciprocal_;
  AtomSet images_;
};

// Poisson–Boltzmann, a whole-grid method: the constructor solves the whole grid (solve_pb checks
// the memory it needs first), compute() hands out planes of the solution.
class PbCpu final : public CpuMethod {
 public:
  explicit PbCpu(const PotentialRequest& r)
      : plane_(r.grid.plane_size()), temperature_(r.physics.temperature),
        result_(solve_pb(*r.atoms, r.grid, pb_options(r), pb_unit_scale(r))) {}
  void compute(Slab slab, float* out) override {
    const double* from = result_.potential.data() + plane_ * std::size_t(slab.z_begin);
    std::transform(from, from + plane_ * std::size_t(slab.planes()), out, [](double v) { return float(v); });
  }
  std::optional<SolverReport> solver_report() const override {
    return engine::solver_report(result_, temperature_);
  }

 private:
  std::size_t plane_;
  double temperature_;
  PbResult result_;
};

// Methods whose set-up outlives a run take the backend's cache.
template <typename M>
std::unique_ptr<CpuMethod> make(const PotentialRequest& request, MethodCache* cache) {
  if constexpr (std::is_constructible_v<M, const PotentialRequest&, MethodCache*>)
    return std::make_unique<M>(request, cache);
  else
    return std::make_unique<M>(request);
}

using CpuMethodFactory = std::unique_ptr<CpuMethod> (*)(const PotentialRequest&, MethodCache*);
// Indexed by Method; nullptr where the CPU backend has no implementation.
constexpr std::array<CpuMethodFactory, 6> kCpuMethods{
    make<DirectCpu>,  // direct
    make<CutoffCpu>,  // cutoff
    make<MsmCpu>,     // msm
    make<PeriodicCpu<EwaldReciprocal>>,  // ewald
    make<PeriodicCpu<PmeReciprocal>>,    // pme
    make<PbCpu>,                         // pb
};

CpuMethodFactory factory(Method m) {
  const auto i = std::size_t(m);
  return i < kCpuMethods.size() ? kCpuMethods[i] : nullptr;
}

std::unique_ptr<CpuMethod> make_cpu_method(const PotentialRequest& request, MethodCache* cache) {
  validate(request);
  const CpuMethodFactory f = factory(request.method);
  if (!f) throw Error("the cpu backend cannot compute the '" + method_name(request.method) + "' method");
  return f(request, cache);
}

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  bool supports(Method m) const override { return factory(m) != nullptr; }
  void compute(const PotentialRequest& request, Slab slab, float* out) override {
    make_cpu_method(request, cache())->compute(slab, out);
  }
  RunStats run(const PotentialRequest& request, const SlabSink& sink,
               const Progress& progress) override {
    const auto t0 = clock_type::now();
    const std::unique_ptr<CpuMethod> method = make_cpu_method(request, cache());
    const double setup = seconds_since(t0);
    RunStats stats = run_in_slabs(
        request.grid, slab_bytes, [&](Slab slab, float* out) { method->compute(slab, out); }, sink, progress);
    stats.setup_seconds += setup;
    stats.device = "CPU, " + std::to_string(team_size()) + " threads";
    stats.solver = method->solver_report();
    return stats;
  }

 private:
  MethodCache* cache() { return keep_setup ? &cache_ : nullptr; }
  MethodCache cache_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace dcsgrid::engine
