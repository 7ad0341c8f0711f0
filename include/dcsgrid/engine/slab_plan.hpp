// How a backend cuts a run's planes into slabs: few enough that per-slab costs stay small, small
// enough that the host buffers pin quickly, and on the method's plane multiple so that no slab
// computes planes it does not keep.
#pragma once
#include <cstdint>
#include <vector>

#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::engine {

// Planes per slab: at most `preferred` (what the host buffers should hold) and `allowed` (what
// memory allows), rounded down to a multiple of plane_multiple, or raised to one multiple where
// `preferred` holds less and `allowed` holds that much. At least 1.
std::int64_t slab_planes(std::int64_t preferred, std::int64_t allowed, std::int64_t plane_multiple);

// Slabs covering range in order, at most cap planes each, and, when the planes allow, at least two
// per device (so every device overlaps a kernel with the copy and sink of the slab before) and
// about a multiple of the device count (slab s runs on device s % devices). Where cap is a
// multiple of plane_multiple, every bound inside the range is a multiple of it in the whole grid.
std::vector<Slab> plan_slabs(Slab range, std::int64_t cap, std::int64_t devices,
                             std::int64_t plane_multiple);

}  // namespace dcsgrid::engine
