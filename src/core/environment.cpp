// Sizes from environment variables (environment.hpp).
#include "dcsgrid/core/environment.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid {

std::uint64_t size_from_environment(const char* variable, std::uint64_t fallback, bool zero_allowed) {
  const char* value = std::getenv(variable);
  if (!value || !*value) return fallback;
  std::uint64_t number = 0;
  const char* end = value + std::strlen(value);
  const auto [rest, ec] = std::from_chars(value, end, number);
  std::uint64_t scale = 1;
  if (rest + 1 == end) {
    const char unit = char(*rest | 0x20);
    scale = unit == 'k' ? 1ull << 10 : unit == 'm' ? 1ull << 20 : unit == 'g' ? 1ull << 30
          : unit == 't' ? 1ull << 40 : 0;
  } else if (rest != end) {
    scale = 0;
  }
  if (ec != std::errc() || scale == 0 || (number == 0 && !zero_allowed) || number > UINT64_MAX / scale)
    throw Error(std::string(variable) + "='" + printable(value) + "': expected a " +
                (zero_allowed ? "whole number from 0" : "positive whole number") +
                ", optionally with K, M, G or T (e.g. 64G)");
  return number * scale;
}

}  // namespace dcsgrid
