// The CPU backend: dispatches a request to the direct or cutoff kernel, or for msm to the cutoff
// kernel's short-range form plus the long-range part (built once a run).
#include "dcsgrid/engine/cpu_backend.hpp"

#include <omp.h>

#include <chrono>
#include <memory>
#include <string>

#include "dcsgrid/engine/msm.hpp"

namespace dcsgrid::engine {
namespace {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  bool supports(Method) const override { return true; }
  void compute(const PotentialRequest& request, Slab slab, float* out) override {
    const PairKernel kernel = make_pair_kernel(request.physics);
    switch (request.method) {
      case Method::direct:
        direct_sum_cpu(*request.atoms, request.grid, kernel, slab, out);
        return;
      case Method::cutoff:
        cutoff_sum_cpu(*request.atoms, request.grid, kernel, request.cutoff, slab, out);
        return;
      case Method::msm: {
        const PotentialRequest short_range = msm_short_range(request);
        cutoff_sum_cpu(*request.atoms, request.grid, kernel, short_range.cutoff, slab, out);
        if (long_range_)
          long_range_->add_to(slab, out);
        else
          MsmLongRange(*request.atoms, request.grid, kernel.scale, request.msm).add_to(slab, out);
        return;
      }
    }
  }
  RunStats run(const PotentialRequest& request, const SlabSink& sink,
               const Progress& progress) override {
    double setup = 0;
    if (request.method == Method::msm) {  // the grids once, then every slab interpolates from them
      validate(request);
      const auto t0 = std::chrono::steady_clock::now();
      long_range_ = std::make_unique<MsmLongRange>(*request.atoms, request.grid,
                                                   make_pair_kernel(request.physics).scale, request.msm);
      setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    RunStats stats;
    try {
      stats = Backend::run(request, sink, progress);
    } catch (...) {
      long_range_.reset();
      throw;
    }
    long_range_.reset();
    stats.setup_seconds += setup;
    stats.device = "CPU, " + std::to_string(omp_get_max_threads()) + " threads";
    return stats;
  }

 private:
  std::unique_ptr<MsmLongRange> long_range_;  // during an msm run
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace dcsgrid::engine
