// The direct-summation kernel for the Coulomb pair form, the library's configurations (one file
// per form so the kernels compile in parallel).
#include "dcsgrid/engine/cuda_direct_kernel.cuh"

namespace dcsgrid::engine {

template void launch_direct_form<PairForm::coulomb, LibraryDirectConfigs>(
    std::size_t, const DirectLaunch&, dim3, cudaStream_t);

}  // namespace dcsgrid::engine
