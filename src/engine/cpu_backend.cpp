// Placeholder scalar version; being replaced by the vectorised engine.
#include "dcsgrid/engine/cpu_backend.hpp"

#include <cmath>

namespace dcsgrid::engine {

void direct_sum_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel, Slab slab,
                    float* out) {
  for (std::int64_t k = slab.z_begin; k < slab.z_end; ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i) {
        const auto p = grid.position(i, j, k);
        double sum = 0;
        for (std::size_t a = 0; a < atoms.size(); ++a) {
          const double dx = p[0] - atoms.x[a], dy = p[1] - atoms.y[a], dz = p[2] - atoms.z[a];
          sum += atoms.q[a] * pair_term_double(kernel, dx * dx + dy * dy + dz * dz);
        }
        out[((k - slab.z_begin) * grid.ny() + j) * grid.nx() + i] = float(kernel.scale_d * sum);
      }
}

namespace {
class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  bool supports(Method m) const override { return m == Method::direct; }
  void compute(const PotentialRequest& request, Slab slab, float* out) override {
    direct_sum_cpu(*request.atoms, request.grid, make_pair_kernel(request.physics), slab, out);
  }
};
}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace dcsgrid::engine
