// AtomCells (atom_cells.hpp) on the current CUDA device, and the scan of the cells near a point
// (CUDA builds only; include from .cu files): what device code that looks up the atoms near a
// place uses (PB's surface points, the molecular surface's fields).
#pragma once
#include <cuda_runtime.h>

#include <array>
#include <climits>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/atom_cells.hpp"

namespace dcsgrid::engine {

struct CellsView {
  const int* start = nullptr;     // cells + 1 entries
  const int* index = nullptr;     // the atoms' input indices, cell by cell
  const float4* atoms = nullptr;  // their x, y, z, r
  double lo[3] = {}, inv_edge = 1;  // 1 / the cells' edge
  int n[3] = {};
};

struct DeviceCells {
  cuda::DeviceBuffer<int> start, index;
  cuda::DeviceBuffer<float4> atoms;
  CellsView view;
};

// A copy of cells on the device; returns once it is there.
inline DeviceCells upload_cells(const AtomCells& cells, cudaStream_t stream) {
  const auto& counts = cells.counts();
  if (counts[0] * counts[1] * counts[2] >= INT_MAX || cells.members().size() >= std::size_t(INT_MAX))
    throw Error("too many cells of atoms, or atoms, for the GPU's cell list");
  DeviceCells d;
  d.start = cuda::upload(std::vector<int>(cells.start().begin(), cells.start().end()), stream);
  d.index = cuda::upload(std::vector<int>(cells.members().begin(), cells.members().end()), stream);
  std::vector<float4> packed(cells.packed().size());
  for (std::size_t m = 0; m < packed.size(); ++m) {
    const auto& a = cells.packed()[m];
    packed[m] = make_float4(a[0], a[1], a[2], a[3]);
  }
  d.atoms = cuda::upload(packed, stream);
  d.view = {d.start.data(), d.index.data(), d.atoms.data(), {cells.lo()[0], cells.lo()[1], cells.lo()[2]},
            1 / cells.edge(), {int(counts[0]), int(counts[1]), int(counts[2])}};
  return d;
}

// Calls visit(entry) for the atoms of every cell that meets the cube of half-width reach around p,
// z, then y, then x ascending (AtomCells::near's order), until visit returns true; returns whether
// it did. The atoms were filed in cell floor((x − lo)/edge) (clamped); callers' reach exceeds the
// atoms' by 1e-6 Å, far more than multiplying by 1/edge rather than dividing can move a bound, so
// no atom within reach of p is missed.
template <typename Visit>
__device__ bool scan_cells(const CellsView& c, const std::array<double, 3>& p, double reach, Visit&& visit) {
  int lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    const double a = floor((p[d] - reach - c.lo[d]) * c.inv_edge), b = floor((p[d] + reach - c.lo[d]) * c.inv_edge);
    if (!(b >= 0 && a <= c.n[d] - 1)) return false;
    lo[d] = a < 0 ? 0 : int(a);
    hi[d] = b > c.n[d] - 1 ? c.n[d] - 1 : int(b);
  }
  for (int z = lo[2]; z <= hi[2]; ++z)
    for (int y = lo[1]; y <= hi[1]; ++y) {
      const int row = (z * c.n[1] + y) * c.n[0];  // a row's cells hold consecutive entries
      const int end = c.start[row + hi[0] + 1];
      for (int e = c.start[row + lo[0]]; e < end; ++e)
        if (visit(e)) return true;
    }
  return false;
}

}  // namespace dcsgrid::engine
