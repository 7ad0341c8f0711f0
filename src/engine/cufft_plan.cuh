// cuFFT for the CUDA engines (private to src/engine): checked calls and a plan handle that its
// owner destroys.
#pragma once
#include <cufft.h>

#include <string>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::engine {

inline const char* cufft_result_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cuFFT error";
  }
}

// Wraps a cuFFT call as DCSGRID_CUDA_CHECK wraps a runtime call.
#define DCSGRID_CUFFT_CHECK(call)                                                                 \
  do {                                                                                            \
    const cufftResult dcsgrid_fft_ = (call);                                                      \
    if (dcsgrid_fft_ != CUFFT_SUCCESS)                                                            \
      throw ::dcsgrid::Error(std::string("cuFFT error in ") + #call + " (" + __FILE__ + ":" +     \
                             std::to_string(__LINE__) + "): " +                                   \
                             ::dcsgrid::engine::cufft_result_name(dcsgrid_fft_) + " (" +          \
                             std::to_string(int(dcsgrid_fft_)) + ")");                            \
  } while (0)

// A cuFFT plan handle, destroyed with its owner.
class FftPlan {
 public:
  FftPlan() { DCSGRID_CUFFT_CHECK(cufftCreate(&handle_)); }
  ~FftPlan() { cufftDestroy(handle_); }
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;
  cufftHandle get() const { return handle_; }

 private:
  cufftHandle handle_ = 0;
};

}  // namespace dcsgrid::engine
