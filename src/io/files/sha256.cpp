// SHA-256 (FIPS 180-4): the portable compression function and, on x86 CPUs with the SHA
// extensions, the same function through SHA256RNDS2/MSG1/MSG2 (chosen at run time).
#include "dcsgrid/io/files/sha256.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define DCSGRID_SHA_EXTENSIONS 1
#endif

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::io {

namespace {

alignas(16) constexpr std::array<std::uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

using State = std::array<std::uint32_t, 8>;

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void compress_portable(State& state, const unsigned char* data, std::size_t blocks) {
  for (; blocks > 0; --blocks, data += 64) {
    std::array<std::uint32_t, 64> w;
    for (int t = 0; t < 16; ++t)
      w[t] = std::uint32_t(data[4 * t]) << 24 | std::uint32_t(data[4 * t + 1]) << 16 |
             std::uint32_t(data[4 * t + 2]) << 8 | std::uint32_t(data[4 * t + 3]);
    for (int t = 16; t < 64; ++t) {
      const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, h] = state;
    for (int t = 0; t < 64; ++t) {
      const std::uint32_t sum1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const std::uint32_t choose = (e & f) ^ (~e & g);
      const std::uint32_t t1 = h + sum1 + choose + kRoundConstants[t] + w[t];
      const std::uint32_t sum0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const std::uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + sum0 + majority;
    }
    const State add = {a, b, c, d, e, f, g, h};
    for (int i = 0; i < 8; ++i) state[i] += add[i];
  }
}

#ifdef DCSGRID_SHA_EXTENSIONS
// SHA256RNDS2 does two rounds on the state split as (A, B, E, F) and (C, D, G, H); the message
// schedule runs four words at a time through SHA256MSG1 (adds σ0) and SHA256MSG2 (adds σ1).
__attribute__((target("sha,sse4.1,ssse3"))) void compress_extensions(State& state,
                                                                      const unsigned char* data,
                                                                      std::size_t blocks) {
  // Big-endian words: reverse the bytes of each 32-bit lane.
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  const __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data()));
  const __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data() + 4));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i w[4];  // the last four groups of four message words, w[i % 4] for group i
    for (int i = 0; i < 16; ++i) {
      __m128i words;
      if (i < 4) {
        words = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)), byte_swap);
      } else {
        // W[t] = σ1(W[t−2]) + W[t−7] + σ0(W[t−15]) + W[t−16] for the four t of group i.
        words = _mm_sha256msg1_epu32(w[i % 4], w[(i + 1) % 4]);
        words = _mm_add_epi32(words, _mm_alignr_epi8(w[(i + 3) % 4], w[(i + 2) % 4], 4));
        words = _mm_sha256msg2_epu32(words, w[(i + 3) % 4]);
      }
      w[i % 4] = words;
      __m128i sum = _mm_add_epi32(
          words, _mm_load_si128(reinterpret_cast<const __m128i*>(kRoundConstants.data() + 4 * i)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, sum);  // new (A, B, E, F); the old ones are (C, D, G, H)
      sum = _mm_shuffle_epi32(sum, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, sum);  // and back: (A, B, E, F) in abef again
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data()), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data() + 4), _mm_alignr_epi8(dchg, feba, 8));
}

// CPUID (clang 14's __builtin_cpu_supports knows no "sha"): leaf 7 EBX bit 29 is SHA, leaf 1
// ECX bits 19 and 9 are SSE4.1 and SSSE3.
bool cpu_has_sha_extensions() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool sse = (c >> 19 & 1u) && (c >> 9 & 1u);
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return sse && (b >> 29 & 1u);
}
#else
bool cpu_has_sha_extensions() { return false; }
#endif

using Compress = void (*)(State&, const unsigned char*, std::size_t);

Compress compress_for(Sha256Engine engine) {
#ifdef DCSGRID_SHA_EXTENSIONS
  static const bool extensions = cpu_has_sha_extensions();
  if (engine == Sha256Engine::best && extensions) return compress_extensions;
#endif
  (void)engine;
  return compress_portable;
}

class Sha256 {
 public:
  explicit Sha256(Sha256Engine engine) : compress_(compress_for(engine)) {}

  void update(const unsigned char* data, std::size_t size) {
    total_bytes_ += size;
    if (filled_ > 0) {
      const std::size_t take = std::min(size, block_.size() - filled_);
      std::memcpy(block_.data() + filled_, data, take);
      filled_ += take;
      data += take;
      size -= take;
      if (filled_ < block_.size()) return;
      compress_(state_, block_.data(), 1);
      filled_ = 0;
    }
    compress_(state_, data, size / 64);  // whole blocks straight from the caller's bytes
    filled_ = size % 64;
    std::memcpy(block_.data(), data + size - filled_, filled_);
  }

  std::string hex_digest() {
    // Padding: a 1 bit, zeros up to 56 bytes mod 64, then the message length in bits, big-endian.
    const std::uint64_t bits = total_bytes_ * 8;
    std::array<unsigned char, 72> tail{};
    tail[0] = 0x80;
    const std::size_t zeros = (filled_ < 56 ? 56 : 120) - filled_ - 1;
    for (int i = 0; i < 8; ++i) tail[1 + zeros + i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(tail.data(), 1 + zeros + 8);
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    for (std::uint32_t word : state_)
      for (int shift = 28; shift >= 0; shift -= 4) hex += digits[(word >> shift) & 0xf];
    return hex;
  }

 private:
  Compress compress_;
  State state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<unsigned char, 64> block_{};
  std::size_t filled_ = 0;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace

bool sha256_uses_cpu_extensions() { return compress_for(Sha256Engine::best) != compress_portable; }

std::string sha256_hex(std::span<const unsigned char> bytes, Sha256Engine engine) {
  Sha256 hash(engine);
  hash.update(bytes.data(), bytes.size());
  return hash.hex_digest();
}

std::string sha256_file(const std::filesystem::path& path, const std::atomic<bool>* stop) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))  // a pipe is the reader's alone; a device never ends
    throw InputError(path.string(), 0, "not a regular file, so its SHA-256 is not taken");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), 0, "cannot open the file to compute its SHA-256");
  Sha256 hash(Sha256Engine::best);
  std::vector<char> buffer(std::size_t(1) << 20);
  while (in) {
    if (stop && *stop) throw Error(path.string() + ": SHA-256 stopped before the end of the file");
    in.read(buffer.data(), std::streamsize(buffer.size()));
    hash.update(reinterpret_cast<const unsigned char*>(buffer.data()), std::size_t(in.gcount()));
  }
  if (in.bad()) throw InputError(path.string(), 0, "read error while computing its SHA-256");
  return hash.hex_digest();
}

}  // namespace dcsgrid::io
