// DeviceMapSums (device_sums.hpp): the sums in device memory, the adds on a stream of their own.
#include "dcsgrid/analysis/device_sums.hpp"

#include "dcsgrid/engine/cuda_device.hpp"

namespace dcsgrid::analysis {

namespace {

// __dsub_rn, __dadd_rn and __dmul_rn: never contracted into a fused multiply-add, so that the
// sums are those of the host's loop, term by term.
__global__ void add_map_kernel(const float* v, const float* shift, double* sum, double* squares, std::size_t n) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t p = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += stride) {
    const double d = __dsub_rn(double(v[p]), double(shift[p]));
    sum[p] = __dadd_rn(sum[p], d);
    squares[p] = __dadd_rn(squares[p], __dmul_rn(d, d));
  }
}

}  // namespace

using cuda::OnDevice;

struct DeviceMapSums::Impl {
  // With `device` current.
  Impl(int device, std::size_t points) : device(device), shift(points), sum(points), squares(points) {
    DCSGRID_CUDA_CHECK(cudaMemsetAsync(sum.data(), 0, sum.bytes(), stream.get()));
    DCSGRID_CUDA_CHECK(cudaMemsetAsync(squares.data(), 0, squares.bytes(), stream.get()));
    stream.synchronize();
  }
  int device;
  cuda::Stream stream;
  // Waited on once per group of frames by the pipeline's writer: blocking, not spinning on a core
  // the frame workers and the reader need.
  cuda::Event added{cudaEventDisableTiming | cudaEventBlockingSync};
  cuda::DeviceBuffer<float> staging;  // a map from another GPU, copied here (made on first use)
  cuda::DeviceBuffer<float> shift;
  cuda::DeviceBuffer<double> sum, squares;
  std::size_t count = 0;
};

DeviceMapSums::DeviceMapSums(int device, std::size_t points) {
  OnDevice on(device);
  impl_ = std::make_unique<Impl>(device, points);
}
// The buffers are freed with their device current, and the caller's device made current again.
DeviceMapSums::~DeviceMapSums() {
  if (!impl_) return;  // moved from
  int previous = 0;
  const bool switched = cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(impl_->device) == cudaSuccess;
  impl_.reset();
  if (switched) cudaSetDevice(previous);
  else cudaGetLastError();
}
DeviceMapSums::DeviceMapSums(DeviceMapSums&&) noexcept = default;
DeviceMapSums& DeviceMapSums::operator=(DeviceMapSums&&) noexcept = default;

std::size_t DeviceMapSums::count() const { return impl_->count; }

void DeviceMapSums::load(std::span<const float> shift, std::span<const double> sum, std::span<const double> squares,
                         std::size_t count) {
  Impl& m = *impl_;
  if (shift.size() != m.shift.size() || sum.size() != m.sum.size() || squares.size() != m.squares.size())
    throw Error("DeviceMapSums::load: the sums hold another number of points");
  OnDevice on(m.device);
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(m.shift.data(), shift.data(), m.shift.bytes(), cudaMemcpyHostToDevice, m.stream.get()));
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(m.sum.data(), sum.data(), m.sum.bytes(), cudaMemcpyHostToDevice, m.stream.get()));
  DCSGRID_CUDA_CHECK(
      cudaMemcpyAsync(m.squares.data(), squares.data(), m.squares.bytes(), cudaMemcpyHostToDevice, m.stream.get()));
  m.stream.synchronize();
  m.count = count;
}

void DeviceMapSums::add(const engine::DeviceMap& map) {
  Impl& m = *impl_;
  if (map.points() < m.shift.size()) throw Error("DeviceMapSums::add: the map holds fewer points than the sums");
  OnDevice on(m.device);
  const std::size_t n = m.shift.size();
  const float* v = map.data();
  if (map.device() != m.device) {  // peer to peer where the GPUs allow it, else through the host
    m.staging.resize(n);
    DCSGRID_CUDA_CHECK(cudaMemcpyPeerAsync(m.staging.data(), m.device, map.data(), map.device(), m.staging.bytes(),
                                           m.stream.get()));
    v = m.staging.data();
  }
  if (m.count == 0)
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(m.shift.data(), v, m.shift.bytes(), cudaMemcpyDeviceToDevice, m.stream.get()));
  constexpr int kThreads = 256;
  add_map_kernel<<<cuda::grid_stride_blocks(std::int64_t(n), kThreads), kThreads, 0, m.stream.get()>>>(v, m.shift.data(), m.sum.data(), m.squares.data(), n);
  DCSGRID_CHECK_LAUNCH();
  ++m.count;
}

void DeviceMapSums::synchronize() {
  OnDevice on(impl_->device);
  impl_->added.record(impl_->stream.get());
  impl_->added.synchronize();
}

void DeviceMapSums::download(std::span<float> shift, std::span<double> sum, std::span<double> squares) const {
  const Impl& m = *impl_;
  if (shift.size() != m.shift.size() || sum.size() != m.sum.size() || squares.size() != m.squares.size())
    throw Error("DeviceMapSums::download: the host's arrays hold another number of points");
  OnDevice on(m.device);
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(shift.data(), m.shift.data(), m.shift.bytes(), cudaMemcpyDeviceToHost, m.stream.get()));
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(sum.data(), m.sum.data(), m.sum.bytes(), cudaMemcpyDeviceToHost, m.stream.get()));
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(squares.data(), m.squares.data(), m.squares.bytes(), cudaMemcpyDeviceToHost, m.stream.get()));
  m.stream.synchronize();
}

}  // namespace dcsgrid::analysis
