#include "dcsgrid/engine/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#ifdef DCSGRID_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include <spdlog/fmt/fmt.h>

#include <spdlog/spdlog.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/gpu_ids.hpp"
#include "dcsgrid/core/softening.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/cuda_backend.hpp"
#include "dcsgrid/engine/msm.hpp"

namespace dcsgrid::engine {

PotentialRequest msm_short_range(const PotentialRequest& request) {
  PotentialRequest s = request;
  s.method = Method::cutoff;
  s.cutoff.radius = request.msm.cutoff;
  s.cutoff.form = CutoffForm::msm_short;
  s.cutoff.softening_order = softening_order_used(request.msm);
  return s;
}

std::string cutoff_form_name(CutoffForm f) {
  switch (f) {
    case CutoffForm::truncated: return "truncated";
    case CutoffForm::shifted: return "shifted";
    case CutoffForm::switched: return "switched";
    case CutoffForm::msm_short: return "msm-short";
    case CutoffForm::ewald_real: return "ewald-real";
  }
  return "?";
}

CutoffForm parse_cutoff_form(const std::string& name) {
  for (CutoffForm f : {CutoffForm::truncated, CutoffForm::shifted, CutoffForm::switched,
                        CutoffForm::msm_short, CutoffForm::ewald_real})
    if (name == cutoff_form_name(f)) return f;
  throw Error("unknown cutoff form '" + name +
              "': use truncated, shifted, switched, msm-short or ewald-real");
}

// The MSM splitting holds for 1/r only: the long-range part it leaves has no multilevel form
// under ε(r) = 4r or Debye–Hückel screening.
static void validate_msm_short(const CutoffOptions& c, const Physics& physics) {
  if (c.softening_order < 1 || c.softening_order > kMaxSofteningOrder)
    throw Error("msm-short cutoff form: softening order " + std::to_string(c.softening_order) +
                " is out of range (1.." + std::to_string(kMaxSofteningOrder) + ")");
  if (physics.distance_dependent)
    throw Error("msm-short cutoff form: the multilevel splitting of 1/r needs a constant "
                "dielectric; it cannot be combined with --ddd (ε(r) = 4r)");
  if (physics.ionic_strength > 0)
    throw Error("msm-short cutoff form: the multilevel splitting of 1/r needs a constant "
                "dielectric; it cannot be combined with Debye–Hückel screening (--ionic-strength)");
}

void require_constant_dielectric(std::string_view method, const Physics& physics) {
  const std::string name(method);
  if (physics.distance_dependent)
    throw Error(name + ": a distance-dependent dielectric (--ddd) has no splitting of 1/r for this "
                "method; use --method direct or cutoff");
  if (physics.ionic_strength > 0)
    throw Error(name + ": Debye-Hückel screening (ionic strength " + fmt::format("{:g}", physics.ionic_strength) +
                " mol/L) has no splitting of 1/r for this method; use --method direct or cutoff");
}

void validate_method(const PotentialRequest& request) {
  const Physics& physics = request.physics;
  const CutoffOptions& c = request.cutoff;
  validate(physics);
  const MethodDescription& method = describe(request.method);
  if (method.constant_dielectric) require_constant_dielectric(method.name, physics);
  if (c.bin_capacity < 0) throw Error("--bin-capacity must be positive (0 = prefix-sum bins)");
  if (request.method == Method::msm) validate(request.msm);
  if (request.method == Method::pb) {
    if (physics.distance_dependent)
      throw Error("--method pb: the solute and solvent dielectrics replace a distance-dependent ε (--ddd)");
    validate(pb_options(request));
  }
  if (method.periodic) validate(request.periodic);
  if (request.method == Method::cutoff) {
    if (!(c.radius > 0)) throw Error("--cutoff must be a positive radius in Å");
    if (c.form == CutoffForm::switched && !(c.switch_start >= 0 && c.switch_start < c.radius))
      throw Error("--switch-start must lie between 0 and the cutoff radius");
    if (c.form == CutoffForm::msm_short) validate_msm_short(c, physics);
  }
}

// Where a method's unit cell can come from, for the message that refuses a run without one.
static constexpr const char* kWhereCellsComeFrom =
    "give --cell A,B,C[,ALPHA,BETA,GAMMA] (Å, degrees), or an input that carries one: a PDB "
    "CRYST1 record, mmCIF _cell, or a trajectory frame's box";

void require_bounded_potential(const PotentialRequest& request) {
  if (!request.atoms || request.atoms->empty()) return;
  const AtomSet& atoms = *request.atoms;
  const PairKernel kernel = make_pair_kernel(request.physics);
  const double min_r2 = double(kernel.min_r2);  // as the float32 kernels clamp
  const double g_max = kernel.form == PairForm::distance_dependent ? 1.0 / min_r2 : 1.0 / std::sqrt(min_r2);
  // Every request is checked again where it is run: a vectorised sum, on every core for millions
  // of atoms (its order is the team's, which the bound, a decision far from any rounding, ignores).
  const float* q = atoms.q.data();
  const std::ptrdiff_t n = std::ptrdiff_t(atoms.size());
  double charge_sum = 0;
#pragma omp parallel for simd num_threads(team_size()) reduction(+ : charge_sum) if (n > (std::ptrdiff_t(1) << 16))
  for (std::ptrdiff_t i = 0; i < n; ++i) charge_sum += std::abs(double(q[i]));
  const double bound = std::abs(kernel.scale_d) * g_max * charge_sum;
  if (bound <= kMaxPotentialBound) return;  // false for NaN too
  std::size_t largest = 0;
  for (std::size_t i = 0; i < atoms.size(); ++i)
    if (std::abs(atoms.q[i]) > std::abs(atoms.q[largest])) largest = i;
  throw Error(fmt::format("the charges could drive the potential to {:.3g} (Σ|q| = {:.3g} e over {} atoms, "
                          "largest {:g} e on atom {}; r_min {:g} Å), beyond what float32 maps hold "
                          "(bound {:.3g}): are the charges in e? (--allow-non-finite computes anyway)",
                          bound, charge_sum, atoms.size(), double(atoms.q[largest]), largest + 1,
                          std::sqrt(min_r2), kMaxPotentialBound));
}

void validate(const PotentialRequest& request) {
  if (!request.atoms || request.atoms->empty()) throw Error("no atoms to compute a potential from");
  validate(request.grid);
  const GridSpec& grid = request.grid;
  const Box bounds = grid.bounds();
  for (int a = 0; a < 3; ++a)
    for (const double end : {bounds.lo[a], bounds.hi[a]})
      if (!(std::abs(end) <= kMaxCoordinate))
        throw Error(fmt::format("the grid reaches {:g} Å along {}: grid points must lie within "
                                "±1e18 Å (float32 distances overflow beyond); place it nearer the "
                                "atoms (--origin, --center)",
                                end, "xyz"[a]));
  if (const std::size_t i = first_atom_out_of_range(*request.atoms); i < request.atoms->size())
    throw Error(fmt::format("atom {} lies at ({:g}, {:g}, {:g}) Å: atoms must lie within ±1e18 Å "
                            "(float32 distances overflow beyond)",
                            i + 1, request.atoms->x[i], request.atoms->y[i], request.atoms->z[i]));
  const MethodDescription& method = describe(request.method);
  if (method.periodic && !request.cell)
    throw Error("--method " + std::string(method.name) + " computes a periodic potential and needs a unit cell: " +
                kWhereCellsComeFrom);
  if (method.needs_radii && !request.atoms->has_radii())
    throw Error("--method " + std::string(method.name) +
                " needs atomic radii: give a PQR input (its radius column) or a PDB/mmCIF input (the "
                "force field's radii)");
  if (!method.periodic && !grid.orthogonal())
    throw Error("--method " + std::string(method.name) +
                " computes on grids of orthogonal axes; a unit cell's skewed lattice (--grid cell) is for "
                "the periodic methods");
  validate_method(request);
  if (!request.allow_non_finite) require_bounded_potential(request);
}

RunStats Backend::run(const PotentialRequest& request, const SlabSink& sink,
                      const Progress& progress) {
  validate(request);
  RunStats stats = run_in_slabs(
      request.grid, slab_bytes, [&](Slab slab, float* out) { compute(request, slab, out); }, sink, progress);
  stats.device = name();
  return stats;
}

OnDeviceRun Backend::run_on_device(const PotentialRequest& /*request*/, DeviceMaps& /*maps*/) {
  throw Error("the " + name() + " backend cannot keep a map on a GPU");
}

PinnedHostMemory::PinnedHostMemory(std::span<float> range) {
#ifdef DCSGRID_HAVE_CUDA
  if (range.empty() || cudaHostRegister(range.data(), range.size_bytes(), cudaHostRegisterDefault) != cudaSuccess) {
    cudaGetLastError();  // not locked: copies take the slower path
    return;
  }
  pinned_ = range.data();
#else
  (void)range;
#endif
}

PinnedHostMemory::~PinnedHostMemory() {
#ifdef DCSGRID_HAVE_CUDA
  if (pinned_) cudaHostUnregister(pinned_);
#endif
}

PinnedHostMemory& PinnedHostMemory::operator=(PinnedHostMemory&& o) noexcept {
  if (this != &o) {
    PinnedHostMemory old(std::move(*this));
    pinned_ = std::exchange(o.pinned_, nullptr);
  }
  return *this;
}

RunStats run_in_slabs(const GridSpec& grid, std::size_t slab_bytes,
                      const std::function<void(Slab, float*)>& compute, const SlabSink& sink,
                      const Progress& progress) {
  using clock = std::chrono::steady_clock;
  const std::int64_t plane_bytes = std::int64_t(grid.plane_size() * sizeof(float));
  const std::int64_t planes_per_slab =
      std::clamp<std::int64_t>(std::int64_t(slab_bytes) / plane_bytes, 1, grid.nz());
  std::vector<float> buffer(grid.plane_size() * planes_per_slab);
  RunStats stats;
  for (std::int64_t z = 0; z < grid.nz(); z += planes_per_slab) {
    const Slab slab{z, std::min(grid.nz(), z + planes_per_slab)};
    const auto t0 = clock::now();
    compute(slab, buffer.data());
    const auto t1 = clock::now();
    sink(slab, buffer.data());
    const auto t2 = clock::now();
    stats.compute_seconds += std::chrono::duration<double>(t1 - t0).count();
    stats.sink_seconds += std::chrono::duration<double>(t2 - t1).count();
    if (progress) progress(double(slab.z_end) / grid.nz());
  }
  return stats;
}

std::vector<float> compute_grid(Backend& backend, const PotentialRequest& request) {
  validate(request);
  std::vector<float> out(request.grid.point_count());
  const std::size_t plane = request.grid.plane_size();
  backend.run(request, [&](Slab slab, const float* data) {
    std::copy(data, data + plane * slab.planes(), out.begin() + plane * slab.z_begin);
  });
  return out;
}

bool gpu_available() {
#ifdef DCSGRID_HAVE_CUDA
  return cuda_device_count() > 0;
#else
  return false;
#endif
}

PbOptions pb_options(const PotentialRequest& r) {
  PbOptions o = r.pb;
  o.pdie = r.physics.dielectric;
  o.temp = r.physics.temperature;
  if (o.ions.empty() && r.physics.ionic_strength > 0)
    o.ions = {{+1.0, r.physics.ionic_strength, o.ion_radius}, {-1.0, r.physics.ionic_strength, o.ion_radius}};
  return o;
}

double pb_unit_scale(const PotentialRequest& r) {
  Physics vacuum = r.physics;
  vacuum.dielectric = 1;
  vacuum.ionic_strength = 0;
  return make_pair_kernel(vacuum).scale_d;
}

std::string describe_medium(const PotentialRequest& r) {
  return r.method == Method::pb ? describe(pb_options(r)) : describe(r.physics);
}

GridSpec grid_for_methods(const GridSpec& grid, const std::vector<Method>& methods) {
  if (std::ranges::none_of(methods, [](Method m) { return describe(m).multigrid_dims; })) return grid;
  GridSpec g = grid;
  g.dims = pb_dims(grid.dims);
  return g;
}

std::unique_ptr<Backend> make_backend(const std::string& device, const std::vector<int>& gpus,
                                      const std::vector<Method>& methods) {
  if (device == "auto" && !methods.empty()) {
    std::unique_ptr<Backend> backend = make_backend(device, gpus);
    const auto missing = std::ranges::find_if(methods, [&](Method m) { return !backend->supports(m); });
    if (backend->name() == "cpu" || missing == methods.end()) return backend;
    spdlog::info("--method {} has no GPU implementation yet: computing on the CPU", method_name(*missing));
    return make_cpu_backend();
  }
#ifdef DCSGRID_HAVE_CUDA
  if (use_gpu(device)) return make_cuda_backend(gpus);
  if (device == "auto") spdlog::info("no CUDA device found: computing on the CPU");
#else
  use_gpu(device);  // refuses "gpu" and unknown names
  if (!gpus.empty()) spdlog::warn("--gpus ignored: this build has no CUDA support");
#endif
  return make_cpu_backend();
}

std::vector<std::unique_ptr<Backend>> make_frame_backends(const std::string& device,
                                                          const std::vector<int>& gpus,
                                                          const std::vector<Method>& methods,
                                                          std::size_t workers, std::size_t per_gpu) {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(make_backend(device, gpus, methods));  // checks the ids, chooses the device
  std::vector<int> ids = gpus;
#ifdef DCSGRID_HAVE_CUDA
  if (backends.front()->name() != "cpu" && ids.empty())
    for (int d = 0; d < cuda_device_count(); ++d) ids.push_back(d);
#endif
  const bool on_gpus = backends.front()->name() != "cpu" && !ids.empty();
  if (workers == 0) workers = on_gpus ? ids.size() * std::max<std::size_t>(per_gpu, 1) : 1;
  if (on_gpus) backends.clear();
  while (backends.size() < workers)
    backends.push_back(on_gpus ? make_backend("gpu", {ids[backends.size() % ids.size()]}, methods)
                               : make_cpu_backend());
  for (auto& b : backends) b->keep_setup = true;  // frame after frame: the set-up of one cell serves the next
  return backends;
}

bool use_gpu(const std::string& device) {
  if (device == "cpu") return false;
#ifdef DCSGRID_HAVE_CUDA
  // Narrowed to --gpus, CUDA sees none when the first GPU listed does not exist.
  if (visible_gpus_narrowed() && !gpu_available())
    throw Error("--gpus: there is no GPU " + std::to_string(user_gpu_id(0)) + " on this machine");
#endif
  if (device == "auto") return gpu_available();
  if (device != "gpu") throw Error("unknown --device '" + device + "': use auto, cpu or gpu");
#ifdef DCSGRID_HAVE_CUDA
  if (!gpu_available()) throw Error("--device gpu: no usable CUDA device was found");
  return true;
#else
  throw Error("--device gpu: this build of dcsgrid has no CUDA support");
#endif
}

}  // namespace dcsgrid::engine
