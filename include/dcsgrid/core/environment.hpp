// Sizes that users set through environment variables (DCSGRID_MAX_INPUT_BYTES, ...).
#pragma once
#include <cstdint>

namespace dcsgrid {

// $variable as a number of bytes, optionally with K, M, G or T (powers of 1024; e.g. 64G), or
// `fallback` when it is unset or empty. Throws Error naming the variable for anything else, and
// for 0 unless `zero_allowed`.
std::uint64_t size_from_environment(const char* variable, std::uint64_t fallback, bool zero_allowed = false);

}  // namespace dcsgrid
