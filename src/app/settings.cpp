#include "dcsgrid/app/settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/gpu_ids.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/core/text.hpp"
#include "dcsgrid/engine/metadata.hpp"

namespace dcsgrid::app {

GridSpec GridChoice::resolve(const Box& atoms_box) const {
  return box ? *box : grid_around(atoms_box, spacing, padding);
}

GridSpec GridChoice::resolve(const UnitCell& cell) const {
  if (box) return *box;
  return on_cell ? grid_on_cell(cell, spacing) : grid_over_cell(cell, spacing);
}

void validate(const GridChoice& grid, const std::vector<engine::Method>& methods) {
  if (!grid.on_cell) return;
  if (!is_periodic(methods))
    throw Error("--grid cell lays the map on a unit cell's own lattice: it needs a periodic method "
                "(--method ewald or pme), not --method " + method_list_name(methods));
  if (grid.box) throw Error("--grid cell lays its own grid: give it without --center/--size or --origin/--dims");
}

std::vector<engine::Method> parse_method_list(const std::string& text) {
  if (text == "both") return {engine::Method::direct, engine::Method::cutoff};
  std::vector<engine::Method> methods;
  for (const std::string& item : split_list(text)) {
    const engine::Method m = engine::parse_method(item);
    if (std::ranges::find(methods, m) != methods.end())
      throw Error("--method " + text + " names " + item + " twice");
    methods.push_back(m);
  }
  return methods;
}

void set_methods(ComputeSettings& s, const std::string& text) {
  s.auto_method = text == "auto";
  s.methods = s.auto_method ? std::vector{engine::Method::direct} : parse_method_list(text);
}

std::string method_list_name(const std::vector<engine::Method>& methods) {
  std::string out;
  for (const auto m : methods) out += (out.empty() ? "" : ",") + engine::method_name(m);
  return out;
}

std::vector<int> parse_gpu_list(const std::string& text) {
  std::vector<int> ids;
  if (text == "all") return ids;
  for (const std::string& item : split_list(text)) {
    try {
      std::size_t used = 0;
      const int id = std::stoi(item, &used);
      if (used != item.size() || id < 0) throw std::invalid_argument(item);
      ids.push_back(id);
    } catch (const std::exception&) {
      throw Error("--gpus: '" + text + "' is not 'all' or a list of device numbers like 0,1");
    }
  }
  require_valid_gpu_ids(ids);
  return ids;
}

void require_support(const engine::Backend& backend, engine::Method method) {
  if (!backend.supports(method))
    throw Error("the " + backend.name() + " backend does not support --method " + engine::method_name(method));
}

void validate(const ComputeSettings& s) {
  if (s.methods.empty()) throw Error("no method to compute");
  // Periodic and non-periodic maps are different potentials: comparing them measures nothing.
  const bool periodic = engine::describe(s.methods.front()).periodic;
  for (const auto m : s.methods)
    if (engine::describe(m).periodic != periodic)
      throw Error("--method " + method_list_name(s.methods) + " mixes periodic (ewald, pme) and non-periodic "
                  "methods, whose maps are different potentials: list methods of one kind");
  const AtomSet none;
  for (const auto m : s.methods) engine::validate_method(make_request(s, m, none, GridSpec{}));
  if (s.auto_method) engine::validate(s.msm);
  if (s.threads < 0) throw Error("--threads must be 0 (all cores) or a positive count");
  if (s.pb.solvation && std::ranges::find(s.methods, engine::Method::pb) == s.methods.end())
    throw Error("--solvation is the Poisson–Boltzmann solvation energy: it needs pb in the method list "
                "(--method pb), not --method " + method_list_name(s.methods));
}

engine::PotentialRequest make_request(const ComputeSettings& s, engine::Method method,
                                      const AtomSet& atoms, const GridSpec& grid) {
  engine::PotentialRequest request;
  request.atoms = &atoms;
  request.grid = grid;
  request.physics = s.physics;
  request.method = method;
  request.cutoff = s.cutoff;
  request.msm = s.msm;
  request.cell = s.cell;
  request.periodic = s.periodic;
  request.pb = s.pb;
  request.allow_non_finite = s.allow_non_finite;
  return request;
}

Error non_finite_error(const std::string& what, const GridSpec& grid, const engine::NonFiniteValue& bad) {
  const std::size_t nx = std::size_t(grid.nx()), ny = std::size_t(grid.ny());
  return Error(fmt::format("{}: the value at grid point (x {}, y {}, z {}) is {}: the map is not finite, so it "
                           "is not written (--allow-non-finite keeps such maps)",
                           what, bad.index % nx, bad.index / nx % ny, bad.index / (nx * ny), bad.value));
}

namespace {

// Whether any of the values is not finite (all exponent bits set: infinity or NaN), in one
// branch-free pass: vectorised, and on every core for a slab of millions of points, where a
// search for the first one ran at a fraction of the memory's bandwidth on the sink's thread.
bool any_non_finite_in(const float* data, std::ptrdiff_t n) {
  constexpr std::uint32_t kExponent = 0x7f800000u;
  std::uint32_t found = 0;
#pragma omp simd reduction(| : found)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, data + i, sizeof bits);
    found |= std::uint32_t((bits & kExponent) == kExponent);
  }
  return found != 0;
}

bool any_non_finite(const float* data, std::size_t count) {
  constexpr std::ptrdiff_t kBlock = std::ptrdiff_t(1) << 18;
  const std::ptrdiff_t n = std::ptrdiff_t(count), blocks = (n + kBlock - 1) / kBlock;
  bool found = false;
#pragma omp parallel for num_threads(team_size()) reduction(|| : found) if (blocks > 4)
  for (std::ptrdiff_t b = 0; b < blocks; ++b)
    found = found || any_non_finite_in(data + b * kBlock, std::min(kBlock, n - b * kBlock));
  return found;
}

}  // namespace

engine::SlabSink finite_slabs(bool allow, const GridSpec& grid, const std::string& what,
                              engine::SlabSink sink, std::size_t* non_finite) {
  return [grid, what, sink = std::move(sink), non_finite, allow](
             engine::Slab slab, const float* data) {
    const std::size_t count = grid.plane_size() * std::size_t(slab.planes());
    if (any_non_finite(data, count)) {
      const float* bad = std::find_if(data, data + count, [](float v) { return !std::isfinite(v); });
      if (!allow)
        throw non_finite_error(what, grid, {grid.plane_size() * std::size_t(slab.z_begin) + std::size_t(bad - data), *bad});
      if (non_finite)
        *non_finite += std::size_t(std::count_if(bad, data + count, [](float v) { return !std::isfinite(v); }));
    }
    sink(slab, data);
  };
}

io::MapMetadata map_metadata(const ComputeSettings& s, engine::Method method) {
  const AtomSet none;
  return engine::method_metadata(make_request(s, method, none, GridSpec{}));
}

bool is_periodic(const std::vector<engine::Method>& methods) {
  return std::ranges::any_of(methods, [](engine::Method m) { return engine::describe(m).periodic; });
}

std::optional<engine::Method> reference_method(const std::vector<engine::Method>& methods) {
  const auto exact = std::ranges::find_if(methods, [](engine::Method m) { return engine::describe(m).exact; });
  if (exact != methods.end()) return *exact;
  return std::nullopt;
}

std::string dataset_name(const std::vector<engine::Method>& methods, engine::Method method) {
  const engine::Method first = reference_method(methods).value_or(methods.front());
  return method == first ? "potential" : "potential_" + engine::method_name(method);
}

}  // namespace dcsgrid::app
