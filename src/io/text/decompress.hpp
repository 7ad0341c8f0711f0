// Compressed inputs: gzip, bzip2 and xz, recognized by their magic bytes (not by the file name).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dcsgrid::io::detail {

enum class Compression { none, gzip, bzip2, xz };

Compression detect_compression(std::string_view bytes);
const char* compression_name(Compression c);

// The compression a file name's last suffix announces (.gz, .bz2, .xz in any case), else none.
Compression compression_from_name(std::string_view file_name);

// Where compressed bytes come from: up to n bytes into `to`, 0 at the end.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::size_t read(char* to, std::size_t n) = 0;
};

// Where decompressed bytes go: room(n) gives space for n more bytes; wrote(n, compressed) says
// how many were put there and how many compressed bytes had been consumed by then (so that the
// sink can judge and bound the output as it grows, and stop the decoding by throwing).
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual char* room(std::size_t n) = 0;
  virtual void wrote(std::size_t n, std::uint64_t compressed) = 0;
};

// Decompresses `head` (the bytes already read) followed by the rest of `source` into `sink`, in
// pieces, every concatenated stream (as gzip, bzip2 and xz do). Throws InputError naming `name`
// for corrupt or truncated data, and for bytes after the last stream that do not begin another
// one (the byte offset in the message).
void decompress(Compression c, const std::string& name, std::string_view head, ByteSource& source,
                ByteSink& sink);

}  // namespace dcsgrid::io::detail
