// The molecular surface's mesh made on the device from the fields kept there (surface_mesh_cuda,
// surface_field.hpp): the CPU's steps (surface.cpp) through the same per-node code
// (surface_mesh_point.hpp), so the same mesh. The exact field is evaluated as SurfaceEvaluator
// does (surface_field.cpp), on the same candidates in the same order: a node's atoms are those
// AtomCells::near finds, scanned in its order; the first exposed sphere by depth is the least
// (depth, atom) of those exposed; an atom's neighbours (the atoms that may cover its sphere) are
// found in the cells around the point tested, by the test that makes the CPU's lists. Vertex and
// face numbers are exclusive scans (prims) of per-node counts in grid order, the CPU's order.
// Compiles with -fmad=false, as surface_field.cu.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/prims/scan.hpp"
#include "surface_field_cuda.cuh"
#include "surface_mesh_point.hpp"

namespace dcsgrid::analysis::detail {
namespace {

using cuda::DeviceBuffer;
using engine::CellsView;

constexpr int kThreads = kSurfaceThreads;

struct Evaluator {
  FieldGrid g;
  CellsView cells;
  const AtomBall* atoms;
  const double* samples;  // null: the surface is a union of spheres (no samples)
  double probe, gather_reach, max_radius;

  __device__ Vec3 centre(int a) const { return {atoms[a].x, atoms[a].y, atoms[a].z}; }
  __device__ Vec3 sample(std::int64_t s) const { return {samples[3 * s], samples[3 * s + 1], samples[3 * s + 2]}; }

  // SurfaceEvaluator::gather's atoms for the node at p, in AtomCells::near's order: visit(atom).
  template <typename Visit>
  __device__ void scan_local_atoms(const Vec3& p, Visit&& visit) const {
    engine::scan_cells(cells, p, gather_reach + max_radius + kAtomSlack, [&](int e) {
      const float4 packed = cells.atoms[e];
      if (engine::within_reach(p[0], p[1], p[2], packed.x, packed.y, packed.z, packed.w, gather_reach))
        visit(cells.index[e]);
      return false;
    });
  }

  // The node's atoms, gathered once for the evaluations along its edges (scanned again each time
  // where there are more than a thread keeps).
  struct NodeAtoms {
    static constexpr int kKept = 96;
    Vec3 p;
    int count = 0;
    int index[kKept];
  };
  __device__ void gather(const Vec3& p, NodeAtoms& local) const {
    local.p = p;
    local.count = 0;
    scan_local_atoms(p, [&](int a) {
      if (local.count < NodeAtoms::kKept) local.index[local.count] = a;
      ++local.count;
    });
  }
  template <typename Visit>
  __device__ void local_atoms(const NodeAtoms& local, Visit&& visit) const {
    if (local.count > NodeAtoms::kKept) return scan_local_atoms(local.p, visit);
    for (int k = 0; k < local.count; ++k) visit(local.index[k]);
  }

  // SurfaceEvaluator::exposed: no neighbour of atom a (another atom whose SAS sphere meets a's,
  // by the test that lists it) covers q.
  __device__ bool exposed(const Vec3& q, int a) const {
    const Vec3 c = centre(a);
    const double list_reach = atoms[a].r + 2 * probe;
    return !engine::scan_cells(cells, q, max_radius + probe + kAtomSlack, [&](int e) {
      const int b = cells.index[e];
      const float4 packed = cells.atoms[e];
      if (b == a || !engine::within_reach(c[0], c[1], c[2], packed.x, packed.y, packed.z, packed.w, list_reach))
        return false;
      const AtomBall& ball = atoms[b];
      const double reach = ball.r + probe - 1e-9;
      const double dx = q[0] - ball.x, dy = q[1] - ball.y, dz = q[2] - ball.z;
      return dx * dx + dy * dy + dz * dz < reach * reach;
    });
  }

  // SurfaceEvaluator::value at x, with the atoms of its node and the samples of its edge.
  __device__ double value(const Vec3& x, const NodeAtoms& p, const std::int32_t edge_samples[2], FieldSphere& sphere) const {
    FieldSphere found;
    double best = 2 * g.h;
    if (samples) {
      double distance = INFINITY;  // boundary_distance
      std::int64_t feature = -1;
      for (int k = 0; k < 2; ++k)
        if (const std::int32_t s = edge_samples[k]; s >= 0)
          if (const double d = point_distance(x, sample(s)); d < distance) distance = d, feature = s;
      double exposed_depth = INFINITY;
      int exposed_atom = -1;
      local_atoms(p, [&](int a) {
        const AtomBall& ball = atoms[a];
        const double big_r = ball.r + probe;
        const double dx = x[0] - ball.x, dy = x[1] - ball.y, dz = x[2] - ball.z;
        if (dx * dx + dy * dy + dz * dz > big_r * big_r) return;  // outside: no depth
        const Vec3 c = centre(a);
        const double depth = big_r - point_distance(x, c);
        if (!(depth >= 0 && depth < distance)) return;
        if (depth > exposed_depth || (depth == exposed_depth && a > exposed_atom)) return;  // after the best so far
        const double len = point_distance(x, c);
        if (len == 0) return;
        if (exposed(onto_sphere(x, c, ball.r + probe, len), a)) exposed_depth = depth, exposed_atom = a;
      });
      if (exposed_atom >= 0) distance = exposed_depth, feature = -2 - std::int64_t(exposed_atom);
      if (feature >= 0) found = {sample(feature), probe, true};
      else if (feature <= -2) found = {centre(exposed_atom), atoms[exposed_atom].r, false};
      best = feature == -1 ? -2 * g.h : probe - distance;
    } else {
      local_atoms(p, [&](int a) {
        if (const double v = point_distance(x, centre(a)) - atoms[a].r - probe; v < best)
          best = v, found = {centre(a), atoms[a].r + probe, false};
      });
    }
    sphere = found;
    return best;
  }

  // SurfaceEvaluator::describe: the nearest atom's surface (atom stays as given without atoms).
  __device__ void describe(const Vec3& x, const NodeAtoms& p, const FieldSphere& sphere, float normal[3],
                           std::uint32_t& atom) const {
    double best = INFINITY;
    local_atoms(p, [&](int a) {
      if (const double v = point_distance(x, centre(a)) - atoms[a].r; v < best) best = v, atom = std::uint32_t(a);
    });
    outward_normal(x, centre(int(atom)), sphere, normal);
  }
};

__device__ Vec3 node_position(const FieldGrid& g, std::size_t n, std::int64_t ijk[3]) {
  const std::array<std::int64_t, 3> node = g.ijk(n);
  for (int d = 0; d < 3; ++d) ijk[d] = node[d];
  return g.position(ijk[0], ijk[1], ijk[2]);
}

// refine_near_zero: nodes within a quarter spacing of zero take the exact value.
__global__ void refine_near_zero(Evaluator ev, const std::int32_t* nearest, float* f) {
  const float close = float(0.25 * ev.g.h);
  for (std::size_t n = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; n < ev.g.count();
       n += std::size_t(gridDim.x) * blockDim.x) {
    if (!(fabsf(f[n]) < close)) continue;
    std::int64_t ijk[3];
    Evaluator::NodeAtoms local;
    ev.gather(node_position(ev.g, n, ijk), local);
    const std::int32_t pair[2] = {nearest[n], nearest[n]};
    FieldSphere unused;
    f[n] = float(ev.value(local.p, local, pair, unused));
  }
}

// Adds each thread's total into *total once (a warp's totals summed first).
__device__ void add_total(unsigned long long mine, unsigned long long* total) {
  for (int offset = 16; offset > 0; offset /= 2) mine += __shfl_down_sync(0xffffffffu, mine, offset);
  if (threadIdx.x % 32 == 0 && mine) atomicAdd(total, mine);
}

__global__ void crossed_edges(FieldGrid g, const float* f, std::uint8_t* mask, std::uint32_t* count,
                              unsigned long long* total) {
  unsigned long long mine = 0;
  for (std::size_t n = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; n < g.count();
       n += std::size_t(gridDim.x) * blockDim.x) {
    std::int64_t ijk[3];
    node_position(g, n, ijk);
    mask[n] = crossed_mask(g, f, ijk[0], ijk[1], ijk[2]);
    count[n] = std::uint32_t(bit_count(mask[n]));
    mine += count[n];
  }
  add_total(mine, total);
}

struct MeshOut {
  float* vertices;  // 3 a vertex
  float* normals;   // 3 a vertex
  std::uint32_t* atom;
};

// Each vertex's node: the node of every crossed edge, at the edge's vertex number.
__global__ void vertex_nodes(FieldGrid g, const std::uint8_t* mask, const std::uint32_t* first, std::size_t* node) {
  for (std::size_t n = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; n < g.count();
       n += std::size_t(gridDim.x) * blockDim.x)
    for (int k = 0; k < bit_count(mask[n]); ++k) node[first[n] + std::uint32_t(k)] = n;
}

// place_vertices: each vertex's place on its edge, normal and atom, a thread a vertex (a thread a
// node left most of a warp idle: crossed edges are few and far between).
__global__ void place_vertices(Evaluator ev, const float* f, const std::int32_t* nearest, const std::uint8_t* mask,
                               const std::uint32_t* first, const std::size_t* vertex_node, std::size_t vertices,
                               MeshOut out) {
  const FieldGrid& g = ev.g;
  for (std::size_t v = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; v < vertices;
       v += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t n = vertex_node[v];
    int d = 0;  // the direction of the node's (v − first)-th crossed edge
    for (std::uint32_t k = std::uint32_t(v) - first[n] + 1; k > 0; k -= (mask[n] >> (d - 1)) & 1u) ++d;
    std::int64_t ijk[3];
    const Vec3 a = node_position(g, n, ijk);
    Evaluator::NodeAtoms local;
    ev.gather(a, local);
    const std::size_t m = n + node_step(g, d);
    const Vec3 b = g.position(ijk[0] + (d & 1), ijk[1] + (d >> 1 & 1), ijk[2] + (d >> 2 & 1));
    const std::int32_t pair[2] = {nearest ? nearest[n] : -1, nearest ? nearest[m] : -1};
    FieldSphere sphere;
    const double t = edge_root([&](const Vec3& x, FieldSphere& at) { return ev.value(x, local, pair, at); }, a, b,
                               f[n], f[m], sphere);
    const Vec3 x = along(a, b, t);
    for (int k = 0; k < 3; ++k) out.vertices[3 * v + k] = float(x[k]);
    std::uint32_t atom = 0;
    ev.describe(x, local, sphere, out.normals + 3 * v, atom);
    out.atom[v] = atom;
  }
}

__device__ bool is_cube(const FieldGrid& g, const std::int64_t ijk[3]) {
  return ijk[0] + 1 < g.n[0] && ijk[1] + 1 < g.n[1] && ijk[2] + 1 < g.n[2];
}

__global__ void count_faces(FieldGrid g, const float* f, const std::uint8_t* mask, const std::uint32_t* first,
                            std::uint32_t* count, unsigned long long* total) {
  unsigned long long mine = 0;
  for (std::size_t n = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; n < g.count();
       n += std::size_t(gridDim.x) * blockDim.x) {
    std::int64_t ijk[3];
    node_position(g, n, ijk);
    count[n] = is_cube(g, ijk) ? cube_face_count(g, f, mask, first, n) : 0;
    mine += count[n];
  }
  add_total(mine, total);
}

__global__ void write_faces(FieldGrid g, const float* f, const std::uint8_t* mask, const std::uint32_t* first,
                            const std::uint32_t* face_first, std::uint32_t* faces) {
  for (std::size_t n = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; n < g.count();
       n += std::size_t(gridDim.x) * blockDim.x) {
    std::int64_t ijk[3];
    node_position(g, n, ijk);
    if (!is_cube(g, ijk)) continue;
    std::size_t at = face_first[n];
    cube_faces(g, f, mask, first, n, [&](std::uint32_t a, std::uint32_t b, std::uint32_t c) {
      faces[3 * at] = a, faces[3 * at + 1] = b, faces[3 * at + 2] = c;
      ++at;
    });
  }
}

// first = the exclusive scan of count; returns the 64-bit total counted beside it, refusing one
// that 32-bit numbers cannot hold.
std::size_t number(const DeviceBuffer<std::uint32_t>& count, DeviceBuffer<std::uint32_t>& first,
                   const unsigned long long* total, const char* what) {
  const std::size_t n = count.size();
  DeviceBuffer<unsigned char> workspace(prims::scan_cuda_workspace_bytes(n));
  prims::scan_cuda(count.data(), first.data(), n, prims::ScanKind::exclusive, workspace.data(), nullptr);
  unsigned long long sum = 0;
  DCSGRID_CUDA_CHECK(cudaMemcpy(&sum, total, sizeof sum, cudaMemcpyDeviceToHost));
  if (sum > std::numeric_limits<std::uint32_t>::max())
    throw Error(std::string("the surface has more than 2^32 ") + what + ": raise --mesh-spacing");
  return std::size_t(sum);
}

// The crossed edges' masks and vertex numbers, and the cubes' first face numbers.
struct Numbering {
  DeviceBuffer<std::uint8_t> mask;
  DeviceBuffer<std::uint32_t> first, face_first;
  std::size_t vertices = 0, faces = 0;
};

Numbering number_vertices_and_faces(const FieldGrid& grid, const float* value) {
  const std::size_t nodes = grid.count();
  require_device_memory(nodes * (sizeof(std::uint8_t) + 3 * sizeof(std::uint32_t)) + prims::scan_cuda_workspace_bytes(nodes),
                        "crossed edges");
  Numbering out;
  out.mask.resize(nodes);
  out.first.resize(nodes);
  DeviceBuffer<std::uint32_t> count(nodes);
  DeviceBuffer<unsigned long long> total(2);
  DCSGRID_CUDA_CHECK(cudaMemset(total.data(), 0, total.bytes()));
  crossed_edges<<<surface_blocks(nodes), kThreads>>>(grid, value, out.mask.data(), count.data(), total.data());
  DCSGRID_CHECK_LAUNCH();
  out.vertices = number(count, out.first, total.data(), "vertices");
  out.face_first.resize(nodes);
  count_faces<<<surface_blocks(nodes), kThreads>>>(grid, value, out.mask.data(), out.first.data(), count.data(),
                                                   total.data() + 1);
  DCSGRID_CHECK_LAUNCH();
  out.faces = number(count, out.face_first, total.data() + 1, "faces");
  return out;
}

struct DeviceMesh {
  DeviceBuffer<float> positions, normals;
  DeviceBuffer<std::uint32_t> atom, corners;
  DeviceBuffer<std::size_t> vertex_node;
};

// Launches the kernels that place the vertices and write the faces; returns at once.
DeviceMesh launch_mesh(const Evaluator& ev, const float* value, const std::int32_t* nearest, const Numbering& e) {
  const std::size_t nodes = ev.g.count();
  require_device_memory(e.vertices * (7 * sizeof(float) + sizeof(std::size_t)) + e.faces * 3 * sizeof(std::uint32_t),
                        "vertices and faces");
  DeviceMesh m;
  m.positions.resize(3 * e.vertices);
  m.normals.resize(3 * e.vertices);
  m.atom.resize(e.vertices);
  m.corners.resize(3 * e.faces);
  m.vertex_node.resize(e.vertices);
  vertex_nodes<<<surface_blocks(nodes), kThreads>>>(ev.g, e.mask.data(), e.first.data(), m.vertex_node.data());
  DCSGRID_CHECK_LAUNCH();
  place_vertices<<<surface_blocks(e.vertices), kThreads>>>(ev, value, nearest, e.mask.data(), e.first.data(),
                                                           m.vertex_node.data(), e.vertices,
                                                           {m.positions.data(), m.normals.data(), m.atom.data()});
  DCSGRID_CHECK_LAUNCH();
  write_faces<<<surface_blocks(nodes), kThreads>>>(ev.g, value, e.mask.data(), e.first.data(), e.face_first.data(),
                                                   m.corners.data());
  DCSGRID_CHECK_LAUNCH();
  return m;
}

// The mesh's host arrays, a thread each: a 10^6-atom mesh's are gigabytes, whose pages one
// thread is slow to touch (docs/surface.md).
TriangleMesh host_mesh(std::size_t vertices, std::size_t faces) {
  TriangleMesh mesh;
  std::exception_ptr failed[4];
  const auto guarded = [&](int k, auto&& make) {
    return std::thread([&failed, k, make] {
      try {
        make();
      } catch (...) {
        failed[k] = std::current_exception();
      }
    });
  };
  std::thread threads[] = {guarded(0, [&] { mesh.vertices.resize(vertices); }),
                           guarded(1, [&] { mesh.normals.resize(vertices); }),
                           guarded(2, [&] { mesh.atom.resize(vertices); }),
                           guarded(3, [&] { mesh.faces.resize(faces); })};
  for (auto& t : threads) t.join();
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  return mesh;
}

void download_mesh(const DeviceMesh& m, TriangleMesh& mesh) {
  static_assert(sizeof(mesh.vertices[0]) == 3 * sizeof(float) && sizeof(mesh.faces[0]) == 3 * sizeof(std::uint32_t),
                "vertices, normals and faces are downloaded as three numbers each");
  download(m.positions, 3 * mesh.vertices.size(), reinterpret_cast<float*>(mesh.vertices.data()), nullptr);
  download(m.normals, 3 * mesh.vertices.size(), reinterpret_cast<float*>(mesh.normals.data()), nullptr);
  download(m.atom, mesh.vertices.size(), mesh.atom.data(), nullptr);
  download(m.corners, 3 * mesh.faces.size(), reinterpret_cast<std::uint32_t*>(mesh.faces.data()), nullptr);
}

}  // namespace

TriangleMesh surface_mesh_cuda(const AtomSet& atoms, const SurfaceOptions& o, const FieldGrid& grid,
                               std::size_t& samples, std::vector<engine::StageTime>& stages) {
  LapTimer timer;
  const auto done = [&](const char* stage) {
    DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
    stages.push_back({stage, timer.lap()});
  };
  DeviceField field = device_field(atoms, o, grid, &stages);
  timer.lap();
  samples = field.sample_count;
  const bool ses = field.sample_count > 0;
  const Evaluator ev{grid, field.cells.view, field.atoms.data(), ses ? field.samples.data() : nullptr,
                     o.probe_radius, o.probe_radius + std::sqrt(3.0) * grid.h + 1e-6, field.max_radius};
  const std::int32_t* nearest = ses ? field.nearest.data() : nullptr;
  if (ses) {
    refine_near_zero<<<surface_blocks(grid.count()), kThreads>>>(ev, nearest, field.value.data());
    DCSGRID_CHECK_LAUNCH();
    done("exact values near zero");
  }
  const Numbering numbers = number_vertices_and_faces(grid, field.value.data());
  done("vertex and face numbers");
  const DeviceMesh on_device = launch_mesh(ev, field.value.data(), nearest, numbers);
  TriangleMesh mesh = host_mesh(numbers.vertices, numbers.faces);  // while the kernels run
  stages.push_back({"the mesh's host arrays, beside the kernels", timer.lap()});
  done("vertices and faces (what is left of them)");
  download_mesh(on_device, mesh);
  done("download");
  return mesh;
}

}  // namespace dcsgrid::analysis::detail
