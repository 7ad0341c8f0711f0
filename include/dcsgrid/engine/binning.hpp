// Uniform bins of atoms for the GPU cutoff engine: the bin geometry of a z-slab (host), the choice
// of a fixed bin capacity, and binning on the device (fixed capacity with an overflow list, or
// dynamic bins from a prefix sum).
//
// Geometry. The cutoff kernel gives each block a brick of kBrickPoints³ grid points. A brick's
// "pitch box" is the cube of kBrickPoints·h around its points (half a spacing beyond the first
// and last point). Bins are aligned to pitch boxes along each axis: a pitch holds m whole bins
// (edge = pitch/m) or one bin holds k whole pitches (edge = k·pitch), with m or k the integer
// that brings the edge closest to kTargetBinEdge. So every brick sees its bins at the same
// relative positions and one list of neighbour offsets, computed once on the host, serves all
// bricks: the bins whose boxes come within rc of the union of the brick's possible point boxes
// within its anchor bin. 4 Å bins are what the GPU cutoff literature uses for a 0.5 Å lattice
// and 12 Å cutoff (VMD's cutcp): about 6.4 atoms of water per bin and, with 8×8×8 bricks, 311
// neighbour bins in 49 rows along x. The offsets are stored as rows of consecutive bins along x
// (one memory range per row in both binning modes), at most kMaxNeighbourRows of them: the edge
// grows past the target when a large cutoff would need more.
//
// Bins cover the slab's bricks plus a halo that holds every bin a brick can reach, so an atom
// outside the grid but within rc of a point is binned, and an atom that falls outside every bin
// is farther than rc from every point of the slab (it is dropped).
//
// One lattice for every slab. Bricks start on multiples of kBrickPoints planes of the whole grid
// (a slab starting between them computes the planes below it in its first brick and does not
// write them), and a slab's bins are a window of one bin lattice of the whole grid. With the
// points' coordinates taken from their plane of the whole grid, each point then sums the same
// atoms in the same order (bin by bin, each bin in input order) however the grid is cut into
// slabs or MPI ranks, and whichever atoms beyond its reach a rank leaves out: the maps agree
// bit for bit.
//
// Coordinates. Kernels work in a frame whose origin is the grid origin rounded to float
// (frame_origin); atoms are moved into it by one float subtraction and grid points are
// first_point + index·spacing, so distances lose no precision to large absolute coordinates.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"  // DCSGRID_HD
#include "dcsgrid/engine/engine.hpp"

#ifdef DCSGRID_HAVE_CUDA
#include <cuda_runtime.h>

#include "dcsgrid/core/cuda_support.hpp"
#endif

namespace dcsgrid::engine {

inline constexpr int kBrickPoints = 8;            // brick edge, grid points
inline constexpr double kTargetBinEdge = 4.0;     // Å
inline constexpr int kMaxNeighbourRows = 512;     // rows of neighbour bins a kernel accepts
inline constexpr double kCapacityFraction = 0.95; // atoms that fit under choose_bin_capacity
inline constexpr int kCapacityMultiple = 8;       // choose_bin_capacity rounds up to this
// Where the padding atoms of fixed-capacity bins sit (each coordinate, Å, with q = 0): far enough
// that every distance test fails for the whole warp, near enough that squares stay finite.
inline constexpr float kFarAway = 1.0e15f;

// One axis of the bin grid.
struct BinAxis {
  double edge = 0;         // Å
  int bins_per_brick = 1;  // m: a brick's pitch holds m bins (1 when bricks_per_bin > 1)
  int bricks_per_bin = 1;  // k: a bin holds k bricks' pitches (1 when bins_per_brick > 1)
  int bricks = 0;          // bricks along the axis
  int first_brick = 0;     // brick 0's index among the whole grid's bricks (z only)
  int halo = 0;            // bins below brick 0's anchor bin
  int bins = 0;            // bins along the axis
  double lattice_lower = 0;  // Å in the frame: the lower face of the whole grid's bin lattice's bin 0
  // The bin holding the lower corner of the brick's pitch box.
  DCSGRID_HD int anchor(int brick) const {
    return halo + lattice_bin(first_brick + brick) - first_bin();
  }
  // Bin 0's index on the whole grid's bin lattice (0 but along z).
  DCSGRID_HD int first_bin() const { return lattice_bin(first_brick); }
  // Å in the frame: the lower face of bin 0.
  double lower() const { return lattice_lower + first_bin() * edge; }
  // The lattice bin holding the lower corner of a brick of the whole grid, less the halo.
  DCSGRID_HD int lattice_bin(int brick) const {
    return bricks_per_bin > 1 ? brick / bricks_per_bin : brick * bins_per_brick;
  }
};

// Bins (anchor + (dx .. dx+len−1, dy, dz)), consecutive in memory along x.
struct NeighbourRow {
  std::int8_t dx = 0, dy = 0, dz = 0;
  std::uint8_t len = 0;
};

// The bins of one z-slab of a grid.
struct BinGeometry {
  std::array<BinAxis, 3> axis;
  std::array<float, 3> frame_origin{};  // Å: float(grid.origin)
  std::array<float, 3> first_point{};   // the whole grid's point (0, 0, 0) in the frame
  std::array<float, 3> spacing{};       // Å
  std::array<std::int64_t, 3> points{}; // nx, ny, planes of the slab
  int skipped_planes = 0;               // planes of brick 0 below the slab (not written)
  double radius = 0;                    // cutoff, Å
  std::vector<NeighbourRow> rows;

  std::size_t bin_count() const {
    return std::size_t(axis[0].bins) * axis[1].bins * axis[2].bins;
  }
  std::size_t brick_count() const {
    return std::size_t(axis[0].bricks) * axis[1].bricks * axis[2].bricks;
  }
  std::size_t neighbour_bins() const;
  // "56×56×56 bins of 4 Å (x m1, y m1, z m1), 311 neighbour bins in 49 rows"
  std::string describe() const;
};

// The bins of planes [slab.z_begin, slab.z_end) of grid for a cutoff radius (Å). Throws Error for
// a non-positive radius or a bin grid too large to index with 32 bits.
BinGeometry make_bin_geometry(const GridSpec& grid, Slab slab, double radius,
                              double target_edge = kTargetBinEdge);

// What the kernels need to find the bin of a position in the frame: the lattice and the window
// of it that the slab's bins are.
struct BinLookup {
  float lower[3];  // the lattice's bin 0
  float inv_edge[3];
  int bins[3];
  int first[3];    // the window's first lattice bin
};
BinLookup make_bin_lookup(const BinGeometry& g);

// The bin of a position in the frame (x fastest), or the total bin count when it lies outside
// every bin (dropped). NaN coordinates are dropped too.
DCSGRID_HD std::uint32_t bin_key(const BinLookup& b, float x, float y, float z) {
  const float u[3] = {(x - b.lower[0]) * b.inv_edge[0], (y - b.lower[1]) * b.inv_edge[1],
                      (z - b.lower[2]) * b.inv_edge[2]};
  const std::uint32_t outside = std::uint32_t(b.bins[0]) * b.bins[1] * b.bins[2];
  int i[3];
  for (int a = 0; a < 3; ++a) {
    if (!(u[a] >= float(b.first[a]) && u[a] < float(b.first[a] + b.bins[a]))) return outside;
    i[a] = int(u[a]) - b.first[a];
    if (i[a] < 0) return outside;                 // u rounded up to first
    if (i[a] >= b.bins[a]) i[a] = b.bins[a] - 1;  // u rounded up to the end
  }
  return (std::uint32_t(i[2]) * b.bins[1] + std::uint32_t(i[1])) * b.bins[0] + std::uint32_t(i[0]);
}

// How full the bins are: bins_with[v] bins hold exactly v atoms (v < bins_with.size()); the
// crowded_bins hold more. Enough to evaluate Σ min(count, c) for every c < bins_with.size().
struct BinOccupancy {
  std::vector<std::uint64_t> bins_with;
  std::uint64_t crowded_bins = 0;
  std::uint64_t atoms = 0;  // atoms in all bins
};
BinOccupancy bin_occupancy(const std::vector<std::uint32_t>& counts_per_bin);

// The smallest capacity c with Σ_bins min(count, c) >= fraction·atoms, rounded up to a multiple
// of `multiple` (at least `multiple`). Returns 0 when c would reach bins_with.size() (the caller
// then needs the exact counts: bin_occupancy of them always answers).
int choose_bin_capacity(const BinOccupancy& occupancy, double fraction = kCapacityFraction,
                        int multiple = kCapacityMultiple);

#ifdef DCSGRID_HAVE_CUDA

// Atoms on the device as uploaded (structure of arrays, float32, absolute coordinates).
struct DeviceAtomArrays {
  cuda::DeviceBuffer<float> x, y, z, q;
  std::size_t size() const { return q.size(); }
};
// Asynchronous on stream: atoms must stay alive and unchanged until the stream reaches the copy.
void upload_atom_arrays(const AtomSet& atoms, DeviceAtomArrays& device, cudaStream_t stream);

// A stable sort's order of keys on the device, its buffers reused (grown, never shrunk).
struct DeviceKeyOrder {
  cuda::DeviceBuffer<std::uint32_t> sorted_keys;  // the keys in (key, index) order
  cuda::DeviceBuffer<std::uint32_t> order;        // 2·n: the index of each sorted key, then 0..n−1
  cuda::DeviceBuffer<unsigned char> workspace;
};
// Asynchronous on stream: order[j] (j < n) = the index of the j-th key in (key, index) order, and
// sorted_keys[j] its key: a stable radix sort (CUB) of the keys' low key_bits bits. n < 2^31.
void stable_key_order(const std::uint32_t* keys, std::size_t n, int key_bits, DeviceKeyOrder& out,
                      cudaStream_t stream);

// Device buffers of one binning, reused (grown, never shrunk) from slab to slab.
struct DeviceBins {
  cuda::DeviceBuffer<std::uint32_t> keys;       // per atom: its bin, or bin_count (dropped)
  cuda::DeviceBuffer<std::uint32_t> counts;     // bin_count + 1 (the last: dropped atoms)
  cuda::DeviceBuffer<std::uint32_t> start;      // dynamic: bin_count + 1 offsets into slots
  cuda::DeviceBuffer<std::uint32_t> fill;       // per-bin slot counters
  cuda::DeviceBuffer<float4> slots;             // atoms in the frame (x, y, z, q), by bin
  cuda::DeviceBuffer<std::uint32_t> overflow;   // fixed: indices of atoms beyond capacity
  cuda::DeviceBuffer<std::uint32_t> overflow_count;  // 1
  cuda::DeviceBuffer<std::uint32_t> occupancy;  // bins_with[] for the capacity choice
  cuda::DeviceBuffer<unsigned char> scan_workspace;
  DeviceKeyOrder sorted;                        // dynamic: the atoms in (bin, input) order
  int capacity = 0;       // fixed: atoms per bin; 0 for dynamic bins
  std::size_t bins = 0;   // bin_count of the last compute_bin_keys
  std::size_t atoms = 0;  // atoms of the last compute_bin_keys
};

// The steps below are asynchronous on stream unless said otherwise.
// keys[i] = bin of atom i in the frame of g (bin_count when dropped): all a fixed scatter needs.
void compute_bin_keys(const DeviceAtomArrays& atoms, const BinGeometry& g, DeviceBins& bins,
                      cudaStream_t stream);
// compute_bin_keys, then counts[b] = atoms in bin b (in-house histogram; counts[bin_count] =
// dropped atoms).
void count_bins(const DeviceAtomArrays& atoms, const BinGeometry& g, DeviceBins& bins,
                cudaStream_t stream);
// From counts (after count_bins): the occupancy histogram (in-house histogram of the counts),
// then the capacity rule of choose_bin_capacity. Synchronises stream (the answer goes to the
// host).
int choose_bin_capacity_cuda(DeviceBins& bins, cudaStream_t stream);
// Fixed capacity (after compute_bin_keys): slots = bin_count·capacity, padded with q = 0 atoms at
// kFarAway; an atom takes a slot only when its bin's counter shows room, else it is appended to
// the overflow list through one atomic counter.
void scatter_fixed(const DeviceAtomArrays& atoms, const BinGeometry& g, int capacity, DeviceBins& bins,
                   cudaStream_t stream);
// Dynamic bins (after count_bins): start = exclusive scan of counts (in-house scan), atoms
// placed at start[bin] + their rank among the bin's atoms in input order (a stable radix sort of
// the keys), so a bin's order does not depend on the device's scheduling; no padding, no overflow.
void scatter_dynamic(const DeviceAtomArrays& atoms, const BinGeometry& g, DeviceBins& bins,
                     cudaStream_t stream);

#endif  // DCSGRID_HAVE_CUDA

}  // namespace dcsgrid::engine
