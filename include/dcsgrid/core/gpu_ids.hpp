// The GPUs a command line names (--gpus) and CUDA's numbers for them. CUDA initialises every GPU
// it can see, even for a run that uses one (docs/scaling.md measures 0.9 s with four GPUs visible
// against 0.2 s with one), so before its first CUDA call the command line narrows what CUDA sees
// to the GPUs asked for, through CUDA_VISIBLE_DEVICES, which CUDA reads when it starts. CUDA then
// numbers them 0..n−1; messages and reports keep the user's numbers (user_gpu_id).
#pragma once
#include <vector>

namespace dcsgrid {

// Throws Error for a negative GPU number or one listed twice: every list of GPUs (the command
// line's, Python's, a backend's) passes through this one check.
void require_valid_gpu_ids(const std::vector<int>& ids);

// Narrows CUDA_VISIBLE_DEVICES to `ids` and returns them as CUDA will number them, 0..n−1. An id
// is CUDA's number for a GPU it would otherwise see: with CUDA_VISIBLE_DEVICES already set, a
// position in its list. Empty ids (every GPU) change nothing and come back as they are. Call
// before any CUDA call; a second call with the same ids returns the same. Throws Error for a
// negative or repeated id, an id beyond a CUDA_VISIBLE_DEVICES list already set, and ids that
// differ from an earlier call's.
std::vector<int> narrow_visible_gpus(const std::vector<int>& ids);

// True once narrow_visible_gpus has narrowed what CUDA sees.
bool visible_gpus_narrowed();

// The number the user gave for the GPU that CUDA numbers `device` (device itself unless narrowed,
// or when device lies beyond the narrowed list).
int user_gpu_id(int device);

}  // namespace dcsgrid
