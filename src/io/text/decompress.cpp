#include "io/text/decompress.hpp"

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::io::detail {
namespace {

// One call of a decoder: how much it consumed and produced, and whether a stream ended.
struct Step {
  std::size_t in_used = 0, out_used = 0;
  bool stream_end = false;
  const char* error = nullptr;  // corrupt data
};

// The three libraries behind one interface: reset() before each stream, run() as often as needed
// (input_ends: `in` holds the last of the input).
class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void reset() = 0;
  virtual Step run(const char* in, std::size_t in_size, char* out, std::size_t out_size,
                   bool input_ends) = 0;
};

// What one library call says: whether a stream ended, and why the data are corrupt (null: they
// are not).
struct Outcome {
  bool stream_end;
  const char* error;
};

// One call of a library's decoder over the buffers (zlib, bzip2 and liblzma name their streams'
// fields alike): call() makes it, throwing when memory runs out.
template <class Stream, class Call>
Step run_stream(Stream& stream, const char* in, std::size_t in_size, char* out, std::size_t out_size,
                const Call& call) {
  stream.next_in = reinterpret_cast<decltype(stream.next_in)>(const_cast<char*>(in));
  stream.avail_in = decltype(stream.avail_in)(in_size);
  stream.next_out = reinterpret_cast<decltype(stream.next_out)>(out);
  stream.avail_out = decltype(stream.avail_out)(out_size);
  const Outcome outcome = call();
  return {in_size - stream.avail_in, out_size - stream.avail_out, outcome.stream_end, outcome.error};
}

class GzipDecoder final : public Decoder {
 public:
  GzipDecoder() {
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
  }
  ~GzipDecoder() override { inflateEnd(&z_); }
  void reset() override { inflateReset(&z_); }
  Step run(const char* in, std::size_t in_size, char* out, std::size_t out_size, bool) override {
    return run_stream(z_, in, in_size, out, out_size, [&] {
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_MEM_ERROR) throw std::bad_alloc();
      const bool bad = rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR;
      return Outcome{rc == Z_STREAM_END, bad ? (z_.msg ? z_.msg : "invalid data") : nullptr};
    });
  }

 private:
  z_stream z_{};
};

class Bzip2Decoder final : public Decoder {
 public:
  Bzip2Decoder() { init(); }
  ~Bzip2Decoder() override { BZ2_bzDecompressEnd(&b_); }
  void reset() override {
    BZ2_bzDecompressEnd(&b_);
    init();
  }
  Step run(const char* in, std::size_t in_size, char* out, std::size_t out_size, bool) override {
    return run_stream(b_, in, in_size, out, out_size, [&] {
      const int rc = BZ2_bzDecompress(&b_);
      if (rc == BZ_MEM_ERROR) throw std::bad_alloc();
      const bool bad = rc == BZ_DATA_ERROR || rc == BZ_DATA_ERROR_MAGIC || rc == BZ_PARAM_ERROR;
      return Outcome{rc == BZ_STREAM_END, bad ? "invalid data" : nullptr};
    });
  }

 private:
  void init() {
    b_ = bz_stream{};
    if (BZ2_bzDecompressInit(&b_, 0, 0) != BZ_OK) throw std::bad_alloc();
  }
  bz_stream b_{};
};

// liblzma reads concatenated .xz streams (and their padding) itself, and reports the end once told
// the input ends (LZMA_FINISH), so one reset serves the whole file.
class XzDecoder final : public Decoder {
 public:
  XzDecoder() { reset(); }
  ~XzDecoder() override { lzma_end(&x_); }
  void reset() override {
    lzma_end(&x_);
    x_ = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&x_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) throw std::bad_alloc();
  }
  Step run(const char* in, std::size_t in_size, char* out, std::size_t out_size,
           bool input_ends) override {
    return run_stream(x_, in, in_size, out, out_size, [&] {
      const lzma_ret rc = lzma_code(&x_, input_ends ? LZMA_FINISH : LZMA_RUN);
      if (rc == LZMA_MEM_ERROR) throw std::bad_alloc();
      const bool bad = rc == LZMA_DATA_ERROR || rc == LZMA_FORMAT_ERROR || rc == LZMA_OPTIONS_ERROR;
      return Outcome{rc == LZMA_STREAM_END, bad ? "invalid data" : nullptr};
    });
  }

 private:
  lzma_stream x_ = LZMA_STREAM_INIT;
};

std::unique_ptr<Decoder> make_decoder(Compression c) {
  if (c == Compression::gzip) return std::make_unique<GzipDecoder>();
  if (c == Compression::bzip2) return std::make_unique<Bzip2Decoder>();
  return std::make_unique<XzDecoder>();
}

}  // namespace

Compression detect_compression(std::string_view bytes) {
  if (bytes.starts_with("\x1f\x8b")) return Compression::gzip;
  if (bytes.size() >= 4 && bytes.starts_with("BZh") && bytes[3] >= '1' && bytes[3] <= '9')
    return Compression::bzip2;
  if (bytes.starts_with(std::string_view("\xfd"
                                         "7zXZ\0",
                                         6)))
    return Compression::xz;
  return Compression::none;
}

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::gzip:
      return "gzip";
    case Compression::bzip2:
      return "bzip2";
    case Compression::xz:
      return "xz";
    case Compression::none:
      break;
  }
  return "uncompressed";
}

Compression compression_from_name(std::string_view file_name) {
  const auto ends_with = [&](std::string_view suffix) {
    if (file_name.size() < suffix.size()) return false;
    for (std::size_t i = 0; i < suffix.size(); ++i)
      if ((file_name[file_name.size() - suffix.size() + i] | 0x20) != suffix[i]) return false;
    return true;
  };
  if (ends_with(".gz")) return Compression::gzip;
  if (ends_with(".bz2")) return Compression::bzip2;
  if (ends_with(".xz")) return Compression::xz;
  return Compression::none;
}

namespace {

// The compressed bytes not yet decoded, refilled from the source as the decoder takes them.
class InputWindow {
 public:
  // Small at first, so a small input costs little (a fuzzer's millions of runs), grown as
  // refills fill it.
  InputWindow(std::string_view head, ByteSource& source)
      : source_(source), bytes_(std::max(head.size(), kFirstPiece)) {
    if (head.size() > kPiece) throw std::logic_error("decompress: head larger than a piece");
    std::copy(head.begin(), head.end(), bytes_.begin());
    end_ = head.size();
  }
  std::string_view pending() const { return {bytes_.data() + begin_, end_ - begin_}; }
  bool source_ended() const { return ended_; }
  std::uint64_t consumed() const { return consumed_; }
  void consume(std::size_t n) {
    begin_ += n;
    consumed_ += n;
  }
  // Moves what is pending to the front and reads more after it; false when the source has ended.
  bool refill() {
    if (ended_) return false;
    std::copy(bytes_.begin() + std::ptrdiff_t(begin_), bytes_.begin() + std::ptrdiff_t(end_), bytes_.begin());
    end_ -= begin_;
    begin_ = 0;
    if (end_ == 0 && filled_ && bytes_.size() < kPiece) bytes_.resize(std::min(2 * bytes_.size(), kPiece));
    const std::size_t got = source_.read(bytes_.data() + end_, bytes_.size() - end_);
    end_ += got;
    filled_ = end_ == bytes_.size();
    ended_ = got == 0;
    return !ended_;
  }

 private:
  static constexpr std::size_t kFirstPiece = std::size_t(64) << 10, kPiece = std::size_t(1) << 20;
  ByteSource& source_;
  std::vector<char> bytes_;
  std::size_t begin_ = 0, end_ = 0;
  std::uint64_t consumed_ = 0;
  bool ended_ = false;
  bool filled_ = false;  // the last refill filled the window: the input is larger than it
};

}  // namespace

void decompress(Compression c, const std::string& name, std::string_view head, ByteSource& source,
                ByteSink& sink) {
  const std::string kind = compression_name(c);
  // Output pieces from 64 KiB, doubled to 4 MiB as the text grows: a small text costs little.
  constexpr std::size_t kOutputPiece = std::size_t(4) << 20;
  std::size_t out_piece = std::size_t(64) << 10;
  constexpr std::size_t kMagicBytes = 6;  // enough to tell whether another stream begins
  auto decoder = make_decoder(c);
  InputWindow in(head, source);
  for (;;) {
    if (in.pending().empty()) in.refill();
    const std::string_view pending = in.pending();
    const Step s = decoder->run(pending.data(), pending.size(), sink.room(out_piece), out_piece,
                                in.source_ended());
    out_piece = std::min(2 * out_piece, kOutputPiece);
    in.consume(s.in_used);
    sink.wrote(s.out_used, in.consumed());
    if (s.error) throw InputError(name, 0, "corrupt " + kind + " data: " + s.error);
    if (s.stream_end) {
      while (in.pending().size() < kMagicBytes && in.refill()) {
      }
      if (in.pending().empty()) return;
      if (detect_compression(in.pending()) != c)
        throw InputError(name, 0,
                         "data after the end of the " + kind + " stream (at byte offset " +
                             std::to_string(in.consumed()) + ")");
      decoder->reset();  // another stream follows, as `cat a.gz b.gz` makes
      continue;
    }
    // With room to write and nothing consumed or produced, the decoder needs more input; at the
    // end of the input, the data ended inside the stream.
    if (s.in_used == 0 && s.out_used == 0 && !in.refill())
      throw InputError(name, 0, "truncated " + kind + " data (the file ends inside the stream)");
  }
}

}  // namespace dcsgrid::io::detail
