// The molecular surface's distance fields kept on the current CUDA device (surface_field.cu), for
// their download (surface_field_cuda) and for the mesh made there (surface_mesh.cu). CUDA builds
// only; private to src/analysis.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/engine/cuda_atom_cells.cuh"
#include "surface_field.hpp"

namespace dcsgrid::analysis::detail {

// Beyond the reach of a scan of the atom cells: atoms are filed by their float positions and
// tested by their double ones (1e-5 Å apart at 300 Å).
inline constexpr double kAtomSlack = 1e-3;

// An atom's centre and radius as the CPU holds them.
struct AtomBall {
  double x, y, z, r;
};

struct DeviceField {
  FieldGrid grid;
  engine::DeviceCells cells;            // the atoms in AtomCells of kCellEdge
  cuda::DeviceBuffer<AtomBall> atoms;   // in input order
  double max_radius = 0;
  cuda::DeviceBuffer<float> value;
  cuda::DeviceBuffer<double> samples;   // SES: x, y, z of each boundary sample
  std::size_t sample_count = 0;
  cuda::DeviceBuffer<std::int32_t> nearest;  // SES: each node's nearest sample, or −1
};

// The fields of `grid` (surface_field's) for atoms and options, on the current device; the
// default stream, done on return. stages, when given, receives the time of each step.
DeviceField device_field(const AtomSet& atoms, const SurfaceOptions& options, const FieldGrid& grid,
                         std::vector<engine::StageTime>* stages = nullptr);

// Throws Error unless `bytes` more fit on the device (with a tenth spare); what: what needs them.
void require_device_memory(std::size_t bytes, const char* what);

// Enqueues the copy of count elements of from into host memory at to.
template <typename T>
void download(const cuda::DeviceBuffer<T>& from, std::size_t count, T* to, cudaStream_t stream) {
  if (count) DCSGRID_CUDA_CHECK(cudaMemcpyAsync(to, from.data(), count * sizeof(T), cudaMemcpyDeviceToHost, stream));
}

// The blocks of a grid-stride loop of kernels here over `items` (one at least: no items, no work).
inline constexpr int kSurfaceThreads = 256;
inline unsigned surface_blocks(std::size_t items) {
  return std::max(1u, cuda::grid_stride_blocks(std::int64_t(items), kSurfaceThreads));
}

}  // namespace dcsgrid::analysis::detail
