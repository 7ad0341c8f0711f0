// Compressed inputs: gzip, bzip2 and xz, recognized by their magic bytes (not by the file name).
#pragma once
#include <string>
#include <string_view>

namespace dcsgrid::io::detail {

enum class Compression { none, gzip, bzip2, xz };

Compression detect_compression(std::string_view bytes);
const char* compression_name(Compression c);

// The whole decompressed content of `bytes` (every concatenated stream, as gzip, bzip2 and xz do).
// Throws InputError naming `name` for corrupt or truncated data, and for bytes after the last
// stream that do not begin another one (the byte offset in the message).
std::string decompress(std::string_view bytes, Compression c, const std::string& name);

}  // namespace dcsgrid::io::detail
