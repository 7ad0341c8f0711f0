// The CPU backend: dispatches a request to the direct or cutoff kernel.
#include "dcsgrid/engine/cpu_backend.hpp"

#include <omp.h>

#include <string>

namespace dcsgrid::engine {
namespace {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  bool supports(Method) const override { return true; }
  void compute(const PotentialRequest& request, Slab slab, float* out) override {
    const PairKernel kernel = make_pair_kernel(request.physics);
    if (request.method == Method::cutoff)
      cutoff_sum_cpu(*request.atoms, request.grid, kernel, request.cutoff, slab, out);
    else
      direct_sum_cpu(*request.atoms, request.grid, kernel, slab, out);
  }
  RunStats run(const PotentialRequest& request, const SlabSink& sink,
               const Progress& progress) override {
    RunStats stats = Backend::run(request, sink, progress);
    stats.device = "CPU, " + std::to_string(omp_get_max_threads()) + " threads";
    return stats;
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace dcsgrid::engine
