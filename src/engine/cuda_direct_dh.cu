// The direct-summation kernel for the Debye–Hückel pair form, the library's configurations (one
// file per form so the kernels compile in parallel).
#include "dcsgrid/engine/cuda_direct_kernel.cuh"

namespace dcsgrid::engine {

template void launch_direct_form<PairForm::debye_huckel, LibraryDirectConfigs>(
    std::size_t, const DirectLaunch&, dim3, cudaStream_t);

}  // namespace dcsgrid::engine
