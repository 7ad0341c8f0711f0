// Prefix sums (scan) of int32, uint32 and float arrays: a multi-threaded CPU version and a
// single-pass CUDA version (decoupled look-back), with one meaning for both.
//   exclusive: out[i] = in[0] + ... + in[i-1]   (out[0] = 0)
//   inclusive: out[i] = in[0] + ... + in[i]
// Integer sums wrap modulo 2^32. Float sums are associated differently from a sequential loop
// (chunks, lanes, tiles), so they match it within rounding, not bit for bit. in == out (in
// place) is allowed; other overlaps are not.
#pragma once
#include <cstddef>
#include <cstdint>

#ifdef DCSGRID_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace dcsgrid::prims {

enum class ScanKind { exclusive, inclusive };

// CPU: OpenMP threads over chunks (reduce, then scan with offsets), SIMD within a chunk.
// T is std::int32_t, std::uint32_t or float.
template <typename T>
void scan_cpu(const T* in, T* out, std::size_t n, ScanKind kind);

#ifdef DCSGRID_HAVE_CUDA
// Bytes of device workspace scan_cuda needs for n items (tile status words and a tile counter).
std::size_t scan_cuda_workspace_bytes(std::size_t n);

// Device pointers; asynchronous on stream (zeroes the workspace with cudaMemsetAsync, then one
// kernel). d_workspace: at least scan_cuda_workspace_bytes(n) bytes of device memory owned by
// the caller, not used by another scan running at the same time. n up to 2^31 and more (64-bit
// indexing). Throws dcsgrid::Error on a CUDA failure.
template <typename T>
void scan_cuda(const T* d_in, T* d_out, std::size_t n, ScanKind kind, void* d_workspace,
               cudaStream_t stream);
#endif

}  // namespace dcsgrid::prims
