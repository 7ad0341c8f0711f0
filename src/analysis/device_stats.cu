// DeviceMapStats (device_stats.hpp): one thread per lane of each block (stats_blocks.hpp) sums its
// values in order on the device; the host combines the lanes, the blocks' last values and the
// blocks exactly as map_stats does, then the squares (given the mean) and the histogram (given the
// range) run on the device in the same way.
#include "dcsgrid/analysis/device_stats.hpp"

#include <algorithm>
#include <span>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/prims/histogram.hpp"
#include "stats_blocks.hpp"

namespace dcsgrid::analysis {

using detail::kStatsBlock;
using detail::kStatsLanes;
using detail::StatsLane;

namespace {

constexpr int kThreads = 128;

// The thread's lane: its first value, and the end of its block's lanes.
struct LaneRange {
  std::size_t first, end;
};
__device__ LaneRange lane_range(std::size_t lane, std::size_t n) {
  const std::size_t begin = lane / kStatsLanes * kStatsBlock;
  const std::size_t block_end = begin + kStatsBlock < n ? begin + kStatsBlock : n;
  return {begin + lane % kStatsLanes, begin + (block_end - begin) / kStatsLanes * kStatsLanes};
}

// block_partial's lanes (stats.cpp): x − x == 0 tells finite values, the first of equal extremes
// is kept, non-finite values add +0 to the sum.
__global__ void lane_partials(const float* v, std::size_t n, std::size_t lanes, StatsLane* out) {
  const std::size_t lane = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (lane >= lanes) return;
  const LaneRange r = lane_range(lane, n);
  StatsLane s;
  for (std::size_t i = r.first; i < r.end; i += kStatsLanes) {
    const float x = v[i];
    const bool finite = x - x == 0.0f;
    s.sum = __dadd_rn(s.sum, double(finite ? x : 0.0f));
    if (finite && x < s.lo) s.lo = x;
    if (finite && x > s.hi) s.hi = x;
    s.count += finite;
    s.nan += x != x;
    s.neg_inf += x == -INFINITY;
  }
  out[lane] = s;
}

// block_squares' lanes: Σ (x − mean)² over finite values, +0 for the others.
__global__ void lane_squares(const float* v, std::size_t n, std::size_t lanes, double mean, double* out) {
  const std::size_t lane = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (lane >= lanes) return;
  const LaneRange r = lane_range(lane, n);
  double sum = 0;
  for (std::size_t i = r.first; i < r.end; i += kStatsLanes) {
    const float x = v[i];
    const double d = __dsub_rn(double(x), mean);
    sum = __dadd_rn(sum, x - x == 0.0f ? __dmul_rn(d, d) : 0.0);
  }
  out[lane] = sum;
}

unsigned blocks_for(std::size_t lanes) { return unsigned((lanes + kThreads - 1) / kThreads); }

}  // namespace

struct DeviceMapStats::Impl {
  explicit Impl(int device) : device(device) {}
  int device;
  // Its kernels are a few blocks each, latency-bound, and run beside the frame workers' kernels:
  // scheduled first, they do not wait for those.
  cuda::Stream stream{cuda::Stream::Priority::highest};
  // Waited on three times a frame by a batch's frame workers: blocking, not spinning on cores the
  // reader and the writer need.
  cuda::Event done{cudaEventDisableTiming | cudaEventBlockingSync};
  void wait() {
    done.record(stream.get());
    done.synchronize();
  }
  cuda::DeviceBuffer<StatsLane> lanes;
  cuda::DeviceBuffer<double> squares;
  cuda::DeviceBuffer<std::uint32_t> counts;
  cuda::PinnedBuffer<StatsLane> host_lanes;
  cuda::PinnedBuffer<double> host_squares;
  cuda::PinnedBuffer<std::uint32_t> host_counts;
  cuda::PinnedBuffer<float> tail{kStatsLanes};
};

DeviceMapStats::DeviceMapStats() = default;
DeviceMapStats::~DeviceMapStats() {
  if (!impl_) return;
  const cuda::OnDevice on(impl_->device);
  impl_.reset();
}

MapStats DeviceMapStats::compute(const engine::DeviceMap& map, std::size_t points, const HistogramOptions& options) {
  validate(options);
  if (points > map.points() || points > kMaxPoints)
    throw Error("DeviceMapStats: " + std::to_string(points) + " points asked of a map of " +
                std::to_string(map.points()) + " (at most 2^32 - 1)");
  const cuda::OnDevice on(map.device());
  if (!impl_ || impl_->device != map.device()) {
    if (impl_) {
      const cuda::OnDevice old(impl_->device);
      impl_.reset();
    }
    impl_ = std::make_unique<Impl>(map.device());
  }
  Impl& m = *impl_;
  const float* v = map.data();
  const cudaStream_t stream = m.stream.get();
  const std::size_t blocks = (points + kStatsBlock - 1) / kStatsBlock, lanes = blocks * kStatsLanes;
  if (m.lanes.size() < lanes) {
    m.lanes.resize(lanes);
    m.squares.resize(lanes);
    m.host_lanes = cuda::PinnedBuffer<StatsLane>(lanes);
    m.host_squares = cuda::PinnedBuffer<double>(lanes);
  }
  // Only the last block has values after its lanes' (kStatsBlock is a multiple of kStatsLanes).
  const std::size_t last_begin = blocks ? (blocks - 1) * kStatsBlock : 0;
  const std::size_t tail_begin = last_begin + detail::lane_values(last_begin, points);
  const std::size_t tail_count = points - tail_begin;
  if (lanes) {
    lane_partials<<<blocks_for(lanes), kThreads, 0, stream>>>(v, points, lanes, m.lanes.data());
    DCSGRID_CHECK_LAUNCH();
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(m.host_lanes.data(), m.lanes.data(), lanes * sizeof(StatsLane),
                                       cudaMemcpyDeviceToHost, stream));
  }
  if (tail_count)
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(m.tail.data(), v + tail_begin, tail_count * sizeof(float),
                                       cudaMemcpyDeviceToHost, stream));
  m.wait();
  const auto block_tail = [&](std::size_t b) { return b + 1 == blocks ? tail_count : 0; };
  std::vector<detail::StatsPartial> partials(blocks);
  for (std::size_t b = 0; b < blocks; ++b)
    partials[b] = detail::combine_lanes(std::span<const StatsLane, kStatsLanes>(m.host_lanes.data() + b * kStatsLanes, kStatsLanes),
                                        detail::lane_values(b * kStatsBlock, std::min(points, (b + 1) * kStatsBlock)),
                                        m.tail.data(), block_tail(b));
  return detail::stats_from_blocks(
      partials, options,
      [&](double mean) {
        lane_squares<<<blocks_for(lanes), kThreads, 0, stream>>>(v, points, lanes, mean, m.squares.data());
        DCSGRID_CHECK_LAUNCH();
        DCSGRID_CUDA_CHECK(cudaMemcpyAsync(m.host_squares.data(), m.squares.data(), lanes * sizeof(double),
                                           cudaMemcpyDeviceToHost, stream));
        m.wait();
        std::vector<double> sums(blocks);
        for (std::size_t b = 0; b < blocks; ++b)
          sums[b] = detail::combine_square_lanes(
              std::span<const double, kStatsLanes>(m.host_squares.data() + b * kStatsLanes, kStatsLanes),
              m.tail.data(), block_tail(b), mean);
        return sums;
      },
      [&](double lo, double hi, std::uint32_t bins) {
        const std::size_t counters = std::size_t(bins) + 3;
        if (m.counts.size() < counters) {
          m.counts.resize(counters);
          m.host_counts = cuda::PinnedBuffer<std::uint32_t>(counters);
        }
        prims::histogram_values_exact_cuda(v, points, lo, hi, bins, m.counts.data(), stream);
        DCSGRID_CUDA_CHECK(cudaMemcpyAsync(m.host_counts.data(), m.counts.data(), counters * sizeof(std::uint32_t),
                                           cudaMemcpyDeviceToHost, stream));
        m.wait();
        prims::ValueHistogram h;
        h.lo = lo;
        h.hi = hi;
        h.counts.assign(m.host_counts.data(), m.host_counts.data() + bins);
        h.underflow = m.host_counts.data()[bins];
        h.overflow = m.host_counts.data()[bins + 1];
        h.nan = m.host_counts.data()[bins + 2];
        return h;
      });
}

}  // namespace dcsgrid::analysis
