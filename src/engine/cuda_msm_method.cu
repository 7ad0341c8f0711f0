// The msm method on a GPU: the cutoff kernel with the msm_short form (and its CPU overflow path)
// writes each slab, then the long-range part (MsmLongRangeCuda, built once a run) adds to it on
// the same stream.
#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/engine/cuda_cutoff.hpp"
#include "dcsgrid/engine/msm_cuda.hpp"

namespace dcsgrid::engine {
namespace {

class MsmDeviceMethod final : public DeviceMethod {
 public:
  MsmDeviceMethod(const PotentialRequest& request, cudaStream_t stream)
      : short_range_(make_cutoff_device_method(msm_short_range(request), stream)),
        short_range_seconds_(seconds_since(started_)),
        long_range_(*request.atoms, request.grid, make_pair_kernel(request.physics).scale,
                    request.msm, stream) {}
  SlabLayout layout() const override { return short_range_->layout(); }
  void enqueue(Slab slab, float* out, cudaStream_t stream) override {
    short_range_->enqueue(slab, out, stream);
    long_range_.add_to(slab, out, layout(), stream);
  }
  // The overflow atoms' short-range terms, added on the host once the slab is copied.
  double finish_on_host(Slab slab, float* host) override { return short_range_->finish_on_host(slab, host); }
  bool finishes_on_host() const override { return short_range_->finishes_on_host(); }
  std::vector<StageTime> setup_stages() const override {
    std::vector<StageTime> stages{{"short-range atoms upload", short_range_seconds_}};
    for (const StageTime& s : long_range_.setup_stages()) stages.push_back({"long range: " + s.stage, s.seconds});
    return stages;
  }

 private:
  clock_type::time_point started_ = clock_type::now();  // first: the members below are timed from it
  std::unique_ptr<DeviceMethod> short_range_;
  double short_range_seconds_;
  MsmLongRangeCuda long_range_;
};

}  // namespace

std::unique_ptr<DeviceMethod> make_msm_device_method(const PotentialRequest& request,
                                                     cudaStream_t stream) {
  validate(request);
  return std::make_unique<MsmDeviceMethod>(request, stream);
}

}  // namespace dcsgrid::engine
