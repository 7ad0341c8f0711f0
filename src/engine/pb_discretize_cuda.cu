// The PB coefficient maps on the device (engine/pb_discretize_cuda.hpp). Every per-point formula is
// pb_discretize_point.hpp's, the one the CPU runs; this file compiles with -fmad=false (CMakeLists)
// so that the device rounds each operation as the CPU (built with -ffp-contract=off) does.
//   mol/smol: the pdie marks, one block per (atom, face grid), then the SAS points (one thread per
//   probe-sphere point against the atoms of the cells near it), then the solvent re-marks, one block
//   per (atom, face grid, 256 sphere points): one byte a point (1 = pdie) until ε is written, with
//   smol's harmonic mean, in the last pass. Writes of one value race harmlessly; the phases are
//   ordered by the stream.
//   spl2/spl4: each point gathers the atoms whose switch reaches it and applies them in increasing
//   atom order, the CPU's order, so that the products round alike.
//   mdh: a face kernel of our own in float64 (the CPU's float charges, rsqrt and exp in double). The
//   CPU's sum of float32 terms is itself ~6e-7 off the float64 sum (relative L2 over 1D7H's faces;
//   1.2e-6 of the largest face value), so only a device sum well below that stays within 1e-6 of
//   the CPU: float32 terms (the direct kernel's, whose 1/r takes Newton steps on part of its points,
//   or ours summed in double, emulated on the host) add as much again.
#include "dcsgrid/engine/pb_discretize_cuda.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/atom_cells.hpp"
#include "dcsgrid/engine/cuda_atom_cells.cuh"
#include "pb_discretize_point.hpp"

namespace dcsgrid::engine {
namespace {

using cuda::DeviceBuffer;
using pb_point::Face;
using pb_point::IndexBox;
using pb_point::kApbsSmall;
using pb_point::kSplineSmall;
using pb_point::Lattice;
using pb_point::lattice_of;
using pb_point::SplineSwitch;
using pb_point::Vec3;

constexpr int kThreads = 256;
// Thread block of the sphere marks: 8 × 8 × 4 points of the sphere's index box at a time.
const dim3 kMarkBlock(8, 8, 4);
// Solvent re-marks: the sphere points of one block, one a thread of kMarkBlock.
constexpr int kSasPointsPerBlock = 8 * 8 * 4;
// Spline surfaces: the atoms a point gathers and sorts (1D7H's accessibility: 39 at most); beyond,
// it takes them in order by repeated scans (slower, the same result).
constexpr int kSplineAtoms = 48;
// The face kernels' blocks: 16 × 8 points of a face.
constexpr int kFaceBlockX = 16, kFaceBlockY = 8;

bool spline_surface(PbSurface srfm) { return srfm == PbSurface::spl2 || srfm == PbSurface::spl4; }

using cuda::upload;

void check_input(const AtomSet& atoms, const GridSpec& grid, const char* who) {
  validate(grid);
  if (atoms.empty()) throw Error(std::string(who) + ": no atoms");
  if (!atoms.has_radii()) throw Error(std::string(who) + ": the atoms have no radii");
  if (atoms.size() > std::size_t(INT_MAX)) throw Error(std::string(who) + ": too many atoms for one launch");
  if (grid.point_count() / kThreads >= std::size_t(INT_MAX))
    throw Error(std::string(who) + ": grid " + grid.describe() + " is too large for one launch");
}

// Every atom's x, y, z and radius, in input order.
std::vector<float4> atoms_with_radii(const AtomSet& atoms) {
  std::vector<float4> out(atoms.size());
  for (std::size_t n = 0; n < atoms.size(); ++n) out[n] = make_float4(atoms.x[n], atoms.y[n], atoms.z[n], atoms.r[n]);
  return out;
}

// ---- sphere marks (mol, smol; the accessibility's ion exclusion) ----

// The grids one set of marks goes to: the three face grids of ε, or the grid itself.
template <typename T>
struct MarkedGrids {
  T* values[3] = {};
  Lattice lattice[3];
};

// value at every point of box within √r2 (≤) of pos, the block's threads spread over the box.
template <typename T>
__device__ void mark_box(const IndexBox& b, const Vec3& pos, double r2, const Lattice& l, T* a, T value) {
  for (std::int64_t k = b.lo[2] + threadIdx.z; k <= b.hi[2]; k += blockDim.z) {
    const double dz = pb_point::axis_offset(pos, l, 2, k);
    for (std::int64_t j = b.lo[1] + threadIdx.y; j <= b.hi[1]; j += blockDim.y) {
      const double dy = pb_point::axis_offset(pos, l, 1, j);
      for (std::int64_t i = b.lo[0] + threadIdx.x; i <= b.hi[0]; i += blockDim.x)
        if (pb_point::distance2(dz, dy, pb_point::axis_offset(pos, l, 0, i)) <= r2) a[l.at(i, j, k)] = value;
    }
  }
}

// Block (atom, grid): value within the atom's radius + extra, for atoms of radius above APBS's VSMALL.
template <typename T>
__global__ void mark_atom_spheres(const float4* atoms, double extra, MarkedGrids<T> grids, T value) {
  const float4 atom = atoms[blockIdx.x];
  if (!(double(atom.w) > kApbsSmall)) return;
  const Lattice& l = grids.lattice[blockIdx.y];
  const double r = double(atom.w) + extra;
  const Vec3 pos = pb_point::relative_to(l, atom.x, atom.y, atom.z);
  mark_box(pb_point::sphere_box(r, pos, l), pos, r * r, l, grids.values[blockIdx.y], value);
}

template <typename T>
void launch_atom_marks(const DeviceBuffer<float4>& atoms, double extra, const MarkedGrids<T>& grids, int count,
                       T value, cudaStream_t stream) {
  mark_atom_spheres<T><<<dim3(unsigned(atoms.size()), unsigned(count)), kMarkBlock, 0, stream>>>(
      atoms.data(), extra, grids, value);
  DCSGRID_CHECK_LAUNCH();
}

// The SAS points as bits: word a·words + s/32, bit s%32, for point s of atom a's probe sphere.
struct SasPoints {
  const float4* atoms = nullptr;  // x, y, z, r in input order
  const double* sphere = nullptr;  // the probe sphere's unit vectors, 3 per point
  int points = 0, words = 0;
  double srad = 0, reach = 0;  // reach: srad + the largest radius (and a hair)
  unsigned* open = nullptr;
};

// Thread (atom blockIdx.x, sphere point s): whether no other atom covers the point (APBS's
// ivdwAccExclus, as accessible_surface_points); atoms below VSMALL have none.
__global__ void find_sas_points(SasPoints in, CellsView cells) {
  const int a = int(blockIdx.x);
  const int s = int(blockIdx.y) * kThreads + int(threadIdx.x);
  const float4 atom = in.atoms[a];
  bool open = false;
  if (s < in.points && !(double(atom.w) < kApbsSmall)) {
    const double rad = double(atom.w) + in.srad;
    const Vec3 p = pb_point::probe_point({atom.x, atom.y, atom.z}, rad,
                                         {in.sphere[3 * s], in.sphere[3 * s + 1], in.sphere[3 * s + 2]});
    open = !scan_cells(cells, p, in.reach, [&](int e) {
      const float4 b = cells.atoms[e];
      return cells.index[e] != a && pb_point::covers(p, b.x, b.y, b.z, b.w, in.srad);
    });
  }
  const unsigned bits = __ballot_sync(0xffffffffu, open);
  if (threadIdx.x % 32 == 0 && s < in.points) in.open[std::size_t(a) * in.words + s / 32] = bits;
}

// Block (atom, grid, kSasPointsPerBlock sphere points): solvent (0) within srad of each of those
// that are SAS points. Each thread places one point's sphere (its index box, once), then the block
// marks the spheres one after the other.
__global__ void mark_sas_points(SasPoints in, MarkedGrids<std::uint8_t> grids) {
  __shared__ Vec3 centre[kSasPointsPerBlock];
  __shared__ IndexBox box[kSasPointsPerBlock];
  __shared__ int count;
  const int a = int(blockIdx.x);
  const Lattice& l = grids.lattice[blockIdx.y];
  const int tid = int(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
  const int s = int(blockIdx.z) * kSasPointsPerBlock + tid;
  if (tid == 0) count = 0;
  __syncthreads();
  if (s < in.points && (in.open[std::size_t(a) * in.words + s / 32] >> (s % 32) & 1u)) {
    const float4 atom = in.atoms[a];
    const Vec3 p = pb_point::probe_point({atom.x, atom.y, atom.z}, double(atom.w) + in.srad,
                                         {in.sphere[3 * s], in.sphere[3 * s + 1], in.sphere[3 * s + 2]});
    const int slot = atomicAdd(&count, 1);  // any order: every mark writes the same value
    centre[slot] = pb_point::relative_to(l, p[0], p[1], p[2]);
    box[slot] = pb_point::sphere_box(in.srad, centre[slot], l);
  }
  __syncthreads();
  for (int e = 0; e < count; ++e)
    mark_box(box[e], centre[e], in.srad * in.srad, l, grids.values[blockIdx.y], std::uint8_t(0));
}

// 1/ε of face grid `axis` at p from its mark.
struct MarkInverse {
  const std::uint8_t* pdie[3];
  double inv_pdie, inv_sdie;
  DCSGRID_HD double operator()(int axis, std::size_t p) const { return pdie[axis][p] ? inv_pdie : inv_sdie; }
};

// Thread (point, grid): ε of the face grids from their marks, smoothed (smol) or not (mol).
__global__ void dielectric_from_marks(MarkInverse inv, Lattice l, bool smooth, double pdie, double sdie,
                                      double* eps_x, double* eps_y, double* eps_z) {
  const std::size_t p = std::size_t(blockIdx.x) * kThreads + threadIdx.x;
  if (p >= l.size()) return;
  const int own = int(blockIdx.y);
  double* out = own == 0 ? eps_x : own == 1 ? eps_y : eps_z;
  if (!smooth) {
    out[p] = inv.pdie[own][p] ? pdie : sdie;
    return;
  }
  const std::size_t nx = std::size_t(l.n[0]), ny = std::size_t(l.n[1]);
  const auto i = std::int64_t(p % nx), j = std::int64_t(p / nx % ny), k = std::int64_t(p / (nx * ny));
  out[p] = pb_point::smoothed_dielectric(inv, own, l, i, j, k);
}

unsigned point_blocks(const GridSpec& grid) { return unsigned((grid.point_count() + kThreads - 1) / kThreads); }

// The SAS points of every atom (mol, smol with srad > VSMALL) re-marked as solvent.
void remark_sas_points(const AtomSet& atoms, const PbOptions& options, const DeviceBuffer<float4>& device_atoms,
                       const MarkedGrids<std::uint8_t>& grids, cudaStream_t stream) {
  const std::vector<Vec3> sphere = pb_point::probe_sphere(atoms, options);
  if (sphere.empty()) return;
  const int blocks_y = int((sphere.size() + kThreads - 1) / kThreads);
  if (blocks_y > 65535)
    throw Error("pb (cuda): the probe sphere's " + std::to_string(sphere.size()) + " points are too many");
  std::vector<double> flat;
  for (const Vec3& s : sphere) flat.insert(flat.end(), s.begin(), s.end());
  const DeviceBuffer<double> device_sphere = upload(flat, stream);
  const double max_radius = *std::max_element(atoms.r.begin(), atoms.r.end());
  const DeviceCells cells = upload_cells(AtomCells(atoms, std::max(max_radius + options.srad, 0.5)), stream);
  SasPoints in;
  in.atoms = device_atoms.data();
  in.sphere = device_sphere.data();
  in.points = int(sphere.size());
  in.words = (in.points + 31) / 32;
  in.srad = options.srad;
  in.reach = options.srad + max_radius + 1e-6;
  DeviceBuffer<unsigned> open(atoms.size() * std::size_t(in.words));
  in.open = open.data();
  const unsigned n = unsigned(atoms.size());
  find_sas_points<<<dim3(n, unsigned(blocks_y)), kThreads, 0, stream>>>(in, cells.view);
  DCSGRID_CHECK_LAUNCH();
  const unsigned chunks = unsigned((in.points + kSasPointsPerBlock - 1) / kSasPointsPerBlock);
  mark_sas_points<<<dim3(n, 3, chunks), kMarkBlock, 0, stream>>>(in, grids);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the buffers go
}

// ---- spline surfaces (spl2, spl4) ----

// Thread (atom): its switch of radius r + extra (the CPU's SplineSwitch, made once per atom).
__global__ void make_switches(const float4* atoms, int count, PbSurface kind, double extra, double w,
                              SplineSwitch* out) {
  const int a = int(blockIdx.x) * kThreads + int(threadIdx.x);
  if (a < count) out[a] = SplineSwitch(kind, double(atoms[a].w) + extra, w);
}

struct SplineGather {
  CellsView cells;
  const SplineSwitch* switches = nullptr;  // by input index
  double reach = 0;                        // the largest switch's outer radius (and a hair)
  Lattice lattice[3];
  double* out[3] = {};
  bool dielectric = false;  // ε from the solvent fraction, else the fraction itself
  double pdie = 1, sdie = 1;
};

// Calls fn(atom, d2) for every atom whose switch reaches point (i, j, k) of l: radius above
// VPMGSMALL and d2 < its outer radius² (the CPU's index boxes hold every such point).
template <typename Fn>
__device__ void for_each_reaching(const SplineGather& g, const Lattice& l, std::int64_t i, std::int64_t j,
                                  std::int64_t k, Fn&& fn) {
  const Vec3 p = {l.min[0] + l.h[0] * double(i), l.min[1] + l.h[1] * double(j), l.min[2] + l.h[2] * double(k)};
  scan_cells(g.cells, p, g.reach, [&](int e) {
    const float4 atom = g.cells.atoms[e];
    if (!(double(atom.w) > kSplineSmall)) return false;
    const int n = g.cells.index[e];
    const Vec3 pos = pb_point::relative_to(l, atom.x, atom.y, atom.z);
    const double d2 = pb_point::distance2(pb_point::axis_offset(pos, l, 2, k), pb_point::axis_offset(pos, l, 1, j),
                                          pb_point::axis_offset(pos, l, 0, i));
    const double outer = g.switches[n].outer();
    if (d2 < outer * outer) fn(n, d2);
    return false;
  });
}

// The solvent fraction at (i, j, k) when more than kSplineAtoms atoms reach it: the atoms taken in
// increasing order, one scan each.
__device__ double crowded_fraction(const SplineGather& g, const Lattice& l, std::int64_t i, std::int64_t j,
                                   std::int64_t k) {
  double v = 1.0;
  for (int last = -1;;) {
    int next = INT_MAX;
    double next_d2 = 0;
    for_each_reaching(g, l, i, j, k, [&](int n, double d2) {
      if (n > last && n < next) next = n, next_d2 = d2;
    });
    if (next == INT_MAX) return v;
    v = g.switches[next].apply(v, next_d2);
    last = next;
  }
}

// Thread (point, grid): 1 times the switch of every atom that reaches the point, in atom order.
__global__ void spline_fraction(SplineGather g) {
  const Lattice& l = g.lattice[blockIdx.y];
  const std::size_t p = std::size_t(blockIdx.x) * kThreads + threadIdx.x;
  if (p >= l.size()) return;
  const std::size_t nx = std::size_t(l.n[0]), ny = std::size_t(l.n[1]);
  const auto i = std::int64_t(p % nx), j = std::int64_t(p / nx % ny), k = std::int64_t(p / (nx * ny));
  int atom[kSplineAtoms];
  double dist2[kSplineAtoms];
  int count = 0;
  for_each_reaching(g, l, i, j, k, [&](int n, double d2) {
    if (count >= kSplineAtoms) {
      ++count;  // crowded: taken in order by crowded_fraction
      return;
    }
    atom[count] = n;  // appended, then moved down to its place by atom index
    dist2[count] = d2;
    for (int e = count++; e > 0 && atom[e - 1] > atom[e]; --e) {
      const int a = atom[e];
      const double d = dist2[e];
      atom[e] = atom[e - 1], dist2[e] = dist2[e - 1];
      atom[e - 1] = a, dist2[e - 1] = d;
    }
  });
  double v = 1.0;
  if (count > kSplineAtoms) {
    v = crowded_fraction(g, l, i, j, k);
  } else {
    for (int e = 0; e < count; ++e) v = g.switches[atom[e]].apply(v, dist2[e]);
  }
  g.out[blockIdx.y][p] = g.dielectric ? pb_point::spline_dielectric(v, g.pdie, g.sdie) : v;
}

// The spline surface's fraction (or ε) on the given lattices, the switches of radius r + extra.
void spline_maps(const AtomSet& atoms, const PbOptions& options, double extra, const Lattice* lattices,
                 double* const* out, int count, bool dielectric, cudaStream_t stream) {
  const DeviceBuffer<float4> device_atoms = upload(atoms_with_radii(atoms), stream);
  DeviceBuffer<SplineSwitch> switches(atoms.size());
  const int n = int(atoms.size());
  make_switches<<<unsigned((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      device_atoms.data(), n, options.srfm, extra, options.swin, switches.data());
  DCSGRID_CHECK_LAUNCH();
  const double max_radius = *std::max_element(atoms.r.begin(), atoms.r.end());
  const double outer = max_radius + extra + options.swin;
  const DeviceCells cells = upload_cells(AtomCells(atoms, std::max(outer, 0.5)), stream);
  SplineGather g;
  g.cells = cells.view;
  g.switches = switches.data();
  g.reach = outer + 1e-6;
  for (int a = 0; a < count; ++a) g.lattice[a] = lattices[a], g.out[a] = out[a];
  g.dielectric = dielectric;
  g.pdie = options.pdie;
  g.sdie = options.sdie;
  spline_fraction<<<dim3(unsigned((lattices[0].size() + kThreads - 1) / kThreads), unsigned(count)), kThreads, 0,
                    stream>>>(g);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the buffers go
}

__global__ void fill(double* a, std::size_t count, double value) {
  const std::size_t p = std::size_t(blockIdx.x) * kThreads + threadIdx.x;
  if (p < count) a[p] = value;
}

// ---- boundary ----

// The six outer faces, computed in one launch (blockIdx.z: the face). A point on an edge is written
// by the face of the highest normal that holds it, the CPU's last writer.
struct OuterFaces {
  Lattice l;
  Face face[6];
};

// Whether face f holds point (a, b) and writes it; ijk: the point's indices (past the face for a
// thread beyond it).
__device__ bool writes(const OuterFaces& s, const Face& f, std::int64_t a, std::int64_t b, std::int64_t (&ijk)[3]) {
  ijk[f.normal] = f.side, ijk[f.u] = a, ijk[f.v] = b;
  if (a >= s.l.n[f.u] || b >= s.l.n[f.v]) return false;
  for (int later = f.normal + 1; later < 3; ++later)
    if (ijk[later] == 0 || ijk[later] == s.l.n[later] - 1) return false;
  return true;
}

__device__ Vec3 position(const Lattice& l, const std::int64_t (&ijk)[3]) {
  return {l.min[0] + double(ijk[0]) * l.h[0], l.min[1] + double(ijk[1]) * l.h[1], l.min[2] + double(ijk[2]) * l.h[2]};
}

// An atom of the mdh sum: its position and its charge raised by mdh_charges (the CPU's floats).
struct alignas(16) MdhAtom {
  double x, y, z, q;
};

// Block (16 × 8 points of a face): the mdh sum in float64, Σ q·exp(−κr)/r (κ = 0: Σ q/r), the atoms
// staged in shared memory.
template <bool Screened>
__global__ void mdh_faces(const MdhAtom* atoms, int count, OuterFaces s, PairKernel kernel, double* phi) {
  constexpr int kTile = kFaceBlockX * kFaceBlockY;
  __shared__ MdhAtom tile[kTile];
  const Face& f = s.face[blockIdx.z];
  const std::int64_t a0 = std::int64_t(blockIdx.x) * kFaceBlockX, b0 = std::int64_t(blockIdx.y) * kFaceBlockY;
  if (a0 >= s.l.n[f.u] || b0 >= s.l.n[f.v]) return;  // the whole block: beyond this face
  const int tid = int(threadIdx.y) * kFaceBlockX + int(threadIdx.x);
  std::int64_t ijk[3];
  const bool mine = writes(s, f, a0 + threadIdx.x, b0 + threadIdx.y, ijk);
  const Vec3 p = position(s.l, ijk);
  double sum = 0;
  for (int t0 = 0; t0 < count; t0 += kTile) {
    __syncthreads();  // the previous tile is done with
    if (t0 + tid < count) tile[tid] = atoms[t0 + tid];
    __syncthreads();
    const int in_tile = min(kTile, count - t0);
    for (int m = 0; m < in_tile; ++m) {
      const MdhAtom a = tile[m];
      const double dx = p[0] - a.x, dy = p[1] - a.y, dz = p[2] - a.z;
      const double r2 = fmax(fma(dx, dx, fma(dy, dy, dz * dz)), kernel.min_r2_d);
      const double inv_r = rsqrt(r2);
      sum = fma(a.q, Screened ? exp(-kernel.kappa_d * (r2 * inv_r)) * inv_r : inv_r, sum);
    }
  }
  if (mine) phi[s.l.at(ijk[0], ijk[1], ijk[2])] = kernel.scale_d * sum;
}

// Thread (point of a face): the sdh value.
__global__ void sdh_faces(pb_point::SdhMultipole m, OuterFaces s, double* phi) {
  const Face& f = s.face[blockIdx.z];
  std::int64_t ijk[3];
  if (writes(s, f, std::int64_t(blockIdx.x) * kFaceBlockX + threadIdx.x,
             std::int64_t(blockIdx.y) * kFaceBlockY + threadIdx.y, ijk))
    phi[s.l.at(ijk[0], ijk[1], ijk[2])] = pb_point::sdh_value(m, position(s.l, ijk));
}

// The faces of grid and the blocks that cover the largest of them.
OuterFaces outer_faces(const GridSpec& grid, dim3& blocks) {
  OuterFaces s;
  s.l = lattice_of(grid);
  const auto faces = pb_point::outer_faces(s.l);
  std::int64_t bx = 1, by = 1;
  for (int n = 0; n < 6; ++n) {
    const Face& f = s.face[n] = faces[n];
    bx = std::max(bx, (s.l.n[f.u] + kFaceBlockX - 1) / kFaceBlockX);
    by = std::max(by, (s.l.n[f.v] + kFaceBlockY - 1) / kFaceBlockY);
  }
  if (by > 65535 || bx > INT_MAX)
    throw Error("pb (cuda): a face of " + grid.describe() + " is too large for one launch");
  blocks = dim3(unsigned(bx), unsigned(by), 6);
  return s;
}

}  // namespace

void pb_dielectric_cuda(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double* eps_x,
                        double* eps_y, double* eps_z, cudaStream_t stream) {
  check_input(atoms, grid, "pb_dielectric_cuda");
  const Lattice lattices[3] = {lattice_of(grid, 0), lattice_of(grid, 1), lattice_of(grid, 2)};
  if (spline_surface(options.srfm)) {
    double* const out[3] = {eps_x, eps_y, eps_z};
    return spline_maps(atoms, options, 0.0, lattices, out, 3, true, stream);
  }
  const std::size_t count = grid.point_count();
  DeviceBuffer<std::uint8_t> marks(3 * count);  // 1: pdie
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(marks.data(), 0, marks.bytes(), stream));
  MarkedGrids<std::uint8_t> grids;
  for (int a = 0; a < 3; ++a) grids.values[a] = marks.data() + a * count, grids.lattice[a] = lattices[a];
  const DeviceBuffer<float4> device_atoms = upload(atoms_with_radii(atoms), stream);
  launch_atom_marks(device_atoms, options.srad, grids, 3, std::uint8_t(1), stream);
  if (options.srad > kApbsSmall) remark_sas_points(atoms, options, device_atoms, grids, stream);
  const MarkInverse inv{{grids.values[0], grids.values[1], grids.values[2]}, 1 / options.pdie, 1 / options.sdie};
  dielectric_from_marks<<<dim3(point_blocks(grid), 3), kThreads, 0, stream>>>(
      inv, lattice_of(grid), options.srfm == PbSurface::smol, options.pdie, options.sdie, eps_x, eps_y, eps_z);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the marks go
}

void pb_ion_accessibility_cuda(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options,
                               double* access, cudaStream_t stream) {
  check_input(atoms, grid, "pb_ion_accessibility_cuda");
  const std::size_t count = grid.point_count();
  if (ionic_strength(options) <= 0) {
    DCSGRID_CUDA_CHECK(cudaMemsetAsync(access, 0, count * sizeof(double), stream));  // 0.0 is all zero bits
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  const Lattice l = lattice_of(grid);
  const double ion_radius = max_ion_radius(options);
  if (spline_surface(options.srfm)) return spline_maps(atoms, options, ion_radius, &l, &access, 1, false, stream);
  fill<<<point_blocks(grid), kThreads, 0, stream>>>(access, count, 1.0);
  DCSGRID_CHECK_LAUNCH();
  MarkedGrids<double> grids;
  grids.values[0] = access;
  grids.lattice[0] = l;
  const DeviceBuffer<float4> device_atoms = upload(atoms_with_radii(atoms), stream);
  launch_atom_marks(device_atoms, ion_radius, grids, 1, 0.0, stream);
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the atoms go
}

void pb_boundary_cuda(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                      double* phi, cudaStream_t stream) {
  check_input(atoms, grid, "pb_boundary_cuda");
  if (options.bcfl == PbBoundary::zero) return;
  dim3 blocks;
  const OuterFaces faces = outer_faces(grid, blocks);
  const dim3 block(kFaceBlockX, kFaceBlockY);
  if (options.bcfl == PbBoundary::sdh) {
    sdh_faces<<<blocks, block, 0, stream>>>(pb_point::sdh_multipole(atoms, options, scale), faces, phi);
    DCSGRID_CHECK_LAUNCH();
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  const PairKernel kernel = pb_point::mdh_pair_kernel(options, scale);
  const std::vector<float> charges = pb_point::mdh_charges(atoms, kernel.kappa_d);
  std::vector<MdhAtom> host(atoms.size());
  for (std::size_t n = 0; n < atoms.size(); ++n) host[n] = {atoms.x[n], atoms.y[n], atoms.z[n], charges[n]};
  const DeviceBuffer<MdhAtom> device_atoms = upload(host, stream);
  const auto launch = kernel.form == PairForm::coulomb ? mdh_faces<false> : mdh_faces<true>;
  launch<<<blocks, block, 0, stream>>>(device_atoms.data(), int(atoms.size()), faces, kernel, phi);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the atoms go
}

}  // namespace dcsgrid::engine
