// Running float64 sums of maps that stay on GPUs (engine::DeviceMap): batch --average adds each
// frame there, so that no frame's map crosses to the host. CUDA builds only.
#pragma once
#ifdef DCSGRID_HAVE_CUDA
#include <cstddef>
#include <memory>
#include <span>

#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::analysis {

// Per point, over the maps added: Σ (v − s) and Σ (v − s)² in float64, s being the first map added
// (a shift that keeps the variance's subtraction well conditioned), on one device. Each add is one
// IEEE operation per term, unfused, as a host's loop `d = double(v) − double(s); sum += d;
// squares += d * d` without contraction gives it. A map on another GPU is first copied to this
// one, so that maps from any number of GPUs make one sequence of adds: the same sums, in the same
// order, as one GPU's.
class DeviceMapSums {
 public:
  // Zero sums of `points` points on `device` (device memory: 20 bytes a point, and 4 more once a
  // map comes from another GPU).
  DeviceMapSums(int device, std::size_t points);
  ~DeviceMapSums();
  DeviceMapSums(DeviceMapSums&&) noexcept;
  DeviceMapSums& operator=(DeviceMapSums&&) noexcept;

  std::size_t count() const;  // maps added, and those of sums loaded
  // Continues from sums kept elsewhere (a stopped run's): their shift and sums over `count` maps.
  // Waits for the copies.
  void load(std::span<const float> shift, std::span<const double> sum, std::span<const double> squares,
            std::size_t count);
  // Enqueues the adding of `map` (on any GPU, at least as many points): it must stay unchanged
  // until synchronize() returns.
  void add(const engine::DeviceMap& map);
  // Waits for the adds enqueued.
  void synchronize();
  // Copies the shift and sums to the host (after the adds enqueued).
  void download(std::span<float> shift, std::span<double> sum, std::span<double> squares) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dcsgrid::analysis
#endif
