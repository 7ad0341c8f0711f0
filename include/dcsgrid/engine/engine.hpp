// One request, several backends (cpu, cuda), in the manner of OpenMM's platforms. The unit of work
// is a z-slab of one grid, with no global state, so threads, GPUs and ranks can share it out.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/method.hpp"
#include "dcsgrid/engine/msm_plan.hpp"
#include "dcsgrid/engine/pb.hpp"
#include "dcsgrid/engine/periodic_options.hpp"
#include "dcsgrid/engine/solver_report.hpp"

namespace dcsgrid::engine {

// Cutoff potential forms, for r < rc (zero beyond):
//   truncated: q·g(r)                                  (discontinuous at rc)
//   shifted:   q·g(r)·(1 − r²/rc²)²                    (the GPU cutoff literature's smoothing)
//   switched:  q·g(r)·S(r), S a C1 cubic switch from 1 at r_switch to 0 at rc
//   msm_short: q·(1/r − γ_k(r/rc)/rc) ("msm-short"), the short-range part of multilevel
//              summation's splitting of 1/r (core/softening.hpp); constant dielectric only
//   ewald_real: q·erfc(β·r)/r ("ewald-real"), the real-space part of the Ewald sum
//              (engine/periodic.hpp), β = ewald_beta; constant dielectric only
enum class CutoffForm { truncated, shifted, switched, msm_short, ewald_real };
std::string cutoff_form_name(CutoffForm f);
CutoffForm parse_cutoff_form(const std::string& name);

struct CutoffOptions {
  double radius = 12.0;         // Å
  CutoffForm form = CutoffForm::shifted;
  double switch_start = 10.0;   // Å, for the switched form
  int softening_order = 2;      // k of γ_k (1..kMaxSofteningOrder), for the msm_short form
  double ewald_beta = 0;        // Ewald coefficient β (Å⁻¹, > 0), for the ewald_real form
  // GPU bins: 0 = prefix-sum bins that hold every atom (the default, docs/performance.md says
  // why); N > 0 = N atoms per bin, the rest summed on the CPU while the kernel runs.
  int bin_capacity = 0;
};

struct PotentialRequest {
  const AtomSet* atoms = nullptr;
  GridSpec grid;
  Physics physics;
  Method method = Method::direct;
  CutoffOptions cutoff;  // method cutoff; msm takes its bin settings
  MsmOptions msm;
  // The lattice of a periodic method (describe(method).periodic); ignored by the others.
  std::optional<UnitCell> cell;
  PeriodicOptions periodic;
  // pb's solvent, surface, charge map, boundary and solver; its solute dielectric and temperature
  // are the physics' (pb_options).
  PbOptions pb;
  // The user accepts inf/NaN values (--allow-non-finite): charges beyond the float32 bound
  // (require_bounded_potential) are computed all the same.
  bool allow_non_finite = false;
};
// The short-range part of an msm request: the cutoff method with the msm_short form at the MSM
// cutoff and softening, the request's bin settings kept.
PotentialRequest msm_short_range(const PotentialRequest& request);

// Planes [z_begin, z_end) of the grid.
struct Slab {
  std::int64_t z_begin = 0, z_end = 0;
  std::int64_t planes() const { return z_end - z_begin; }
};

// Receives each finished slab, in z order: plane_size()*planes() floats, x fastest.
using SlabSink = std::function<void(Slab, const float*)>;
// Called after each slab with the fraction of the grid done.
using Progress = std::function<void(double fraction)>;

// The seconds of one stage of a set-up.
struct StageTime {
  std::string stage;
  double seconds = 0;
};

// One device's share of a run (GPU backends), seconds.
struct DeviceRunStats {
  std::string device;          // "GPU 0 (NVIDIA H100 80GB HBM3)"
  double setup_seconds = 0;    // context, streams, uploads, buffers
  // setup_seconds stage by stage: the device's context and buffers, and the method's own stages
  // where it reports them (msm: plan, binning, the levels, ...).
  std::vector<StageTime> setup_stages;
  double compute_seconds = 0;  // kernel time (CUDA events)
  std::int64_t slabs = 0;      // slabs it computed
};

// Timings a backend reports about its last run, seconds.
struct RunStats {
  double setup_seconds = 0;    // device start-up, uploads, binning
  double compute_seconds = 0;  // kernels / compute loops
  double overflow_seconds = 0; // CPU overflow path (cutoff on GPU)
  double sink_seconds = 0;     // time spent in the sink (writing)
  std::string device;          // what ran it, in words
  std::vector<DeviceRunStats> devices;  // per GPU (empty on the CPU)
  std::optional<SolverReport> solver;   // an iterative method's solve (pb): residuals, energies
};

// A map a GPU backend computed and left in its device's memory (Backend::run_on_device): every
// point of the grid, x fastest. batch --average adds frames into sums there, so that a frame's map
// never crosses to the host. Complete once run_on_device returns; read with its device current.
class DeviceMap {
 public:
  virtual ~DeviceMap() = default;
  virtual int device() const = 0;  // the CUDA device it is on
  virtual const float* data() const = 0;  // device memory, points() floats
  virtual std::size_t points() const = 0;
  // Copies the first out.size() values (at most points()) into host memory and waits for them.
  virtual void copy_to_host(std::span<float> out) const = 0;
};
// A caller's maps for runs on any of several devices: at most one a device, indexed by its id.
using DeviceMaps = std::vector<std::unique_ptr<DeviceMap>>;

// Page-locks a range of host memory while it lives (cudaHostRegister, in CUDA builds), so that
// DeviceMap::copy_to_host fills it at the link's speed. Where locking fails, and without CUDA, the
// memory stays as it was: copies still work, more slowly. The range must outlive it.
class PinnedHostMemory {
 public:
  PinnedHostMemory() = default;
  explicit PinnedHostMemory(std::span<float> range);
  ~PinnedHostMemory();
  PinnedHostMemory(PinnedHostMemory&& o) noexcept : pinned_(std::exchange(o.pinned_, nullptr)) {}
  PinnedHostMemory& operator=(PinnedHostMemory&& o) noexcept;
  PinnedHostMemory(const PinnedHostMemory&) = delete;
  PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;

 private:
  void* pinned_ = nullptr;
};

// A grid point whose value is not finite (the first, by index).
struct NonFiniteValue {
  std::size_t index = 0;
  float value = 0;
};

struct OnDeviceRun {
  RunStats stats;
  const DeviceMap* map = nullptr;  // the one of the caller's maps that holds the grid
  std::optional<NonFiniteValue> first_non_finite;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda"
  virtual bool supports(Method method) const = 0;
  // Does the slow one-time start-up (a GPU's context) now, so a caller can overlap it with
  // reading the input; run() does it otherwise.
  virtual void warm_up() {}
  // Computes planes [slab.z_begin, slab.z_end) into out (host memory, plane_size*planes floats).
  virtual void compute(const PotentialRequest& request, Slab slab, float* out) = 0;
  // Computes the whole grid slab by slab, handing each to sink. The default computes one slab
  // after another into a host buffer of at most slab_bytes; backends that can overlap compute
  // with the sink override it.
  virtual RunStats run(const PotentialRequest& request, const SlabSink& sink,
                       const Progress& progress = {});
  // Whether run_on_device can compute `request` while the caller holds `kept_bytes` of the
  // device's memory beside the run (its maps and sums): a GPU backend of one device, a method whose
  // slabs need no host work (no cutoff bin capacity: no atoms summed on the CPU), and kept_bytes
  // within half the device's free memory.
  virtual bool computes_on_device(const PotentialRequest& /*request*/, std::size_t /*kept_bytes*/) const {
    return false;
  }
  // Computes the whole grid into this backend's device's map of `maps` (made, or made again when
  // it holds fewer points, as needed), waits for it, and finds its first non-finite value. Only
  // where computes_on_device; throws Error otherwise.
  virtual OnDeviceRun run_on_device(const PotentialRequest& request, DeviceMaps& maps);
  // Bytes of host memory a slab buffer may use.
  std::size_t slab_bytes = std::size_t(1) << 30;
  // Keep set-up that depends on the cell and options, not the atoms (the periodic methods'
  // reciprocal part), for the next run (MethodCache): for a series of runs such as batch frames.
  // Off, nothing outlives a run, so a single map's memory is freed with it.
  bool keep_setup = false;
};

// Computes the grid slab by slab with compute(slab, out) into one host buffer of at most
// slab_bytes (at least one plane), handing each slab to sink in z order; the default Backend::run.
RunStats run_in_slabs(const GridSpec& grid, std::size_t slab_bytes,
                      const std::function<void(Slab, float*)>& compute, const SlabSink& sink,
                      const Progress& progress);

// "auto" (GPU when one is usable, else CPU with a notice), "cpu" or "gpu". gpus: device ids to
// use, empty for all. With "auto", a GPU backend that lacks one of `methods` gives way to the CPU
// (with a notice).
std::unique_ptr<Backend> make_backend(const std::string& device, const std::vector<int>& gpus = {},
                                      const std::vector<Method>& methods = {});
// Backends for `workers` requests computed at once (batch frames), each with its own buffers and
// streams: on GPUs, worker k on the (k mod n)-th of the n devices of gpus (every visible one when
// empty), so that several workers on one GPU overlap one frame's copies and host work with another's
// kernels; on the CPU, `workers` CPU backends. workers 0: per_gpu on each GPU, or one on the CPU.
// Each keeps its set-up between runs (keep_setup).
std::vector<std::unique_ptr<Backend>> make_frame_backends(const std::string& device,
                                                          const std::vector<int>& gpus,
                                                          const std::vector<Method>& methods,
                                                          std::size_t workers, std::size_t per_gpu = 1);
// The PB options a request runs with: request.pb, with the physics' dielectric as the solute's
// (pdie) and its temperature, and its ionic strength as a 1:1 salt of radius pb.ion_radius where
// pb.ions is empty.
PbOptions pb_options(const PotentialRequest& request);
// k_C in the request's output unit, the scale solve_pb takes (the dielectrics and ions are pb's).
double pb_unit_scale(const PotentialRequest& request);
// The medium a request's method computes in, for logs: the physics (dielectric, screening,
// temperature, unit), or for pb its own solute, solvent and ions.
std::string describe_medium(const PotentialRequest& request);
// The grid grown (the origin kept, the far side extended) to point counts every method with
// multigrid_dims coarsens well; unchanged when there is none.
GridSpec grid_for_methods(const GridSpec& grid, const std::vector<Method>& methods);
// True when this build has the CUDA backend and a GPU is visible.
bool gpu_available();
// Whether `device` ("auto", "cpu" or "gpu") runs on a GPU: "auto" when one is usable. Throws Error
// for "gpu" without a usable GPU (or CUDA in this build) and for an unknown name.
bool use_gpu(const std::string& device);

// Checks the request's method: its options and the physics it runs with (not atoms, grid or
// cell, so a bad option fails before any input is read). Throws Error.
void validate_method(const PotentialRequest& request);
// Throws Error, naming the method, unless the physics has a constant dielectric without
// screening: the splittings of 1/r (msm's softening, Ewald's erfc) hold for 1/r only.
void require_constant_dielectric(std::string_view method, const Physics& physics);
// The bound that keeps the float32 sums finite. Every pair term is at most scale·|q_i|·g(r_min)
// (g falls with r; the cutoff forms and MSM's short-range part are smaller), so every partial sum
// of a point's potential is at most scale·g(r_min)·Σ|q_i| ≤ scale·g(r_min)·N·max|q_i|, with
// scale = k_C·(unit factor)/ε (k_C = 332.0637 kcal·Å/(mol·e²)), g(r_min) = 1/r_min (1/r_min² with
// ε(r) = 4r) and r_min the --min-distance as the kernels hold it (float32). Throws Error, naming
// the largest charge, when that exceeds kMaxPotentialBound: FLT_MAX with a margin of 2^20 for
// MSM's interpolated long-range grids and for the sums of squares statistics take.
inline constexpr double kMaxPotentialBound = 3.4028234663852886e38 / 1048576.0;
void require_bounded_potential(const PotentialRequest& request);

// Checks a request before any work: atoms present (with radii where the method needs them), grid
// valid, a cell for a periodic method, the charges within the bound (unless allow_non_finite),
// then validate_method.
void validate(const PotentialRequest& request);

// Computes the whole grid into memory (tests, small grids).
std::vector<float> compute_grid(Backend& backend, const PotentialRequest& request);

}  // namespace dcsgrid::engine
