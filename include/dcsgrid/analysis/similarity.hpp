// Similarity between potential maps, as in PIPSA: the Hodgkin index
//   SI(a,b) = 2<a,b> / (<a,a> + <b,b>)
// and the Carbó index <a,b> / sqrt(<a,a><b,b>), for every pair of maps, both from one Gram
// matrix G = M·Mᵀ (maps as the rows of M) computed with the in-house GEMM; optionally over the
// grid points farther than a distance from every atom only; plus an ordering of the maps from
// average-linkage clustering on the distance 1 − SI.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::analysis {

// 1 for each grid point farther than distance (Å) from every atom of every set, else 0.
std::vector<std::uint8_t> distance_mask(const GridSpec& grid, const std::vector<AtomSet>& structures,
                                        double distance);

// G = M·Mᵀ in double for maps stored as the rows of M (n_maps × n_points, row-major, host memory).
// device "cpu" runs prims' gemm_cpu; "gpu"/"auto" gemm_cuda when a GPU is usable. The points are
// taken in blocks (each block's product summed into G in double), which bounds the memory used
// and keeps float32 round-off of very long dot products small.
std::vector<double> gram_matrix(const float* maps, std::size_t n_maps, std::size_t n_points,
                                const std::string& device = "auto");
#ifdef DCSGRID_HAVE_CUDA
// The same for M already in device memory (row-major, leading dimension n_points).
std::vector<double> gram_matrix_cuda(const float* device_maps, std::size_t n_maps,
                                     std::size_t n_points);
#endif

// Hodgkin and Carbó indices from a Gram matrix (n × n, row-major). A pair involving a map that
// is zero everywhere gets NaN.
std::vector<double> hodgkin_from_gram(const std::vector<double>& gram, std::size_t n);
std::vector<double> carbo_from_gram(const std::vector<double>& gram, std::size_t n);
// Throws Error naming (by labels[i]) the maps that are zero at every point compared, <a,a> = 0:
// every index of theirs is 0/0, so no similarity is reported rather than NaN.
void require_nonzero_maps(const std::vector<double>& gram, const std::vector<std::string>& labels);

// Leaf order of average-linkage (UPGMA) hierarchical clustering of n items with the symmetric
// distance matrix d (n × n, row-major). Each merge puts the cluster holding the smaller original
// index first, so the order is deterministic. NaN distances count as the largest distance.
std::vector<std::size_t> average_linkage_order(const std::vector<double>& distance, std::size_t n);

struct SimilarityOptions {
  // Several single-map HDF5 files on one grid, or one batch file (its complete frames).
  std::vector<std::filesystem::path> maps;
  // Mask: compare only points farther than mask_distance (Å) from every atom of these structures
  // (files read with read_options), of mask_atoms and, with mask_batch_inputs, of the structure
  // of every complete frame of the batch files given (their /frames sources, read again).
  // mask_distance 0: every point.
  double mask_distance = 0;
  std::vector<std::filesystem::path> mask_structures;
  std::vector<AtomSet> mask_atoms;
  bool mask_batch_inputs = false;
  io::ReadOptions read_options;
  std::string device = "auto";
  // Outputs (either may be empty): HDF5 with /gram, /hodgkin, /carbo, /order, /labels; CSV of the
  // Hodgkin matrix with a header row of labels.
  std::filesystem::path output_h5, output_csv;
};

struct SimilarityResult {
  std::vector<std::string> labels;  // "file" or "file#frame"
  std::size_t n = 0;
  std::size_t points_used = 0;  // grid points inside the mask
  std::vector<double> gram, hodgkin, carbo;  // n × n, row-major
  std::vector<std::size_t> order;            // clustered leaf order
  nlohmann::json to_json() const;
};

SimilarityResult compute_similarity(const SimilarityOptions& options);
void write_similarity_h5(const std::filesystem::path& path, const SimilarityResult& result);
void write_similarity_csv(const std::filesystem::path& path, const SimilarityResult& result);

}  // namespace dcsgrid::analysis
