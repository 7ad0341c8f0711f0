// The molecular surface's distance fields on the device (surface_field.hpp's surface_field_cuda):
// the CPU's field bit for bit. Each node gathers what the CPU scatters: the atoms (SAS field) and
// the boundary samples (SES field) whose balls hold it, tested by FieldGrid::within on the same
// rounded numbers (this file compiles with -fmad=false, surface_field.cpp with -ffp-contract=off),
// and the nearest sample chosen among equals as the CPU's visiting order does (its block of
// planes, then its number). The samples are numbered as the CPU appends them (node order, then
// axis): a count per node, an exclusive scan (prims), then each node writes its own.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_atom_cells.cuh"
#include "dcsgrid/prims/scan.hpp"
#include "surface_field_cuda.cuh"

namespace dcsgrid::analysis::detail {
namespace {

using cuda::DeviceBuffer;
using engine::CellsView;

// Beyond the reach of a scan of the sample cells: samples are filed and tested by one position.
constexpr double kSampleSlack = 1e-6;

struct Node {
  std::int64_t i, j, k;
};
__device__ Node node_of(const FieldGrid& g, std::size_t n) {
  const auto [i, j, k] = g.ijk(n);
  return {i, j, k};
}

__device__ Vec3 position_of(const AtomBall& a) { return {a.x, a.y, a.z}; }

// sas_values: min over atoms of |x − a| − (r + probe) within r + probe + band; band elsewhere.
__global__ void sas_field(FieldGrid g, CellsView cells, const AtomBall* atoms, double probe, double band,
                          double reach, float* f) {
  for (std::size_t n = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; n < g.count();
       n += std::size_t(gridDim.x) * blockDim.x) {
    const Node v = node_of(g, n);
    float value = float(band);
    engine::scan_cells(cells, g.position(v.i, v.j, v.k), reach, [&](int e) {
      const AtomBall a = atoms[cells.index[e]];
      const double big_r = a.r + probe;
      double d2;
      if (g.within(position_of(a), big_r + band, v.i, v.j, v.k, d2))
        if (const float x = sas_value(d2, big_r); x < value) value = x;  // std::min's choice
      return false;
    });
    f[n] = value;
  }
}

struct SampleSearch {
  FieldGrid g;
  CellsView cells;
  const AtomBall* atoms;
  const float* f;
  double probe, reach;  // reach: AtomCells::near's for the samples, probe + one spacing
  double max_radius;
};

// The samples of node n (sas_boundary_samples'), axis by axis: emit(sample).
template <typename Emit>
__device__ void node_samples(const SampleSearch& s, std::size_t n, Emit&& emit) {
  const FieldGrid& g = s.g;
  const Node v = node_of(g, n);
  const std::int64_t ijk[3] = {v.i, v.j, v.k};
  const std::size_t stride[3] = {1, std::size_t(g.n[0]), std::size_t(g.n[0]) * std::size_t(g.n[1])};
  for (int d = 0; d < 3; ++d) {
    if (ijk[d] + 1 >= g.n[d] || (s.f[n] < 0) == (s.f[n + stride[d]] < 0)) continue;
    Vec3 q = g.position(v.i, v.j, v.k);
    q[d] += crossing_offset(g.h, s.f[n], s.f[n + stride[d]]);
    // AtomCells::near's atoms in its order, the lowest value first among equals.
    double best = INFINITY;
    int atom = -1;
    engine::scan_cells(s.cells, q, s.reach + s.max_radius + kAtomSlack, [&](int e) {
      const float4 packed = s.cells.atoms[e];
      if (engine::within_reach(q[0], q[1], q[2], packed.x, packed.y, packed.z, packed.w, s.reach)) {
        const int a = s.cells.index[e];
        const AtomBall exact = s.atoms[a];
        if (const double value = point_distance(q, position_of(exact)) - exact.r - s.probe; value < best)
          best = value, atom = a;
      }
      return false;
    });
    if (atom < 0) continue;
    const Vec3 c = position_of(s.atoms[atom]);
    const double len = point_distance(q, c);
    if (len == 0) continue;
    emit(onto_sphere(q, c, s.atoms[atom].r + s.probe, len));
  }
}

__global__ void count_samples(SampleSearch s, std::uint32_t* count) {
  for (std::size_t n = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; n < s.g.count();
       n += std::size_t(gridDim.x) * blockDim.x) {
    std::uint32_t c = 0;
    node_samples(s, n, [&](const Vec3&) { ++c; });
    count[n] = c;
  }
}

__global__ void write_samples(SampleSearch s, const std::uint32_t* first, double* samples) {
  for (std::size_t n = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; n < s.g.count();
       n += std::size_t(gridDim.x) * blockDim.x) {
    std::size_t at = first[n];
    node_samples(s, n, [&](const Vec3& p) {
      for (int d = 0; d < 3; ++d) samples[3 * at + d] = p[d];
      ++at;
    });
  }
}

// The samples in cubes of edge `edge` over the field's box.
struct SampleCells {
  double lo[3], inv_edge;
  int n[3];
  __device__ int cell_of(const double* p) const {
    int c[3];
    for (int d = 0; d < 3; ++d) {
      const double x = floor((p[d] - lo[d]) * inv_edge);
      c[d] = x < 0 ? 0 : x > n[d] - 1 ? n[d] - 1 : int(x);
    }
    return (c[2] * n[1] + c[1]) * n[0] + c[0];
  }
};

__global__ void count_in_cells(SampleCells c, const double* samples, std::size_t count, int* cell_count) {
  for (std::size_t s = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; s < count; s += std::size_t(gridDim.x) * blockDim.x)
    atomicAdd(&cell_count[c.cell_of(samples + 3 * s)], 1);
}

// Any order within a cell: the nearest sample is chosen by a total order (ses_field).
__global__ void file_in_cells(SampleCells c, const double* samples, std::size_t count, const int* start, int* cursor,
                              int* members) {
  for (std::size_t s = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; s < count; s += std::size_t(gridDim.x) * blockDim.x) {
    const int cell = c.cell_of(samples + 3 * s);
    members[start[cell] + atomicAdd(&cursor[cell], 1)] = int(s);
  }
}

// ses_values: each node's nearest sample within probe + one spacing (smallest float d², then the
// CPU's block of planes, then the lowest number), and the SES value from it.
__global__ void ses_field(FieldGrid g, CellsView cells, const double* samples, double probe, float* f,
                          std::int32_t* nearest) {
  const double reach = probe + g.h;
  for (std::size_t n = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; n < g.count();
       n += std::size_t(gridDim.x) * blockDim.x) {
    const Node v = node_of(g, n);
    float best_d2 = INFINITY;
    std::int64_t best_block = LLONG_MAX;
    int best = -1;
    engine::scan_cells(cells, g.position(v.i, v.j, v.k), reach + kSampleSlack, [&](int e) {
      const int s = cells.index[e];
      const Vec3 c = {samples[3 * s], samples[3 * s + 1], samples[3 * s + 2]};
      double d2;
      if (!g.within(c, reach, v.i, v.j, v.k, d2)) return false;
      const float d2f = float(d2);
      const std::int64_t block = g.block_of(c[2]);
      if (d2f < best_d2 || (d2f == best_d2 && (block < best_block || (block == best_block && s < best))))
        best_d2 = d2f, best_block = block, best = s;
      return false;
    });
    nearest[n] = best;
    f[n] = ses_value(probe, g.h, f[n], best, best_d2);
  }
}

unsigned blocks(std::size_t items) { return surface_blocks(items); }
constexpr int kThreads = kSurfaceThreads;

std::vector<AtomBall> exact_atoms(const AtomSet& atoms) {
  std::vector<AtomBall> out(atoms.size());
  for (std::size_t a = 0; a < atoms.size(); ++a) out[a] = AtomBall{atoms.x[a], atoms.y[a], atoms.z[a], atoms.r[a]};
  return out;
}

// The SES part: samples, their cells, the SES values and nearest samples (field.value on the
// device is the SAS field in, the SES field out).
void ses_on_device(const SampleSearch& search, DeviceField& field, cudaStream_t stream,
                   const std::function<void(const char*)>& done) {
  const FieldGrid& g = field.grid;
  const std::size_t nodes = g.count();
  require_device_memory(nodes * (2 * sizeof(std::uint32_t) + sizeof(std::int32_t)) + prims::scan_cuda_workspace_bytes(nodes),
                        "boundary samples");
  DeviceBuffer<std::uint32_t> count(nodes), first(nodes);
  {
    count_samples<<<blocks(nodes), kThreads, 0, stream>>>(search, count.data());
    DCSGRID_CHECK_LAUNCH();
    DeviceBuffer<unsigned char> workspace(prims::scan_cuda_workspace_bytes(nodes));
    prims::scan_cuda(count.data(), first.data(), nodes, prims::ScanKind::exclusive, workspace.data(), stream);
  }
  std::uint32_t last[2] = {};
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(&last[0], first.data() + nodes - 1, sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(&last[1], count.data() + nodes - 1, sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::size_t samples = std::size_t(last[0]) + last[1];  // below 2^32: at most 3 a node, checked next
  check_sample_count(samples);
  require_device_memory(samples * 3 * sizeof(double), "boundary samples");
  field.samples.resize(3 * samples);
  field.sample_count = samples;
  write_samples<<<blocks(nodes), kThreads, 0, stream>>>(search, first.data(), field.samples.data());
  DCSGRID_CHECK_LAUNCH();
  first = DeviceBuffer<std::uint32_t>();
  count = DeviceBuffer<std::uint32_t>();
  done("boundary samples");

  // Cells of the reach: a node scans 3 × 3 × 3 of them (most nodes are far from any sample, and
  // pay for the cells' bounds, not for samples).
  const double edge = search.probe + g.h;
  SampleCells c{};
  for (int d = 0; d < 3; ++d) {
    c.lo[d] = g.origin[d];
    c.n[d] = int(std::floor(g.h * double(g.n[d] - 1) / edge)) + 1;
  }
  c.inv_edge = 1 / edge;
  const std::size_t cells = std::size_t(c.n[0]) * std::size_t(c.n[1]) * std::size_t(c.n[2]);
  if (cells >= std::size_t(INT_MAX)) throw Error("the SES's sample cells exceed 2^31: raise --mesh-spacing");
  DeviceBuffer<int> start(cells + 1), cursor(cells + 1), members(std::max<std::size_t>(samples, 1));
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(cursor.data(), 0, cursor.bytes(), stream));
  count_in_cells<<<blocks(samples), kThreads, 0, stream>>>(c, field.samples.data(), samples, cursor.data());
  DCSGRID_CHECK_LAUNCH();
  {
    DeviceBuffer<unsigned char> workspace(prims::scan_cuda_workspace_bytes(cells + 1));
    prims::scan_cuda(cursor.data(), start.data(), cells + 1, prims::ScanKind::exclusive, workspace.data(), stream);
  }
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(cursor.data(), 0, cursor.bytes(), stream));
  file_in_cells<<<blocks(samples), kThreads, 0, stream>>>(c, field.samples.data(), samples, start.data(), cursor.data(),
                                                           members.data());
  DCSGRID_CHECK_LAUNCH();
  const CellsView view{start.data(), members.data(), nullptr, {c.lo[0], c.lo[1], c.lo[2]}, c.inv_edge,
                       {c.n[0], c.n[1], c.n[2]}};
  field.nearest.resize(nodes);
  ses_field<<<blocks(nodes), kThreads, 0, stream>>>(g, view, field.samples.data(), search.probe, field.value.data(),
                                                    field.nearest.data());
  DCSGRID_CHECK_LAUNCH();
  done("SES field");
}

}  // namespace

void require_device_memory(std::size_t bytes, const char* what) {
  std::size_t free = 0, total = 0;
  DCSGRID_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (bytes > free / 10 * 9)
    throw Error(std::string("the surface's ") + what + " need " + std::to_string(bytes >> 20) + " MiB of GPU memory, " +
                std::to_string(free >> 20) + " MiB free: raise --mesh-spacing or use --device cpu");
}

DeviceField device_field(const AtomSet& atoms, const SurfaceOptions& o, const FieldGrid& grid,
                         std::vector<engine::StageTime>* stages) {
  if (atoms.size() >= std::size_t(INT_MAX)) throw Error("too many atoms for the surface on the GPU");
  cudaStream_t stream = nullptr;  // the default stream: every call here waits for its work
  LapTimer timer;
  const std::function<void(const char*)> done = [&](const char* stage) {
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (stages) stages->push_back({stage, timer.lap()});
  };
  DeviceField field;
  field.grid = grid;
  const std::size_t nodes = grid.count();
  for (const double r : atoms.r) field.max_radius = std::max(field.max_radius, r);
  field.cells = engine::upload_cells(engine::AtomCells(atoms, kCellEdge), stream);
  field.atoms = cuda::upload(exact_atoms(atoms), stream);
  done("atom cells");
  require_device_memory(nodes * sizeof(float), "fields");
  field.value.resize(nodes);
  const double band = 2 * grid.h;
  sas_field<<<blocks(nodes), kThreads, 0, stream>>>(grid, field.cells.view, field.atoms.data(), o.probe_radius, band,
                                                    field.max_radius + o.probe_radius + band + kAtomSlack,
                                                    field.value.data());
  DCSGRID_CHECK_LAUNCH();
  done("SAS field");
  if (o.kind == SurfaceKind::ses && o.probe_radius > 0) {
    const SampleSearch search{grid, field.cells.view, field.atoms.data(), field.value.data(), o.probe_radius,
                              o.probe_radius + grid.h, field.max_radius};
    ses_on_device(search, field, stream, done);
  }
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  return field;
}

void surface_field_cuda(const AtomSet& atoms, const SurfaceOptions& o, SurfaceField& field) {
  const DeviceField on_device = device_field(atoms, o, field.grid);
  const std::size_t nodes = field.grid.count();
  field.value.resize(nodes);
  download(on_device.value, nodes, field.value.data(), nullptr);
  if (on_device.sample_count > 0) {
    field.samples.resize(on_device.sample_count);
    field.nearest_sample.resize(nodes);
    static_assert(sizeof(Vec3) == 3 * sizeof(double), "samples are downloaded as x, y, z doubles");
    download(on_device.samples, 3 * on_device.sample_count, reinterpret_cast<double*>(field.samples.data()), nullptr);
    download(on_device.nearest, nodes, field.nearest_sample.data(), nullptr);
  }
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

}  // namespace dcsgrid::analysis::detail
